import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/lib/api-scopes.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { buildOpenApiDocument } from '../../src/api-document/document.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// RFC 6749 section 3.3: a token request's `scope` narrows the token; one the caller may not have, or
// that does not exist, is 400 invalid_scope (section 5.2); the answer names what was granted (5.1).

let stack: Stack;
let org: OrgFixture;
let ref: string;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { RATE_LIMIT_PER_TOKEN: '1000' } });
  org = await stack.createOrg({ units: 20 });
  const r = await stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin: '12345678901', reason: 'corporate' } });
  expect(r.status).toBe(200);
  ref = r.body.data.reference_id as string;
});
afterAll(async () => stack?.close());

const token = (form: Record<string, string>) => stack.api('POST', '/v1/login', { form });
const password = (who: { username: string; password: string }, scope?: string) =>
  token({ username: who.username, password: who.password, ...(scope === undefined ? {} : { scope }) });
async function apiClient(role: 'org_admin' | 'member', scopes?: string[]) {
  const made = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: `Scoped ${Math.random()}`, role, ...(scopes ? { scopes } : {}) } });
  expect(made.status).toBe(201);
  return (scope?: string) => token({ grant_type: 'client_credentials', client_id: made.body.client_id, client_secret: made.body.client_secret, ...(scope === undefined ? {} : { scope }) });
}
const invalidScope = (detail: RegExp) => ({ detail: expect.stringMatching(detail), error: 'invalid_scope', error_description: expect.stringMatching(detail) });
const lacks = (scope: string, who = 'This token') => ({ detail: `${who} lacks the scope ${scope}`, code: 'insufficient_scope' });
const requeried = async (target: string) =>
  stack.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM audit_events WHERE action = 'verification.requeried' AND target = ${target}`);
const requery = (t: string) => stack.api('POST', '/v1/verify-nin/requery', { token: t, json: { reference_id: ref } });

describe('scope at the token endpoint', () => {
  it('When a token request names an unknown scope, or an empty one, then 400 invalid_scope with detail, for either grant', async () => {
    const client = await apiClient('org_admin');
    for (const [r, detail] of [
      [await client('nonsense'), /^scope: unknown scope "nonsense"; choose from verify, requery, history:read, topup, webhooks, links$/],
      [await client('verify nonsense'), /^scope: unknown scope "nonsense"/],
      [await client(''), /^scope: name at least one scope/],
      [await password(org.member, 'nonsense'), /^scope: unknown scope "nonsense"/],
      [await password(org.member, ' '), /^scope: name at least one scope/],
    ] as const) {
      expect(r.status, detail.source).toBe(400);
      expect(r.body).toEqual(invalidScope(detail));
      expect(r.headers.get('cache-control')).toBe('no-store');
    }
  });

  it("When a scope is beyond the API client's scopes or the user's role, then 400 invalid_scope naming it", async () => {
    const verifier = await apiClient('org_admin', ['verify']);
    const beyondClient = await verifier('verify requery');
    expect(beyondClient.status).toBe(400);
    expect(beyondClient.body).toEqual(invalidScope(/^scope: the scope requery is beyond the scopes of this API client$/));
    const memberClient = await apiClient('member');
    expect((await memberClient('topup')).body).toEqual(invalidScope(/^scope: the scope topup is beyond the scopes of this API client$/));
    const member = await password(org.member, 'verify topup');
    expect(member.status).toBe(400);
    expect(member.body).toEqual(invalidScope(/^scope: the scope topup is beyond the member role$/));
    // A platform administrator belongs to no organisation: no scope is within the role, and none is granted.
    const ops = { username: `ops-${Math.random().toString(36).slice(2)}`, password: 'pw-ops-scope-test' };
    await createUser(stack.db, { orgId: null, ...ops, role: 'platform_admin', requirePasswordChange: false });
    expect((await password(ops, 'history:read')).body).toEqual(invalidScope(/^scope: the scope history:read is beyond the platform_admin role$/));
    const plain = await password(ops);
    expect(plain.status).toBe(200);
    expect(plain.body.scope).toBe('');
  });

  it('When no scope is asked, then the token has everything allowed and the answer lists it; asked, the answer lists exactly the scopes granted', async () => {
    expect((await (await apiClient('org_admin'))()).body).toMatchObject({ token_type: 'bearer', scope: 'verify requery history:read topup webhooks links' });
    expect((await (await apiClient('member'))()).body.scope).toBe('verify requery history:read');
    expect((await (await apiClient('org_admin', ['requery', 'verify']))()).body.scope).toBe('verify requery');
    expect((await password(org.admin)).body.scope).toBe('verify requery history:read topup webhooks links');
    expect((await password(org.member)).body.scope).toBe('verify requery history:read');
    // Order and repeats carry no meaning (a set); the answer is in the table's order.
    expect((await password(org.admin, 'topup  history:read topup')).body.scope).toBe('history:read topup');
    expect((await (await apiClient('member'))('requery')).body.scope).toBe('requery');
    // Everything the role allows, asked by name, is the whole token: the team stays reachable.
    const all = await password(org.admin, 'verify requery history:read topup webhooks links');
    expect(all.body.scope).toBe('verify requery history:read topup webhooks links');
    expect((await stack.api('GET', '/v1/team', { token: all.body.access_token })).status).toBe(200);
    const whole = (await password(org.admin)).body.access_token as string;
    expect((await stack.api('GET', '/v1/team', { token: whole })).status).toBe(200);
    expect((await stack.api('GET', '/v1/verifications', { token: whole })).status).toBe(200);
  });

  it("When an API client's token is narrowed, then an endpoint outside its scopes answers 403 and one inside answers 200", async () => {
    const grant = await (await apiClient('org_admin'))('history:read');
    expect(grant.status).toBe(200);
    const t = grant.body.access_token as string;
    expect((await stack.api('GET', '/v1/verifications', { token: t })).status).toBe(200);
    expect((await stack.api('GET', '/v1/me', { token: t })).status).toBe(200);
    const verify = await stack.api('POST', '/v1/verify-nin', { token: t, json: { nin: '12345678901', reason: 'corporate' } });
    expect(verify.status).toBe(403);
    expect(verify.body).toEqual(lacks('verify', 'This API client'));
    const topup = await stack.api('GET', '/v1/topup/quote?units=100', { token: t });
    expect(topup.status).toBe(403);
    expect(topup.body).toEqual(lacks('topup', 'This API client'));
  });

  it("When a person's token is narrowed, then it is refused outside its scopes and on the person-only endpoints, and served inside", async () => {
    const grant = await password(org.admin, 'history:read');
    expect(grant.status).toBe(200);
    expect(grant.body.scope).toBe('history:read');
    const t = grant.body.access_token as string;
    for (const path of ['/v1/verifications', '/v1/transactions', '/v1/topups', '/v1/me']) {
      expect((await stack.api('GET', path, { token: t })).status, path).toBe(200);
    }
    const verify = await stack.api('POST', '/v1/verify-nin', { token: t, json: { nin: '12345678901', reason: 'corporate' } });
    expect(verify.status).toBe(403);
    expect(verify.body).toEqual(lacks('verify'));
    expect((await stack.api('GET', '/v1/topup/quote?units=100', { token: t })).body).toEqual(lacks('topup'));
    // A narrowed token cannot mint a wider credential or manage the account.
    const closed = { detail: 'A token narrowed by scope may not call this endpoint', code: 'insufficient_scope' };
    const team = await stack.api('GET', '/v1/team', { token: t });
    expect(team.status).toBe(403);
    expect(team.body).toEqual(closed);
    const mint = await stack.api('POST', '/v1/api-clients', { token: t, json: { name: 'Escalation', role: 'org_admin' } });
    expect(mint.status).toBe(403);
    expect(mint.body).toEqual(closed);
  });

  it('When a narrowed token requeries (the path that reads the principal and records the read in one statement), then outside its scopes 403 and no event, inside 200 and one event', async () => {
    const before = await requeried(ref);
    const userVerifyOnly = (await password(org.admin, 'verify')).body.access_token as string;
    const clientVerifyOnly = (await (await apiClient('org_admin'))('verify')).body.access_token as string;
    const refusedUser = await requery(userVerifyOnly);
    expect(refusedUser.status).toBe(403);
    expect(refusedUser.body).toEqual(lacks('requery'));
    const refusedClient = await requery(clientVerifyOnly);
    expect(refusedClient.status).toBe(403);
    expect(refusedClient.body).toEqual(lacks('requery', 'This API client'));
    expect(await requeried(ref)).toBe(before);
    const userRequery = (await password(org.member, 'requery')).body.access_token as string;
    const served = await requery(userRequery);
    expect(served.status).toBe(200);
    expect(await requeried(ref)).toBe(before + 1);
  });

  it('When the OpenAPI document describes the OAuth 2.0 flows, then both list every scope with a description', () => {
    const doc = buildOpenApiDocument();
    const scheme = doc.components?.securitySchemes?.oauth2 as { flows: Record<string, { scopes: Record<string, string> }> } | undefined;
    expect(scheme).toBeDefined();
    for (const flow of ['password', 'clientCredentials']) {
      const scopes = scheme!.flows[flow]!.scopes;
      expect(Object.keys(scopes), flow).toEqual([...SCOPES]);
      for (const s of SCOPES) expect(scopes[s]!.length, `${flow} ${s}`).toBeGreaterThan(10);
    }
    const form = doc.components?.schemas?.TokenError as { properties: { error: { enum: string[] } } };
    expect(form.properties.error.enum).toContain('invalid_scope');
  });
});
