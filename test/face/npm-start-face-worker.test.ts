import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createDb } from '../../src/lib/db.ts';
import { createOrganisation, createUser } from '../../src/modules/organisations/index.ts';
import { adjustWallet } from '../../src/modules/wallet/index.ts';
import { freePort, startNpmStart, type NpmStart } from '../setup/npm-start.ts';

// `npm start` runs a face worker process of its own, and the README's two curls work: a
// selfie from the simulator's /sandbox/faces with its own NIN matches, with the other NIN it does not;
// the face worker's own metrics (FACE_METRICS_PORT) count the units those comparisons debited.

const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;
let s: NpmStart;
let faceMetricsPort: number;
beforeAll(async () => {
  faceMetricsPort = await freePort();
  s = await startNpmStart({ env: { METRICS_TOKEN, FACE_METRICS_PORT: String(faceMetricsPort), WORKER_METRICS_PORT: String(await freePort()) } });
  await s.waitForOutput('api listening');
  await s.waitForOutput('face worker started');
}, 120_000);
afterAll(async () => {
  if (!s) return;
  const exited = new Promise((resolve) => s.proc.once('exit', resolve));
  s.proc.kill('SIGTERM');
  await exited;
  await s.cleanup();
});

it('When the sandbox\'s selfie of Grace Hopper is sent with her NIN and with Eileen Collins\'s, then npm start\'s face worker answers a match and a mismatch, and its own metrics count the units it debited', { timeout: 90_000 }, async () => {
  const api = `http://127.0.0.1:${s.ports.api}`;
  const ready = (await (await fetch(`${api}/readyz`)).json()) as { face: string };
  expect(ready.face).toBe('ready');
  const username = `face-${randomBytes(3).toString('hex')}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const pool = await createDb(s.databaseUrl, { maxPoolSize: 1 });
  try {
    const defaults = loadConfig({ NODE_ENV: 'test' });
    const org = await createOrganisation(pool, { name: 'Face Ltd', tenancy: 'hosted', affiliate: false, businessRegistration: 'RC-1', dataProtection: 'NDPC-1' }, { unitCostKobo: defaults.DEFAULT_UNIT_COST_KOBO, minTopupUnits: defaults.DEFAULT_MIN_TOPUP_UNITS });
    await adjustWallet(pool, org.id, 10, 'test funding');
    await createUser(pool, { orgId: org.id, username, password, role: 'org_admin', requirePasswordChange: false });
  } finally {
    await pool.end();
  }
  const login = await fetch(`${api}/v1/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username, password }) });
  const token = ((await login.json()) as { access_token: string }).access_token;
  const faces = (await (await fetch(`http://127.0.0.1:${s.ports.identity}/sandbox/faces`)).json()) as { data: { nin: string; selfie: string }[] };
  const [hopper, collins] = faces.data;
  const ask = async (nin: string) => {
    const r = await fetch(`${api}/v1/verify-nin/face`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ nin, reason: 'corporate', selfie: hopper!.selfie, consent: { obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'v1' } }),
    });
    expect(r.status).toBe(200);
    return ((await r.json()) as { face: { match: boolean } }).face;
  };
  expect((await ask(hopper!.nin)).match).toBe(true);
  expect((await ask(collins!.nin)).match).toBe(false);
  // Both compared, so both charged FACE_MATCH_UNITS (2), debited by the face worker that settled them.
  const metrics = await fetch(`http://127.0.0.1:${faceMetricsPort}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(metrics.status).toBe(200);
  expect(await metrics.text()).toMatch(/^wallet_units_debited_total\{process="face"\} 4$/m);
});
