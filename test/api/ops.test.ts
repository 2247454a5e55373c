import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIds, QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { startMetricsServer } from '../../src/modules/ops/metrics.ts';
import { createUser } from '../../src/modules/organisations/organisations.service.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;
const OUR_METRICS = [
  'http_request_duration_seconds',
  'queue_jobs',
  'job_duration_seconds',
  'job_failures_total',
  'upstream_request_duration_seconds',
  'wallet_units_debited_total',
  'wallet_units_credited_total',
  'topups_total',
  'ledger_audit_runs_total',
  'ledger_audit_mismatches',
  'verifications_total',
  'logins_total',
];

/** The value of the sample `name` whose labels include `labels` (label order is prom-client's business). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

let stack: Stack;
let org: OrgFixture;
let platformToken: string;
let platformBasic: string;

beforeAll(async () => {
  stack = await startStack({ env: { METRICS_TOKEN }, captureLogs: true });
  org = await stack.createOrg({ units: 5 });
  const admin = { username: `ops-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  await createUser(stack.db, { orgId: null, ...admin, role: 'platform_admin' });
  platformToken = await stack.login(admin.username, admin.password);
  platformBasic = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
});
afterAll(async () => stack?.close());

describe('bull-board at /admin/queues', () => {
  const paths = ['/admin/queues', '/admin/queues/', '/admin/queues/api/queues', '/admin/queues/static/css/main.css', '/admin/queues/queue/lookups'];

  it('When an anonymous caller asks for any part of the board, then it gets 401 and none of the board', async () => {
    for (const path of paths) {
      const r = await stack.api('GET', path);
      expect(r.status, path).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      expect(r.body).toEqual({ detail: 'Not authenticated' });
    }
    const put = await stack.api('PUT', '/admin/queues/api/queues/lookups/pause');
    expect(put.status).toBe(401);
  });

  it('When the token is invalid, then the board answers 401', async () => {
    const r = await stack.api('GET', '/admin/queues', { token: `${platformToken}x` });
    expect(r.status).toBe(401);
  });

  it('When an organisation member or administrator asks, then the board answers 403', async () => {
    for (const token of [org.member.token, org.admin.token]) {
      for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
        const r = await stack.api('GET', path, { token });
        expect(r.status, path).toBe(403);
        expect(r.body.detail).toBe('Only platform administrators may do this');
      }
    }
  });

  it('When a platform administrator asks, then the board is served with every queue of the catalog', async () => {
    const page = await stack.api('GET', '/admin/queues', { token: platformToken });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.text).toContain('<base href="/admin/queues/"');
    const api = await stack.api('GET', '/admin/queues/api/queues', { token: platformToken });
    expect(api.status).toBe(200);
    const names = (api.body.queues as { name: string }[]).map((q) => q.name).sort();
    expect(names).toEqual(Object.values(QUEUES).sort());
  });

  it('When a browser sends a platform administrator\'s Basic credentials, then the board is served; anyone else is refused', async () => {
    const anonymous = await stack.api('GET', '/admin/queues');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    const page = await stack.api('GET', '/admin/queues/api/queues', { headers: { authorization: platformBasic } });
    expect(page.status).toBe(200);
    const wrong = await stack.api('GET', '/admin/queues', { headers: { authorization: `Basic ${Buffer.from('nobody:nothing').toString('base64')}` } });
    expect(wrong.status).toBe(401);
    const orgAdmin = `Basic ${Buffer.from(`${org.admin.username}:${org.admin.password}`).toString('base64')}`;
    const refused = await stack.api('GET', '/admin/queues', { headers: { authorization: orgAdmin } });
    expect(refused.status).toBe(403);
    expect(refused.text).not.toContain('<html');
  });
});

describe('Prometheus metrics at /metrics', () => {
  it('When no token or a wrong token is sent, then /metrics answers 401', async () => {
    const none = await stack.api('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    for (const token of ['wrong', `${METRICS_TOKEN}x`, METRICS_TOKEN.slice(0, -1), platformToken]) {
      expect((await stack.api('GET', '/metrics', { token })).status).toBe(401);
    }
    const basic = await stack.api('GET', '/metrics', { headers: { authorization: `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}` } });
    expect(basic.status).toBe(401);
  });

  it('When the right token is sent, then /metrics lists our metrics, with latency by route and queue depth per queue', async () => {
    await stack.api('GET', '/v1/me', { token: org.member.token });
    const r = await stack.api('GET', '/metrics', { token: METRICS_TOKEN });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    for (const name of OUR_METRICS) expect(r.text, name).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    expect(sample(r.text, 'http_request_duration_seconds_count', { method: 'GET', route: '/me', status: '200', process: 'api' })).toBeGreaterThanOrEqual(1);
    // Read from Redis at scrape time, for every queue of the catalog.
    for (const queue of Object.values(QUEUES)) {
      for (const state of ['waiting', 'active', 'delayed', 'failed', 'completed']) expect(sample(r.text, 'queue_jobs', { queue, state }), `${queue} ${state}`).toBeGreaterThanOrEqual(0);
    }
    expect(sample(r.text, 'logins_total', { outcome: 'success', process: 'api' })).toBeGreaterThanOrEqual(3);
  });

  it('When METRICS_TOKEN is empty, then /metrics answers 404 like an unknown path', async () => {
    const open = await startStack({ workers: false, env: { METRICS_TOKEN: '' } });
    try {
      for (const token of [undefined, 'anything']) {
        const r = await open.api('GET', '/metrics', token ? { token } : {});
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ detail: 'Not Found' });
      }
    } finally {
      await open.close();
    }
  });

  it("When the worker's metrics server is scraped, then it applies the same token rules to the worker registry", async () => {
    const metrics = createMetrics({ process: 'worker', defaults: false });
    metrics.jobDuration.observe({ queue: 'lookups', job: 'verification.lookup', outcome: 'completed' }, 0.1);
    const servers: Server[] = [];
    try {
      const on = await startMetricsServer({ registry: metrics.registry, token: METRICS_TOKEN, port: 0, host: '127.0.0.1' });
      const off = await startMetricsServer({ registry: metrics.registry, token: '', port: 0, host: '127.0.0.1' });
      servers.push(on, off);
      const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/metrics`;
      expect((await fetch(url(on))).status).toBe(401);
      expect((await fetch(url(on), { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
      const ok = await fetch(url(on), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(ok.status).toBe(200);
      expect(sample(await ok.text(), 'job_duration_seconds_count', { queue: 'lookups', job: 'verification.lookup', outcome: 'completed', process: 'worker' })).toBe(1);
      expect((await fetch(url(off), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(404);
    } finally {
      for (const s of servers) await new Promise((resolve) => s.close(resolve));
    }
  });
});

describe('Request id', () => {
  it('When a live verification is made with an X-Request-Id, then the id is in the job payload and on the worker log lines, all JSON and free of the NIN', async () => {
    const requestId = `trace-${randomBytes(6).toString('hex')}`;
    // 5000...: the simulator answers 503 twice, so the worker logs its retries (with the request id).
    const nin = '50001234567';
    const r = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin, reason: 'corporate' }, headers: { 'x-request-id': requestId } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe(requestId);

    const connection = new Redis(stack.config.REDIS_URL, { maxRetriesPerRequest: null });
    const lookups = new Queue(QUEUES.lookups, { connection, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.lookups) });
    try {
      const job = await lookups.getJob(jobIds.lookup(r.body.data.reference_id));
      expect(job?.data).toMatchObject({ referenceId: r.body.data.reference_id, requestId });
      expect(Object.keys(job?.data.query ?? {}).sort()).toEqual(['data', 'keyId']);
    } finally {
      await lookups.close();
      connection.disconnect();
    }

    const lines = stack.logs.flatMap((chunk) => chunk.split('\n').filter(Boolean));
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.filter((l) => (l.req as { id?: string } | undefined)?.id === requestId).length).toBeGreaterThan(0);
    expect(parsed.filter((l) => l.reqId === requestId && l.job === 'verification.lookup').length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes(nin))).toEqual([]);
  });
});
