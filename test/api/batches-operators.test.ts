import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';

const run = promisify(execFile);
const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;

let stack: Stack;
let platformToken: string;
beforeAll(async () => {
  stack = await startStack({ env: { METRICS_TOKEN, INTERACTIVE_QUIET_MS: '0' }, captureLogs: true });
  const admin = { username: `ops-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  await createUser(stack.db, { orgId: null, ...admin, role: 'platform_admin' });
  platformToken = await stack.login(admin.username, admin.password);
});
afterAll(async () => stack?.close());

describe('Batches for operators', () => {
  it('When a batch waits for units, then /metrics counts it and its rows, batch:show prints it, and bull-board lists the batches queue', async () => {
    const org = await stack.createOrg({ units: 0 });
    const r = await stack.api('POST', '/v1/verify-nin/batches', { token: org.member.token, json: { reason: 'corporate', rows: [{ nin: '31234567890' }, { nin: '31234567890' }, { nin: '41234567890' }] } });
    expect(r.status).toBe(202);
    const id = r.body.id as string;
    await until(async () => (await stack.api('GET', `/v1/verify-nin/batches/${id}`, { token: org.member.token })).body.status, (s) => s === 'paused');

    const m = await stack.api('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(m.status).toBe(200);
    expect(m.text).toMatch(/^verification_batches\{status="paused",process="api"\} 1$/m);
    expect(m.text).toMatch(/^verification_batch_rows_pending\{status="paused",process="api"\} 3$/m);

    const cli = await run(process.execPath, ['src/cli/admin.ts', 'batch:show', '--id', id], { env: { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, LOG_LEVEL: 'silent' } });
    expect(JSON.parse(cli.stdout)).toMatchObject({ id, org_id: org.orgId, status: 'paused', paused_reason: 'insufficient_units', total: 3, done: 0, estimated_units: 2, lookups_waiting: 2, lookups_queued: 0 });
    const unknown = await run(process.execPath, ['src/cli/admin.ts', 'batch:show', '--id', 'BAT-AAAAAAAAAAAA'], { env: { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, LOG_LEVEL: 'silent' } }).catch((e: { code: number; stderr: string }) => e);
    expect(unknown).toMatchObject({ code: 1 });
    expect(JSON.parse((unknown as { stderr: string }).stderr)).toEqual({ detail: 'Batch not found' });

    const board = await stack.api('GET', '/admin/queues/api/queues', { token: platformToken });
    expect((board.body.queues as { name: string }[]).map((q) => q.name)).toContain('batches');

    // The results download is logged by reference: who and which batch, never a value.
    const csv = await stack.api('GET', `/v1/verify-nin/batches/${id}/results`, { token: org.member.token });
    expect(csv.text).toBe('row,client_ref,status,reference_id,fname,mname,lname,dob,gender,phone,detail\r\n1,,pending,,,,,,,,\r\n2,,pending,,,,,,,,\r\n3,,pending,,,,,,,,\r\n');
    const line = stack.logs.find((l) => l.includes('batch.results_downloaded'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ event: 'batch.results_downloaded', batchId: id, orgId: org.orgId, format: 'csv' });
    for (const l of stack.logs) expect(l).not.toContain('31234567890');
  });
});
