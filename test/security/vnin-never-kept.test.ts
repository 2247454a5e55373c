import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';

/**
 * A vNIN is use-once and must not be stored: after live vNIN verifications of every outcome (found,
 * each refusal, failed, replayed), no token is readable in the database (pg_dump), in any Redis key
 * of the run (every type, streams included) or in the API and worker logs at debug level.
 */
const run = promisify(execFile);

async function redisDump(prefix: string): Promise<{ keys: string[]; text: string }> {
  const redis = new Redis(inject('redisUrl'));
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', '1000');
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const parts: string[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      let value: unknown;
      if (type === 'string') value = await redis.get(key);
      else if (type === 'hash') value = await redis.hgetall(key);
      else if (type === 'list') value = await redis.lrange(key, 0, -1);
      else if (type === 'set') value = await redis.smembers(key);
      else if (type === 'zset') value = await redis.zrange(key, '0', '-1', 'WITHSCORES');
      else if (type === 'stream') value = await redis.xrange(key, '-', '+');
      else value = `<${type}>`;
      parts.push(`${key} ${type} ${JSON.stringify(value)}`);
    }
    return { keys, text: parts.join('\n') };
  } finally {
    redis.disconnect();
  }
}

describe.each(['sandbox', 'dojah'] as const)('vNIN never kept (%s adapter)', (dialect) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ dialect, captureLogs: true });
  });
  afterAll(async () => stack?.close());

  const issue = async (nin: string, o: { enterprise_code?: string; issued_at?: string } = {}) => {
    const res = await fetch(`${stack.identitySim.url}/sandbox/vnin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ nin, enterprise_code: o.enterprise_code ?? '000000', ...(o.issued_at ? { issued_at: o.issued_at } : {}) }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { vnin: string }).vnin;
  };

  it('When vNINs were found, refused, failed and replayed, then pg_dump, every Redis key and the debug logs hold no token', async () => {
    const org = await stack.createOrg({ units: 5 });
    const verify = (vnin: string, headers: Record<string, string> = {}) =>
      stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { vnin, reason: 'corporate' }, headers });

    const found = await issue('31415926535');
    const replayed = await issue('27182818284');
    const expired = await issue('16180339887', { issued_at: new Date(Date.now() - 73 * 3600 * 1000).toISOString() });
    const foreign = await issue('14142135623', { enterprise_code: '696739' });
    const failing = await issue('50010000002');
    const unknown = 'QZ123456789012XW';
    const outcomes: [string, number, string | undefined][] = [];
    const record = async (vnin: string, res: Awaited<ReturnType<typeof verify>>) => outcomes.push([vnin, res.status, res.body.code]);

    await record(found, await verify(found.toLowerCase()));
    await record(found, await verify(found));
    await record(expired, await verify(expired));
    await record(foreign, await verify(foreign));
    await record(unknown, await verify(unknown));
    await record(failing, await verify(failing));
    const key = { 'Idempotency-Key': 'never-kept-replay' };
    await record(replayed, await verify(replayed, key));
    await record(replayed, await verify(replayed, key));
    expect(outcomes.map(([, status, code]) => [status, code])).toEqual([
      [200, undefined],
      [404, 'vnin_used'],
      [404, 'vnin_expired'],
      [404, 'vnin_wrong_enterprise'],
      [404, 'vnin_not_found'],
      [502, 'upstream_unavailable'],
      [200, undefined],
      [200, undefined],
    ]);
    const tokens = [found, replayed, expired, foreign, failing, unknown];
    const references = (await stack.api('GET', '/v1/verifications?limit=50', { token: org.admin.token })).body.data.map((v: { reference_id: string }) => v.reference_id) as string[];
    expect(references.length).toBeGreaterThanOrEqual(7);

    const dump = (await run('pg_dump', ['--no-owner', stack.config.DATABASE_URL], { maxBuffer: 256 * 1024 * 1024 })).stdout;
    const redis = await redisDump(stack.config.REDIS_PREFIX);
    const logs = stack.logs.join('\n');
    // Each source is really the run's: it names the verifications that were made.
    for (const ref of references) expect(dump).toContain(ref);
    expect(redis.keys.some((k) => k.includes('{lookups}'))).toBe(true);
    expect(redis.text).toContain(references[0]!);
    expect(logs).toMatch(/"level":20/);
    expect(references.some((ref) => logs.includes(ref))).toBe(true);
    // Not even sealed: every vNIN lookup job is gone from Redis (its end is in the event stream, which
    // carries outcomes only, never a query).
    expect(redis.keys.filter((k) => references.some((ref) => k.includes(ref)))).toEqual([]);
    expect(redis.text).toMatch(/"completed"/);
    expect(redis.text).not.toMatch(/\bquery\b/);

    for (const [name, text] of [['pg_dump', dump], ['redis', redis.text], ['logs', logs]] as const) {
      const lower = text.toLowerCase();
      for (const token of tokens) {
        expect(lower.includes(token.toLowerCase()), `${name} holds a vNIN`).toBe(false);
        // bytea columns are dumped as hex: a token stored unsealed there would read as its bytes.
        expect(lower.includes(Buffer.from(token).toString('hex')), `${name} holds a vNIN's bytes`).toBe(false);
      }
    }
  });
});
