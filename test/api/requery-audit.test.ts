import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalOf, verifyChain } from '../../src/modules/audit/index.ts';
import { withinOrigin } from '../../src/lib/request-scope.ts';
import { alongReader, type Reading } from '../../src/modules/auth/along.ts';
import { CLIENT_SUBJECT, type TokenClaims } from '../../src/modules/auth/auth.schemas.ts';
import { servedByRequery, verificationOfOrgQuery } from '../../src/modules/verification/verification.repository.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// A requery that returns a record is on the audit trail before the record leaves. The statement that
// reads the principal and the row also appends that event when SQL can tell the record is served to
// an admitted principal (auth/along.ts); otherwise the route appends it. Either way: one event per
// 200, none for anything else.

let stack: Stack;
const RATE_LIMIT = 30;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { RATE_LIMIT_PER_TOKEN: String(RATE_LIMIT), TRUST_PROXY: 'loopback' } });
});
afterAll(async () => stack?.close());

const fixture = async (token: string) => {
  const r = await stack.api('POST', '/v1/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' } });
  expect(r.status).toBe(200);
  return r.body.data.reference_id as string;
};
const userId = async (token: string) => (await stack.api('GET', '/v1/me', { token })).body.id as number;
const requeried = async (target: string) =>
  stack.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM audit_events WHERE action = 'verification.requeried' AND target = ${target}`);
const requery = (token: string, ref: string, headers?: Record<string, string>) => stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref }, ...(headers ? { headers } : {}) });
async function apiClient(org: OrgFixture, extra: Record<string, unknown>, from?: string) {
  const made = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: `Reader ${Math.random()}`, role: 'member', ...extra } });
  expect(made.status).toBe(201);
  const grant = await stack.api('POST', '/v1/login', {
    form: { grant_type: 'client_credentials', client_id: made.body.client_id, client_secret: made.body.client_secret },
    ...(from ? { headers: { 'x-forwarded-for': from } } : {}),
  });
  expect(grant.status).toBe(200);
  return { clientId: made.body.client_id as string, token: grant.body.access_token as string };
}

describe('The requery read records its own audit event', () => {
  it('When readings of every kind share a statement, then exactly those served to an admitted principal are recorded by it, each with its own fields, and the chain holds', async () => {
    const [a, b, c, d, e] = [await stack.createOrg(), await stack.createOrg(), await stack.createOrg(), await stack.createOrg(), await stack.createOrg()];
    const refs = { a: await fixture(a.member.token), b: await fixture(b.member.token), c: await fixture(c.member.token), d: await fixture(d.admin.token), e: await fixture(e.member.token) };
    const plain = await apiClient(a, {});
    const fenced = await apiClient(a, { allowed_ips: ['203.0.113.0/24'] }, '203.0.113.9');
    const expired = await apiClient(a, {});
    const ids = { a: await userId(a.member.token), b: await userId(b.member.token), c: await userId(c.member.token), d: await userId(d.admin.token), e: await userId(e.member.token) };
    // Each refusal the row decides, made in the database after the tokens were issued.
    expect((await stack.api('PATCH', `/v1/team/${ids.b}`, { token: b.admin.token, json: { disabled: true } })).status).toBe(200);
    await stack.db.query(sql.unsafe`UPDATE users SET must_change_password = true WHERE id = ${ids.c}`);
    await stack.db.query(sql.unsafe`UPDATE organisations SET require_mfa = true WHERE id = ${d.orgId}`);
    await stack.db.query(sql.unsafe`UPDATE api_clients SET expires_at = now() - interval '1 minute' WHERE client_id = ${expired.clientId}`);
    await stack.db.query(sql.unsafe`UPDATE verifications SET expires_at = now() - interval '1 minute' WHERE reference_id = ${refs.e}`);

    const now = Math.floor(Date.now() / 1000);
    const claims = (sub: string, org: number, role: TokenClaims['role'], ver = 0): TokenClaims => ({ sub, org, role, ver, jti: `jti-${Math.random()}`, iat: now, exp: now + 600 }) as TokenClaims;
    const reading = (cl: TokenClaims, key: string, may = true, withEvent = true): Reading => ({
      c: cl,
      key,
      ...(withEvent
        ? { event: { fields: withinOrigin({ requestId: `req-${key}-${Math.random()}`.slice(0, 40), ip: '192.0.2.1' }, () => canonicalOf({ orgId: cl.org, actor: cl.sub.startsWith(CLIENT_SUBJECT) ? `client:${cl.sub.slice(CLIENT_SUBJECT.length)}` : `user:${Number(cl.sub)}`, action: 'verification.requeried', target: key })), may, now: new Date() } }
        : {}),
    });
    const member = claims(String(ids.a), a.orgId, 'member');
    const cases: [string, Reading, boolean][] = [
      ['an admitted member, her own record', reading(member, refs.a), true],
      ['an admitted member, another organisation\'s reference', reading(member, refs.b), false],
      ['an admitted member, no event asked', reading(member, refs.a, true, false), false],
      ['the claims refuse it (an API client\'s scope)', reading(member, refs.a, false), false],
      ['a token of an older password (token version)', reading(claims(String(ids.a), a.orgId, 'member', 7), refs.a), false],
      ['a token claiming another role', reading(claims(String(ids.a), a.orgId, 'org_admin'), refs.a), false],
      ['a disabled member', reading(claims(String(ids.b), b.orgId, 'member'), refs.b), false],
      ['a member who must change her password', reading(claims(String(ids.c), c.orgId, 'member'), refs.c), false],
      ['an administrator who must enrol in two-factor sign-in', reading(claims(String(ids.d), d.orgId, 'org_admin'), refs.d), false],
      ['a record past its retention', reading(claims(String(ids.e), e.orgId, 'member'), refs.e), false],
      ['an API client without an address list', reading(claims(`${CLIENT_SUBJECT}${plain.clientId}`, a.orgId, 'member'), refs.a), true],
      ['an API client with an address list (the code decides the address)', reading(claims(`${CLIENT_SUBJECT}${fenced.clientId}`, a.orgId, 'member'), refs.a), false],
      ['an expired API client', reading(claims(`${CLIENT_SUBJECT}${expired.clientId}`, a.orgId, 'member'), refs.a), false],
      ['a second admitted read in the same statement', reading(member, refs.a), true],
    ];
    const before = { a: await requeried(refs.a), others: await Promise.all([refs.b, refs.c, refs.d, refs.e].map(requeried)) };
    const read = alongReader(stack.db, 'requery_audit_test', (ref, org) => verificationOfOrgQuery(ref, org), { served: servedByRequery(stack.config.encryptionKeys.map((k) => k.id)) });
    const results = await Promise.all(cases.map(([, r]) => read(r)));
    expect(Object.fromEntries(cases.map(([name], i) => [name, results[i]!.recorded]))).toEqual(Object.fromEntries(cases.map(([name, , want]) => [name, want])));

    // Exactly the recorded ones are on the trail, with the fields their readings gave.
    expect(await requeried(refs.a)).toBe(before.a + 3);
    expect(await Promise.all([refs.b, refs.c, refs.d, refs.e].map(requeried))).toEqual(before.others);
    const wanted = cases.filter(([, , want]) => want).map(([, r]) => r.event!.fields.requestId).sort();
    const rows = await stack.db.anyFirst(sql.type(z.object({ request_id: z.string() }))`
      SELECT request_id FROM audit_events WHERE request_id = ANY(${sql.array(wanted as string[], 'text')}) AND actor IS NOT NULL AND ip = '192.0.2.1' AND org_id = ${a.orgId}`);
    expect([...rows].sort()).toEqual(wanted);
    expect((await verifyChain(stack.db)).ok).toBe(true);
  });
});

describe('Requeries over HTTP: one event per record served, none otherwise', () => {
  it('When twenty requeries of one record arrive at once, then each answers 200 and leaves exactly one event, and the chain holds', async () => {
    const org = await stack.createOrg();
    const ref = await fixture(org.member.token);
    const before = await requeried(ref);
    const answers = await Promise.all(Array.from({ length: 20 }, () => requery(org.member.token, ref)));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await requeried(ref)).toBe(before + 20);
    expect((await verifyChain(stack.db)).ok).toBe(true);
  });

  it('When an API client with an address list requeries from inside it, then it gets the record and its read is recorded once (by the route); from outside, 403 and nothing', async () => {
    const org = await stack.createOrg();
    const ref = await fixture(org.member.token);
    const fenced = await apiClient(org, { allowed_ips: ['203.0.113.0/24'] }, '203.0.113.9');
    expect((await requery(fenced.token, ref, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(403);
    expect(await requeried(ref)).toBe(0);
    expect((await requery(fenced.token, ref, { 'x-forwarded-for': '203.0.113.20' })).status).toBe(200);
    expect(await requeried(ref)).toBe(1);
  });

  it('When requeries are refused (a disabled member, a logged-out token, a client without the requery scope, the rate limit) or find no record, then none leaves an event', async () => {
    const org = await stack.createOrg();
    const ref = await fixture(org.admin.token);
    const narrow = await apiClient(org, { scopes: ['verify'] });
    expect((await requery(narrow.token, ref)).status).toBe(403);
    const loggedOut = await stack.login(org.admin.username, org.admin.password);
    expect((await stack.api('POST', '/v1/logout', { token: loggedOut })).status).toBe(204);
    expect((await requery(loggedOut, ref)).status).toBe(401);
    expect((await requery(org.admin.token, 'REF-000000000000')).status).toBe(404);
    const team = await stack.api('GET', '/v1/team', { token: org.admin.token });
    const memberId = team.body.data.find((u: { username: string }) => u.username === org.member.username).id;
    expect((await stack.api('PATCH', `/v1/team/${memberId}`, { token: org.admin.token, json: { disabled: true } })).status).toBe(200);
    expect((await requery(org.member.token, ref)).status).toBe(401);
    expect(await requeried(ref)).toBe(0);

    // A fresh token's budget: RATE_LIMIT answers, then 429 with nothing read or recorded.
    const token = await stack.login(org.admin.username, org.admin.password);
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 2; i++) statuses.push((await requery(token, ref)).status);
    expect(statuses).toEqual([...Array(RATE_LIMIT).fill(200), 429, 429]);
    expect(await requeried(ref)).toBe(RATE_LIMIT);
  });

  it("When a disabled member's token sends more than its limit at once, then every call is refused for the principal (401), none gets 429, and no counter keeps a count", async () => {
    const org = await stack.createOrg();
    const ref = await fixture(org.admin.token);
    const token = await stack.login(org.member.username, org.member.password);
    const team = await stack.api('GET', '/v1/team', { token: org.admin.token });
    const memberId = team.body.data.find((u: { username: string }) => u.username === org.member.username).id;
    expect((await stack.api('PATCH', `/v1/team/${memberId}`, { token: org.admin.token, json: { disabled: true } })).status).toBe(200);
    const redis = new Redis(stack.config.REDIS_URL);
    try {
      const count = async (key: string) => Number((await redis.get(`${stack.config.REDIS_PREFIX}:rl:${key}`)) ?? 0);
      const orgBefore = await count(`org:${org.orgId}`);
      const answers = await Promise.all(Array.from({ length: RATE_LIMIT * 2 }, () => requery(token, ref)));
      expect(answers.map((r) => r.status)).toEqual(Array(RATE_LIMIT * 2).fill(401));
      expect(await count(`org:${org.orgId}`)).toBe(orgBefore);
      const jti = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).jti as string;
      expect(await count(`token:${jti}`)).toBe(0);
      expect(await requeried(ref)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });
});
