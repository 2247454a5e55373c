import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envFromConfig } from '../chaos/chaos-stack.ts';
import { repoPath, spawnNode, type NodeChild } from '../../bench/lib/proc.ts';
import { waitingBatchRows } from '../../src/modules/batches/index.ts';
import { eraseSubjectData } from '../../src/modules/verification/index.ts';
import { setSubscription } from '../../src/modules/organisations/index.ts';
import { startStack, type ApiCall, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// What a request is allowed is checked on every request, whichever API process answers it: a
// change committed through one process (or straight in the database) is seen by the very next
// request to another, with no wait. API A is this process's app; API B is `node src/server.ts`,
// a process of its own with its own pools. The hottest routes (requery, fixture verification) are
// the ones asked, since they read the principal in the fewest statements.

let stack: Stack;
let b: NodeChild;
let bUrl: string;

async function callB(method: string, path: string, call: ApiCall = {}) {
  const headers: Record<string, string> = { ...(call.headers ?? {}) };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  let body: string | undefined;
  if (call.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.json);
  }
  const r = await fetch(`${bUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

const fixture = { nin: '12345678901', reason: 'corporate' };

beforeAll(async () => {
  stack = await startStack();
  b = spawnNode('api-b', repoPath('src/server.ts'), { ...envFromConfig(stack.config), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', METRICS_TOKEN: '' });
  const line = await waitFor(() => b.logs.find((l) => l.includes('api listening')), { what: 'API B listening', timeoutMs: 60_000 });
  bUrl = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
}, 90_000);

afterAll(async () => {
  await b?.stop(10_000);
  await stack?.close();
});

/** A found fixture verification of the member's, made on A: its reference to requery on B. */
async function reference(org: OrgFixture): Promise<string> {
  const r = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: fixture });
  expect(r.status).toBe(200);
  return r.body.data.reference_id as string;
}

async function memberId(org: OrgFixture): Promise<number> {
  const team = await stack.api('GET', '/v1/team', { token: org.admin.token });
  return team.body.data.find((u: { username: string }) => u.username === org.member.username).id as number;
}

describe('Freshness across two API processes', () => {
  it('When an administrator disables a member on A, then the very next requery and fixture verification on B answer 401', async () => {
    const org = await stack.createOrg({ units: 5 });
    const ref = await reference(org);
    expect((await callB('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } })).status).toBe(200);
    expect((await stack.api('PATCH', `/v1/team/${await memberId(org)}`, { token: org.admin.token, json: { disabled: true } })).status).toBe(200);
    expect((await callB('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } })).status).toBe(401);
    expect((await callB('POST', '/v1/verify-nin', { token: org.member.token, json: fixture })).status).toBe(401);
  });

  it('When a member changes their password on A, then their earlier token, already accepted by B, is refused on B at once (401) and a new one works', async () => {
    const org = await stack.createOrg({ units: 5 });
    const ref = await reference(org);
    // B has verified this token's signature before (and remembers that verdict, auth/token-memo.ts).
    expect((await callB('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } })).status).toBe(200);
    expect((await callB('POST', '/v1/verify-nin', { token: org.member.token, json: fixture })).status).toBe(200);
    const changed = await stack.api('POST', '/v1/change-password', { token: org.member.token, json: { current_password: org.member.password, new_password: 'a-brand-new-passphrase-42' } });
    expect(changed.status).toBe(200);
    expect((await callB('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } })).status).toBe(401);
    expect((await callB('POST', '/v1/verify-nin', { token: org.member.token, json: fixture })).status).toBe(401);
    const fresh = await stack.login(org.member.username, 'a-brand-new-passphrase-42');
    expect((await callB('POST', '/v1/verify-nin/requery', { token: fresh, json: { reference_id: ref } })).status).toBe(200);
  });

  it('When a token B has already accepted is logged out on A, then B refuses it on the next request (401)', async () => {
    const org = await stack.createOrg({ units: 5 });
    const ref = await reference(org);
    expect((await callB('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } })).status).toBe(200);
    expect((await callB('POST', '/v1/verify-nin', { token: org.member.token, json: fixture })).status).toBe(200);
    expect((await stack.api('POST', '/v1/logout', { token: org.member.token })).status).toBe(204);
    const r = await callB('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(r.status).toBe(401);
    expect((await callB('POST', '/v1/verify-nin', { token: org.member.token, json: fixture })).status).toBe(401);
  });

  it('When an API client is deleted on A, then its token is refused on B at once (401)', async () => {
    const org = await stack.createOrg({ units: 5 });
    const made = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'Onboarding', role: 'member' } });
    expect(made.status).toBe(201);
    const grant = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: made.body.client_id, client_secret: made.body.client_secret } });
    expect(grant.status).toBe(200);
    const token = grant.body.access_token as string;
    const v = await callB('POST', '/v1/verify-nin', { token, json: fixture });
    expect(v.status).toBe(200);
    expect((await stack.api('DELETE', `/v1/api-clients/${made.body.client_id}`, { token: org.admin.token })).status).toBe(204);
    expect((await callB('POST', '/v1/verify-nin/requery', { token, json: { reference_id: v.body.data.reference_id } })).status).toBe(401);
    expect((await callB('POST', '/v1/verify-nin', { token, json: fixture })).status).toBe(401);
  });

  it("When an administrator changes a member's role on A, then the member's earlier token is refused on B (401) and a new token carries the new role", async () => {
    const org = await stack.createOrg({ units: 5 });
    const ref = await reference(org);
    expect((await stack.api('PATCH', `/v1/team/${await memberId(org)}`, { token: org.admin.token, json: { role: 'org_admin' } })).status).toBe(200);
    expect((await callB('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } })).status).toBe(401);
    const fresh = await stack.login(org.member.username, org.member.password);
    expect((await callB('GET', '/v1/me', { token: fresh })).body).toMatchObject({ role: 'org_admin' });
  });

  it('When the subscription is switched off (committed straight in the database), then the next live verification on B is refused (403) while fixtures still work', async () => {
    const org = await stack.createOrg({ units: 5 });
    const before = await callB('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789012', reason: 'corporate' } });
    expect(before.status).toBe(200);
    expect(await setSubscription(stack.db, org.orgId, false)).toMatchObject({ subscription_active: false });
    const live = await callB('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789012', reason: 'corporate' } });
    expect(live.status).toBe(403);
    expect(live.body.detail).toMatch(/subscription/i);
    expect((await callB('POST', '/v1/verify-nin', { token: org.member.token, json: fixture })).status).toBe(200);
  });

  it('When a person is erased, then the next requery of their verification on B says the record was erased (404)', async () => {
    const org = await stack.createOrg({ units: 5 });
    const nin = '21234567890';
    const made = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin, reason: 'corporate' } });
    expect(made.status).toBe(200);
    const ref = made.body.data.reference_id as string;
    expect((await callB('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } })).status).toBe(200);
    expect((await eraseSubjectData({ db: stack.db, config: stack.config }, waitingBatchRows(stack.config), nin)).erased).toBeGreaterThanOrEqual(1);
    const r = await callB('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(r.status).toBe(404);
    expect(r.body.detail).toMatch(/erased/i);
  });
});
