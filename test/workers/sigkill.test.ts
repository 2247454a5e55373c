import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'slonik';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let stack: Stack;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // The upstream takes 1.5 s per answer, so a worker can be killed while the job is in flight.
  stack = await startStack({ workers: false, simLatencyMs: 1500, env: { VERIFY_WAIT_MS: '4000', IDENTITY_TIMEOUT_MS: '5000' } });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await stack?.close();
});

/** `node workers/main.ts` with this stack's settings; resolves once its workers listen. */
async function startWorkerProcess(): Promise<ChildProcess> {
  const c = stack.config;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: c.DATABASE_URL,
    DATABASE_POOL_SIZE: '4',
    REDIS_URL: c.REDIS_URL,
    REDIS_PREFIX: c.REDIS_PREFIX,
    IDENTITY_BASE_URL: c.IDENTITY_BASE_URL,
    IDENTITY_API_KEY: c.IDENTITY_API_KEY,
    IDENTITY_TIMEOUT_MS: String(c.IDENTITY_TIMEOUT_MS),
    IDENTITY_MAX_ATTEMPTS: String(c.IDENTITY_MAX_ATTEMPTS),
    IDENTITY_BACKOFF_MS: String(c.IDENTITY_BACKOFF_MS),
    PAYSTACK_BASE_URL: c.PAYSTACK_BASE_URL,
    PAYSTACK_SECRET_KEY: c.PAYSTACK_SECRET_KEY,
    SANDBOX_SEED: 'false',
    // Short lock and stalled check so the dead worker's job is taken over in seconds, not half a minute.
    WORKER_LOCK_MS: '3000',
    WORKER_STALLED_INTERVAL_MS: '1000',
  };
  const child = spawn(process.execPath, ['workers/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${output.slice(-2000)}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('workers started')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}: ${output.slice(-2000)}`));
    });
  });
  return child;
}


it('When the worker is SIGKILLed during a lookup, then another worker finishes it and the unit is debited exactly once', async () => {
  const org = await stack.createOrg({ units: 3 });
  const first = await startWorkerProcess();

  const calls = stack.identitySim.stats().calls;
  const answer = stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '31415926535', reason: 'corporate' } });
  // The reasons list and then the NIN lookup reach the simulator; kill once the lookup is in flight.
  const ref = await waitFor(
    () => stack.db.maybeOneFirst(sql.type(z.object({ reference_id: z.string() }))`SELECT reference_id FROM verifications WHERE org_id = ${org.orgId}`),
    { what: 'the pending verification', timeoutMs: 10_000 },
  );
  await waitFor(async () => stack.identitySim.stats().calls > calls + 1, { what: 'the upstream call', timeoutMs: 10_000 });
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));

  const status = () => stack.db.oneFirst(sql.type(z.object({ status: z.string() }))`SELECT status FROM verifications WHERE reference_id = ${ref}`);
  expect(await status()).toBe('pending');

  // BullMQ gives the dead worker's job to a live one once its lock has expired (stalled-job check).
  const second = await startWorkerProcess();
  const res = await answer;
  if (res.status === 200) {
    expect(res.body.data.reference_id).toBe(ref);
  } else {
    expect(res.status).toBe(504);
    expect(res.body.reference_id).toBe(ref);
  }
  const found = await waitFor(
    async () => {
      const r = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
      return r.status === 200 ? r : r.status === 202 ? undefined : Promise.reject(new Error(`requery answered ${r.status}`));
    },
    { what: 'the requery to find the record', timeoutMs: 60_000 },
  );
  expect(found.body.data).toMatchObject({ nin: '31415926535', reference_id: ref });

  const lines = await stack.db.any(sql.type(z.object({ reference: z.string(), units_delta: z.coerce.number() }))`
    SELECT reference, units_delta FROM wallet_transactions WHERE org_id = ${org.orgId} AND kind = 'verification'`);
  expect(lines).toEqual([{ reference: ref, units_delta: -1 }]);
  const w = await stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${org.orgId}`);
  expect(w).toEqual({ units: 2, reserved: 0 });

  second.kill('SIGTERM');
  await new Promise((r) => second.once('exit', r));
}, 100_000);
