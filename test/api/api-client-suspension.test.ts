import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// A client acts only while the administrator it acts for could still create it.

const SUSPENDED = {
  detail:
    'API client suspended: the administrator who created it is disabled or no longer an organisation administrator; another administrator may adopt it or delete it',
  code: 'api_client_suspended',
};

let stack: Stack;
let org: OrgFixture;
let other: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  [org, other] = await Promise.all([stack.createOrg(), stack.createOrg()]);
});
afterAll(async () => stack?.close());

/** A second administrator of the organisation, signed in. */
async function secondAdmin(o: OrgFixture) {
  const u = { username: `admin2-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(6).toString('hex')}` };
  const row = await createUser(stack.db, { orgId: o.orgId, ...u, role: 'org_admin', requirePasswordChange: false });
  return { id: row.id, ...u, token: await stack.login(u.username, u.password) };
}

async function adminId(o: OrgFixture): Promise<number> {
  const team = await stack.api('GET', '/v1/team', { token: o.admin.token });
  return team.body.data.find((u: { username: string }) => u.username === o.admin.username).id;
}

const grant = (id: string, secret: string) => stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: id, client_secret: secret } });
const listed = async (o: OrgFixture, clientId: string) =>
  (await stack.api('GET', '/v1/api-clients', { token: o.admin.token })).body.data.find((c: { client_id: string }) => c.client_id === clientId);

describe('API client suspension and adoption', () => {
  it('When the creator is disabled, then the client is suspended at once (401 api_client_suspended on requests and at the token grant); another administrator adopts it and it works again with its secret, its old token staying dead', async () => {
    const creator = await secondAdmin(org);
    const created = await stack.api('POST', '/v1/api-clients', { token: creator.token, json: { name: 'Payroll server', role: 'member' } });
    expect(created.status).toBe(201);
    const c = created.body as { client_id: string; client_secret: string };
    expect(await listed(org, c.client_id)).toMatchObject({ created_by: { id: creator.id, username: creator.username }, status: 'active' });
    const token = (await grant(c.client_id, c.client_secret)).body.access_token as string;
    expect((await stack.api('GET', '/v1/me', { token })).status).toBe(200);

    expect((await stack.api('PATCH', `/v1/team/${creator.id}`, { token: org.admin.token, json: { disabled: true } })).status).toBe(200);

    const refused = await stack.api('POST', '/v1/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' } });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(SUSPENDED);
    expect((await stack.api('GET', '/v1/me', { token })).body).toEqual(SUSPENDED);
    const requery = await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: 'REF-AAAAAAAAAAAA' } });
    expect(requery.status).toBe(401);
    expect(requery.body).toEqual(SUSPENDED);
    const atGrant = await grant(c.client_id, c.client_secret);
    expect(atGrant.status).toBe(401);
    expect(atGrant.body).toMatchObject(SUSPENDED);
    // A wrong secret learns nothing about the suspension.
    expect((await grant(c.client_id, `${c.client_secret}x`)).body).toEqual({ detail: 'Incorrect client credentials', error: 'invalid_client', error_description: 'Incorrect client credentials' });
    expect(await listed(org, c.client_id)).toMatchObject({ created_by: { id: creator.id, username: creator.username }, status: 'suspended' });

    const adopted = await stack.api('POST', `/v1/api-clients/${c.client_id}/adopt`, { token: org.admin.token });
    expect(adopted.status).toBe(200);
    expect(adopted.body).toMatchObject({ client_id: c.client_id, name: 'Payroll server', role: 'member', status: 'active', created_by: { id: await adminId(org), username: org.admin.username } });
    expect(await listed(org, c.client_id)).toEqual(adopted.body);

    expect((await stack.api('GET', '/v1/me', { token })).status).toBe(401);
    const fresh = await grant(c.client_id, c.client_secret);
    expect(fresh.status).toBe(200);
    expect((await stack.api('GET', '/v1/me', { token: fresh.body.access_token })).body).toMatchObject({ client_id: c.client_id });
  });

  it('When the creator is demoted to member, then the client is suspended; another administrator revokes it instead (204) and it is gone', async () => {
    const creator = await secondAdmin(org);
    const c = (await stack.api('POST', '/v1/api-clients', { token: creator.token, json: { name: 'Reports', role: 'org_admin' } })).body;
    const token = (await grant(c.client_id, c.client_secret)).body.access_token as string;
    expect((await stack.api('PATCH', `/v1/team/${creator.id}`, { token: org.admin.token, json: { role: 'member' } })).status).toBe(200);
    expect((await stack.api('GET', '/v1/me', { token })).body).toEqual(SUSPENDED);
    expect((await listed(org, c.client_id)).status).toBe('suspended');

    expect((await stack.api('DELETE', `/v1/api-clients/${c.client_id}`, { token: org.admin.token })).status).toBe(204);
    expect(await listed(org, c.client_id)).toBeUndefined();
    expect((await grant(c.client_id, c.client_secret)).body).toEqual({ detail: 'Incorrect client credentials', error: 'invalid_client', error_description: 'Incorrect client credentials' });
    expect((await stack.api('POST', `/v1/api-clients/${c.client_id}/adopt`, { token: org.admin.token })).status).toBe(404);
  });

  it("When another organisation's administrator, a member or an API client tries to adopt, then 404 / 403 and nothing changes", async () => {
    const c = (await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'Kept', role: 'org_admin' } })).body;
    const foreign = await stack.api('POST', `/v1/api-clients/${c.client_id}/adopt`, { token: other.admin.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ detail: 'API client not found' });
    expect((await stack.api('POST', '/v1/api-clients/not-a-client/adopt', { token: org.admin.token })).status).toBe(404);
    expect((await stack.api('POST', `/v1/api-clients/${c.client_id}/adopt`, { token: org.member.token })).status).toBe(403);
    const clientToken = (await grant(c.client_id, c.client_secret)).body.access_token as string;
    expect((await stack.api('POST', `/v1/api-clients/${c.client_id}/adopt`, { token: clientToken })).status).toBe(403);
    expect((await listed(org, c.client_id)).created_by).toEqual({ id: await adminId(org), username: org.admin.username });
  });
});
