import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';
import { makeLink, openPage, sandboxVnin, submitPage } from '../setup/links.ts';
import { until } from '../setup/wait.ts';

/**
 * A selfie (and its descriptor) is never stored. After face matches of every outcome (match,
 * mismatch, match_only, no reference photo, fixture, refused, and one sent on a verification link's
 * page, whose vNIN and link token are searched for too), no window of the selfies' bytes, as
 * base64 or hex, is in the database (pg_dump), in any Redis key of the stack (every type, streams
 * included: the face jobs are removed as they end) or in the API and worker logs at debug level.
 * Nor are a liveness check's frames, passed or failed.
 */
const run = promisify(execFile);
const FACES = 'src/simulators/identity-authority/faces/';

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
      if (type === 'string') value = (await redis.getBuffer(key))?.toString('latin1');
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

/** Windows of 48 bytes from across the image: base64 (aligned to 3 bytes, so it appears in any base64 of the whole) and hex. */
function windows(image: Buffer): string[] {
  const out: string[] = [];
  for (let at = 300; at + 48 < image.length; at += Math.max(48, Math.floor(image.length / 8) - (Math.floor(image.length / 8) % 3))) {
    const w = image.subarray(at - (at % 3), at - (at % 3) + 48);
    out.push(w.toString('base64'), w.toString('hex'));
  }
  return out;
}

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ face: true, captureLogs: true });
}, 60_000);
afterAll(async () => stack?.close());

describe('the selfie is never kept', () => {
  it('When face matches of every outcome have run, then pg_dump, a full Redis dump and the logs hold none of the selfies\' bytes', async () => {
    const org = await stack.createOrg({ units: 20 });
    // Selfies re-encoded here: their bytes exist nowhere else (not in the committed files).
    const hopper = await sharp(`${FACES}grace-hopper.selfie.jpg`).jpeg({ quality: 83 }).toBuffer();
    const collins = await sharp(`${FACES}eileen-collins.selfie.jpg`).jpeg({ quality: 83 }).toBuffer();
    const blank = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#7a7a7a' } }).png().toBuffer();
    const consent = { obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'privacy-2026-03' };
    const ask = (nin: string, selfie: Buffer, extra: object = {}, headers: Record<string, string> = {}) =>
      stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: { nin, reason: 'corporate', consent, selfie: selfie.toString('base64'), ...extra }, headers });
    expect((await ask('70000000001', hopper)).body.face.match).toBe(true);
    expect((await ask('70000000001', collins)).body.face.match).toBe(false);
    expect((await ask('70000000002', collins, { match_only: true })).body.face.match).toBe(true);
    expect((await ask('23456789012', hopper)).body.face.status).toBe('no_reference_photo');
    expect((await ask('12345678903', hopper)).body.face.match).toBe(true);
    expect((await ask('70000000001', blank)).body.code).toBe('selfie_no_face');
    // Asynchronous: the selfie waits sealed in the lookup job, which is removed as it ends.
    const accepted = await ask('70000000002', collins, {}, { Prefer: 'respond-async' });
    expect(accepted.status, accepted.text).toBe(202);
    const ref = accepted.body.reference_id as string;
    const requery = () => stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect((await until(requery, (r) => r.status !== 202, 30_000)).body.face.match).toBe(true);
    await until(() => redisDump(stack.config.REDIS_PREFIX), (d) => !d.keys.some((k) => k.includes(ref)), 10_000);
    // A selfie (and a vNIN) sent on a verification link's page goes the same way.
    const onPage = await sharp(`${FACES}grace-hopper.selfie.jpg`).jpeg({ quality: 81 }).toBuffer();
    const link = await makeLink(stack, org.admin.token);
    const vnin = await sandboxVnin(stack, '70000000001');
    const sent = await submitPage(stack, link.url, { csrf: (await openPage(stack, link.url)).csrf, vnin, selfie: `data:image/jpeg;base64,${onPage.toString('base64')}` });
    expect(sent.status, sent.text).toBe(200);

    // Liveness frames go the same way (sealed in their liveness.judge job, removed as it ends; only
    // their keyed hashes are kept): a passed check (its front frame then compared as the selfie) and a failed one.
    const frames: Buffer[] = [];
    const livenessFrames = (challenges: string[], turns: string) => {
      const names = ['front', ...challenges.flatMap((c) => [`${c}-mid`, c])];
      return names.map((name, i) => {
        // A JPEG comment of random bytes after the start marker: bytes sent nowhere else, the pixels unchanged.
        const jpeg = readFileSync(`${FACES}liveness/${i === 0 ? 'grace-hopper' : turns}/${name}.jpg`);
        const note = randomBytes(16);
        const image = Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xfe, 0x00, 18]), note, jpeg.subarray(2)]);
        frames.push(image);
        return { step: name.replace(/-mid$/, ''), image: image.toString('base64'), captured_at_ms: 1000 + i * 400 };
      });
    };
    for (const [turns, status] of [['grace-hopper', 200], ['eileen-collins', 422]] as const) {
      const session = await stack.api('POST', '/v1/liveness/sessions', { token: org.member.token });
      const checked = await ask('70000000001', hopper, { selfie: undefined, liveness: { session_id: session.body.id, frames: livenessFrames(session.body.challenges, turns) } });
      expect(checked.status, checked.text).toBe(status);
    }

    // The link's token too: kept as its hash only, and the access log names the route, not the path.
    const token = new URL(link.url).pathname.split('/')[2]!;
    const needles = [...windows(hopper), ...windows(collins), ...windows(blank), ...windows(onPage), ...frames.flatMap((f) => [f.subarray(6, 22).toString('hex'), ...windows(f)]), vnin, token];
    expect(needles.length).toBeGreaterThan(30);
    const dump = (await run('pg_dump', ['--no-owner', stack.config.DATABASE_URL], { maxBuffer: 256 * 1024 * 1024 })).stdout;
    const redis = await redisDump(stack.config.REDIS_PREFIX);
    const logs = stack.logs.join('\n');
    // The needles are real substrings of the selfie's base64 as sent: a search that finds nothing means something.
    expect(hopper.toString('base64').includes(needles[0]!)).toBe(true);
    for (const [where, text] of [['pg_dump', dump], ['redis', redis.text], ['logs', logs]] as const) {
      for (const n of needles) expect(text.includes(n) || text.toLowerCase().includes(n.toLowerCase()), `${where} holds selfie bytes`).toBe(false);
    }
    // The face jobs are gone with their sealed images.
    expect(redis.keys.filter((k) => /face-(check|compare)-REF-|liveness-judge-/.test(k) || k.includes(ref))).toEqual([]);
    expect(logs.length).toBeGreaterThan(0);
  }, 120_000);
});
