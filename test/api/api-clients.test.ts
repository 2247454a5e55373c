import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../clients/typescript/src/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
let org: OrgFixture;
let other: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg({ units: 5 });
  other = await stack.createOrg();
});
afterAll(async () => stack?.close());

const create = (token: string, json: unknown) => stack.api('POST', '/v1/api-clients', { token, json });
const clientLogin = (id: string, secret: string) =>
  stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: id, client_secret: secret } });
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('API clients', () => {
  it('When an organisation administrator creates one, then 201 with the secret once; the list shows it without any secret', async () => {
    const r = await create(org.admin.token, { name: 'Onboarding server', role: 'member' });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['allowed_ips', 'client_id', 'client_secret', 'created_at', 'expires_at', 'name', 'role', 'scopes']);
    expect(r.body).toMatchObject({ name: 'Onboarding server', role: 'member' });
    expect(r.body.client_id).toMatch(/^cli_[0-9a-f]{24}$/);
    expect(r.body.client_secret.length).toBeGreaterThanOrEqual(43);

    const list = await stack.api('GET', '/v1/api-clients', { token: org.admin.token });
    expect(list.status).toBe(200);
    const mine = list.body.data.find((c: { client_id: string }) => c.client_id === r.body.client_id);
    const team = await stack.api('GET', '/v1/team', { token: org.admin.token });
    const adminId = team.body.data.find((u: { username: string }) => u.username === org.admin.username).id;
    expect(mine).toEqual({
      client_id: r.body.client_id,
      name: 'Onboarding server',
      role: 'member',
      created_at: r.body.created_at,
      last_used_at: null,
      scopes: ['verify', 'requery', 'history:read'],
      allowed_ips: [],
      expires_at: null,
      created_by: { id: adminId, username: org.admin.username },
      status: 'active',
    });
    expect(list.text).not.toContain(r.body.client_secret);
    // Stored as a digest only.
    const row = await stack.db.one(q`SELECT secret_hash FROM api_clients WHERE client_id = ${r.body.client_id}`);
    expect(Buffer.from(row.secret_hash as Buffer).toString('latin1')).not.toContain(r.body.client_secret);
    // Another organisation sees none of it.
    const theirs = await stack.api('GET', '/v1/api-clients', { token: other.admin.token });
    expect(theirs.body.data.some((c: { client_id: string }) => c.client_id === r.body.client_id)).toBe(false);
  });

  it('When the client credentials grant is used (form body or HTTP Basic), then the same token response, and the token acts for the organisation with its role', async () => {
    const c = (await create(org.admin.token, { name: 'KYC backend', role: 'member' })).body;
    const viaForm = await clientLogin(c.client_id, c.client_secret);
    expect(viaForm.status).toBe(200);
    expect(Object.keys(viaForm.body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(viaForm.body).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    const viaBasic = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials' }, headers: { authorization: basic(c.client_id, c.client_secret) } });
    expect(viaBasic.status).toBe(200);

    const token = viaBasic.body.access_token as string;
    const me = await stack.api('GET', '/v1/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: null, username: null, client_id: c.client_id, name: 'KYC backend', role: 'member', organisation: { id: org.orgId } });

    const verified = await stack.api('POST', '/v1/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' } });
    expect(verified.status).toBe(200);
    const v = await stack.db.one(q`
      SELECT v.user_id, c.client_id FROM verifications v JOIN api_clients c ON c.id = v.api_client_id
      WHERE v.reference_id = ${verified.body.data.reference_id}`);
    expect(v).toEqual({ user_id: null, client_id: c.client_id });
    // A member client may not top up.
    expect((await stack.api('POST', '/v1/topup/initialize', { token, form: { units: 100 } })).status).toBe(403);

    const listed = await stack.api('GET', '/v1/api-clients', { token: org.admin.token });
    expect(listed.body.data.find((x: { client_id: string }) => x.client_id === c.client_id).last_used_at).not.toBeNull();
  });

  it('When the secret or the client id is wrong, then 401 "Incorrect client credentials"; both ways of sending it at once is 400; a missing secret 400', async () => {
    const c = (await create(org.admin.token, { name: 'Wrong secrets', role: 'member' })).body;
    for (const r of [
      await clientLogin(c.client_id, `${c.client_secret}x`),
      await clientLogin('cli_000000000000000000000000', c.client_secret),
      await clientLogin('not-a-client', 'whatever'),
      await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials' }, headers: { authorization: basic(c.client_id, 'nope') } }),
    ]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ detail: 'Incorrect client credentials', error: 'invalid_client', error_description: 'Incorrect client credentials' });
    }
    const both = await stack.api('POST', '/v1/login', {
      form: { grant_type: 'client_credentials', client_id: c.client_id, client_secret: c.client_secret },
      headers: { authorization: basic(c.client_id, c.client_secret) },
    });
    expect(both.status).toBe(400);
    const missing = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: c.client_id } });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ detail: 'Field required: client_secret', error: 'invalid_request' });
  });

  it('When a client is deleted, then 204 and its live token gets 401 at once and it can no longer log in; a second delete or another organisation\'s id is 404', async () => {
    const c = (await create(org.admin.token, { name: 'Retired server', role: 'org_admin' })).body;
    const token = (await clientLogin(c.client_id, c.client_secret)).body.access_token as string;
    expect((await stack.api('GET', '/v1/me', { token })).status).toBe(200);

    const foreign = await stack.api('DELETE', `/v1/api-clients/${c.client_id}`, { token: other.admin.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ detail: 'API client not found' });

    const del = await stack.api('DELETE', `/v1/api-clients/${c.client_id}`, { token: org.admin.token });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const after = await stack.api('GET', '/v1/me', { token });
    expect(after.status).toBe(401);
    expect(after.body.detail).toBe('Could not validate credentials');
    expect((await clientLogin(c.client_id, c.client_secret)).status).toBe(401);
    expect((await stack.api('DELETE', `/api-clients/${c.client_id}`, { token: org.admin.token })).status).toBe(404);
    const list = await stack.api('GET', '/v1/api-clients', { token: org.admin.token });
    expect(list.body.data.some((x: { client_id: string }) => x.client_id === c.client_id)).toBe(false);
  });

  it('When a member or an API client (even an org_admin one) manages API clients, then 403; an org_admin client may still top up', async () => {
    const c = (await create(org.admin.token, { name: 'Admin server', role: 'org_admin' })).body;
    const token = (await clientLogin(c.client_id, c.client_secret)).body.access_token as string;
    const asClient = [
      await create(token, { name: 'Child', role: 'member' }),
      await stack.api('GET', '/v1/api-clients', { token }),
      await stack.api('DELETE', `/v1/api-clients/${c.client_id}`, { token }),
    ];
    for (const r of asClient) {
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ detail: 'API clients may not manage API clients or the team' });
    }
    const asMember = [await create(org.member.token, { name: 'Nope', role: 'member' }), await stack.api('GET', '/v1/api-clients', { token: org.member.token })];
    for (const r of asMember) {
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ detail: 'Only organisation administrators may do this' });
    }
    // An API client has no password to change.
    const change = await stack.api('POST', '/v1/change-password', { token, json: { current_password: 'x', new_password: 'whatever-else' } });
    expect(change.status).toBe(403);
    // It can log its own token out.
    expect((await stack.api('POST', '/v1/logout', { token })).status).toBe(204);
    expect((await stack.api('GET', '/v1/me', { token })).status).toBe(401);
  });

  it('When the body is wrong, then 400 for a bad role or empty name, 422 for a missing field, 415 for a form, 401 without a token', async () => {
    const badRole = await create(org.admin.token, { name: 'x', role: 'platform_admin' });
    expect(badRole.status).toBe(400);
    expect(badRole.body.detail).toBe('role: role must be "finance" or "member" or "org_admin"');
    expect((await create(org.admin.token, { name: '   ', role: 'member' })).status).toBe(400);
    const missing = await create(org.admin.token, { role: 'member' });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].loc).toEqual(['name']);
    expect((await stack.api('POST', '/v1/api-clients', { token: org.admin.token, form: { name: 'x', role: 'member' } })).status).toBe(415);
    expect((await stack.api('GET', '/v1/api-clients')).status).toBe(401);
  });

  it('When the typed client is used, then it creates, logs in with client credentials, lists and deletes', async () => {
    const admin = createClient({ baseUrl: stack.url, token: org.admin.token });
    const created = await admin.createApiClient({ name: 'Typed', role: 'member' });
    const server = createClient({ baseUrl: stack.url });
    await server.loginClient(created.client_id, created.client_secret);
    expect((await server.me()).client_id).toBe(created.client_id);
    expect((await admin.listApiClients()).data.map((c) => c.client_id)).toContain(created.client_id);
    await admin.deleteApiClient(created.client_id);
    await expect(server.me()).rejects.toMatchObject({ status: 401 });
  });
});
