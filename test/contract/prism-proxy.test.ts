import { readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Secret, TOTP } from 'otpauth';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/modules/organisations/index.ts';
import { buildOpenApiDocument } from '../../src/api-document/document.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { freePort } from '../setup/npm-start.ts';
import { openPage, submitPage } from '../setup/links.ts';
import { until, waitFor } from '../setup/wait.ts';

/*
 * The contract as a strict client reads it. A Prism validating proxy
 * (@stoplight/prism-cli, `prism proxy --errors`) stands between this client and the service, and
 * checks every answer against the OpenAPI document the service serves. The driver below calls every
 * operation of the document at least once, on success and error paths; the test fails if an
 * operation was not driven, or if Prism reports a single response violation.
 *
 * To drive a new field or a new operation, add it to its step below: each operation is one entry of
 * DRIVE, each request one line.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PRISM = join(ROOT, 'node_modules/@stoplight/prism-cli/dist/index.js');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const SECRET = 'sk_test_harness_secret';

type Call = { token?: string; json?: unknown; form?: Record<string, string | number>; raw?: string; contentType?: string; headers?: Record<string, string> };
type Seen = { op: string; url: string; status: number; body: any; text: string; headers: Headers };

let stack: Stack;
let prism: ChildProcess | undefined;
let prismUrl = '';
let prismLog = '';
let dir = '';
/** Every operation of the document, as `POST /verify-nin`, with the document's own path (its server base added). */
let operations: { key: string; path: string }[] = [];
const driven = new Map<string, number[]>();
const violations: string[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { IDENTITY_MAX_ATTEMPTS: '1' }, face: true });
  const doc = (await (await fetch(`${stack.url}/openapi.json`)).json()) as {
    servers: { url: string }[];
    paths: Record<string, Record<string, { servers?: { url: string }[] }>>;
  };
  // Prism matches request paths against the document's paths; the path of each server (`/v1`, or none
  // for the probes; the servers are absolute, under PUBLIC_BASE_URL) is folded into each path so that
  // the proxy forwards /v1/... exactly as a client sends it, to this stack's own address.
  const pathOf = (url: string) => new URL(url).pathname;
  const base = pathOf(doc.servers[0]!.url);
  const paths: typeof doc.paths = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    const own = Object.values(item).find((op) => op && typeof op === 'object' && 'servers' in op)?.servers?.[0]?.url;
    const full = `${(own ? pathOf(own) : base).replace(/\/$/, '')}${path}`;
    paths[full] = Object.fromEntries(Object.entries(item).map(([k, v]) => [k, (METHODS as readonly string[]).includes(k) ? { ...v, servers: undefined } : v]));
    for (const m of METHODS) if (item[m]) operations.push({ key: `${m.toUpperCase()} ${path}`, path: full });
  }
  dir = mkdtempSync(join(tmpdir(), 'prism-contract-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify({ ...doc, servers: undefined, paths }));
  const port = await freePort();
  prism = spawn(
    process.execPath,
    [PRISM, 'proxy', file, stack.url, '--errors', '--port', String(port), '--host', '127.0.0.1', '--cors', 'false', '--validate-request', 'false', '-v', 'warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prism.stdout!.on('data', (d: Buffer) => (prismLog += d.toString()));
  prism.stderr!.on('data', (d: Buffer) => (prismLog += d.toString()));
  prismUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (prism!.exitCode !== null) throw new Error(`prism exited: ${prismLog}`);
      return fetch(`${prismUrl}/healthz`).then(
        () => true,
        () => false,
      );
    },
    { what: 'Prism to listen', timeoutMs: 60_000, intervalMs: 200 },
  );
}, 120_000);

afterAll(async () => {
  if (prism && prism.exitCode === null) {
    const exited = new Promise((resolve) => prism!.once('exit', resolve));
    prism.kill('SIGTERM');
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  await stack?.close();
});

/** One request through Prism. `op` is the document's operation (`GET /verify-nin/batches/{id}`); `path` the concrete path under /v1. */
async function call(op: string, path: string, c: Call = {}): Promise<Seen> {
  const headers: Record<string, string> = { ...c.headers };
  let body: string | undefined;
  if (c.token) headers.authorization = `Bearer ${c.token}`;
  if (c.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(c.json);
  } else if (c.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(Object.entries(c.form).map(([k, v]) => [k, String(v)] as [string, string])).toString();
  } else if (c.raw !== undefined) {
    headers['content-type'] = c.contentType ?? 'text/plain';
    body = c.raw;
  }
  // The operation's server base (`/v1`, or `/` for the probes), as the document gives it.
  const known = operations.find((o) => o.key === op);
  if (!known) throw new Error(`${op} is not an operation of the document`);
  const url = `${known.path.slice(0, known.path.length - op.split(' ')[1]!.length)}${path}`;
  const res = await fetch(`${prismUrl}${url}`, { method: op.split(' ')[0], headers, body });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (a PDF, a CSV): the text is the body.
  }
  const seen: Seen = { op, url, status: res.status, body: parsed, text, headers: res.headers };
  driven.set(op, [...(driven.get(op) ?? []), res.status]);
  // Prism lists what broke the document in sl-violations (request ones are ignored: error paths send
  // wrong requests on purpose); with --errors, a response violation of error severity becomes its own
  // problem+json answer instead of the service's.
  const listed = res.headers.get('sl-violations');
  if (listed) {
    const all = JSON.parse(listed.replace(/^Too many violations! /, '')) as { location: string[]; message: string; severity: string }[];
    for (const v of all.filter((x) => x.location[0] === 'response')) violations.push(`${op} (${url}) -> ${res.status}: ${v.location.join('.')} ${v.message} [${v.severity}]`);
  }
  if (res.headers.get('content-type')?.startsWith('application/problem+json') && typeof parsed?.type === 'string' && parsed.type.includes('stoplight.io/prism')) {
    violations.push(`${op} (${url}) -> Prism ${res.status}: ${parsed.title}: ${parsed.detail} ${JSON.stringify(parsed.validation ?? '')}`);
  }
  return seen;
}

/** Answers that were not the status the driver meant to provoke (so a path meant to succeed really did); asserted at the end. */
const surprises: string[] = [];
function expectStatus(r: Seen, status: number | number[]): Seen {
  const ok = Array.isArray(status) ? status : [status];
  if (!ok.includes(r.status)) surprises.push(`${r.op} (${r.url}) answered ${r.status}, expected ${ok.join(' or ')}: ${r.text.slice(0, 300)}`);
  return r;
}

const codeAt = (secret: string, at: Date) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });
const sign = (body: string) => createHmac('sha512', SECRET).update(body).digest('hex');

async function person(org: OrgFixture, role: 'org_admin' | 'member', suffix: string) {
  const u = { username: `${role}-${suffix}-${org.orgId}@example.com`, password: `pw-${suffix}-long-enough` };
  await createUser(stack.db, { orgId: org.orgId, ...u, role, requirePasswordChange: false });
  return { ...u, token: await stack.login(u.username, u.password) };
}

describe('every operation through a Prism validating proxy', () => {
  it('When every operation of the document is driven through Prism (success and error paths), then no answer violates the document', async () => {
    const org = await stack.createOrg({ units: 50 });
    const other = await stack.createOrg({ units: 0 });
    const consent = { obtained_at: new Date(Date.now() - 60_000).toISOString(), channel: 'web', notice_version: 'privacy-2026-03' };

    // ---- authentication and the account ----
    expectStatus(await call('POST /login', '/login', { form: { username: org.admin.username, password: org.admin.password } }), 200);
    expectStatus(await call('POST /login', '/login', { form: { username: org.admin.username, password: 'wrong' } }), 401);
    expectStatus(await call('GET /me', '/me', { token: org.admin.token }), 200);
    expectStatus(await call('GET /me', '/me', { token: org.member.token }), 200);
    // Prism answers a request without credentials itself; an invalid token reaches the service.
    expectStatus(await call('GET /me', '/me', { token: 'not-a-token' }), 401);
    expectStatus(await call('GET /meorganisation', '/meorganisation', { token: org.admin.token }), 200);

    const mfaUser = await person(org, 'member', 'mfa');
    const enrol = expectStatus(await call('POST /me/mfa/totp', '/me/mfa/totp', { token: mfaUser.token }), [200, 201]);
    expectStatus(await call('POST /me/mfa/totp/confirm', '/me/mfa/totp/confirm', { token: mfaUser.token, json: { code: '000000' === codeAt(enrol.body.secret, new Date()) ? '111111' : '000000' } }), 400);
    const confirmed = expectStatus(await call('POST /me/mfa/totp/confirm', '/me/mfa/totp/confirm', { token: mfaUser.token, json: { code: codeAt(enrol.body.secret, new Date()) } }), 200);
    const recovery = confirmed.body.recovery_codes as string[];
    // Turning two-factor on ended the user's tokens: sign in again with a recovery code.
    const relogin = async (otp: string) => {
      const r = expectStatus(await call('POST /login', '/login', { form: { username: mfaUser.username, password: mfaUser.password, ...(otp ? { otp } : {}) } }), 200);
      mfaUser.token = r.body.access_token as string;
    };
    await relogin(recovery[0]!);
    expectStatus(await call('POST /me/mfa/totp', '/me/mfa/totp', { token: mfaUser.token }), 409);
    // The body of a disabling request in one place: a field added to it later is one line here.
    const mfaDisable = (code: string) => ({ code, current_password: mfaUser.password });
    expectStatus(await call('DELETE /me/mfa/totp', '/me/mfa/totp', { token: mfaUser.token, json: {} }), [400, 422]);
    expectStatus(await call('DELETE /me/mfa/totp', '/me/mfa/totp', { token: mfaUser.token, json: mfaDisable(recovery[1]!) }), 204);
    // Turning it off ended them again.
    await relogin('');

    const pwUser = await person(org, 'member', 'pw');
    expectStatus(await call('POST /change-password', '/change-password', { token: pwUser.token, json: { current_password: 'not-it-at-all', new_password: 'another-long-password-1' } }), [400, 401]);
    expectStatus(await call('POST /change-password', '/change-password', { token: pwUser.token, json: { current_password: pwUser.password, new_password: 'another-long-password-1' } }), 200);
    expectStatus(await call('POST /change-password', '/change-password', { token: pwUser.token, json: {} }), [401, 422]);

    expectStatus(await call('POST /forgot-password', '/forgot-password', { json: { username: org.member.username } }), 202);
    expectStatus(await call('POST /forgot-password', '/forgot-password', { json: {} }), 422);
    expectStatus(await call('POST /reset-password', '/reset-password', { json: { token: 'not-a-token', new_password: 'a-new-long-password-2' } }), 400);
    expectStatus(await call('POST /reset-password', '/reset-password', { json: { token: 'abc' } }), 422);

    // ---- API clients, team, settings ----
    const client = expectStatus(await call('POST /api-clients', '/api-clients', { token: org.admin.token, json: { name: 'Contract server', role: 'member' } }), 201).body;
    expectStatus(await call('POST /api-clients', '/api-clients', { token: org.admin.token, json: { name: 'No role' } }), 422);
    expectStatus(await call('POST /api-clients', '/api-clients', { token: org.member.token, json: { name: 'Nope', role: 'member' } }), 403);
    expectStatus(await call('GET /api-clients', '/api-clients', { token: org.admin.token }), 200);
    expectStatus(await call('POST /login', '/login', { form: { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret } }), 200);
    expectStatus(await call('POST /api-clients/{client_id}/rotate', `/api-clients/${client.client_id}/rotate`, { token: org.admin.token }), 200);
    expectStatus(await call('POST /api-clients/{client_id}/rotate', '/api-clients/nope/rotate', { token: org.admin.token }), 404);
    expectStatus(await call('POST /api-clients/{client_id}/adopt', `/api-clients/${client.client_id}/adopt`, { token: org.admin.token }), 200);
    expectStatus(await call('POST /api-clients/{client_id}/adopt', '/api-clients/nope/adopt', { token: org.admin.token }), 404);
    expectStatus(await call('DELETE /api-clients/{client_id}', `/api-clients/${client.client_id}`, { token: org.admin.token }), 204);
    expectStatus(await call('DELETE /api-clients/{client_id}', `/api-clients/${client.client_id}`, { token: org.admin.token }), 404);

    expectStatus(await call('GET /team', '/team', { token: org.admin.token }), 200);
    expectStatus(await call('GET /team', '/team', { token: org.member.token }), 403);
    // Retired: users are made by invitation (below) or by the operator's user:create.
    expectStatus(await call('POST /team', '/team', { token: org.admin.token, json: { username: `mate-${org.orgId}`, email: 'mate@example.com', role: 'member' } }), 410);
    const mate = await stack.addUser(org.orgId, { role: 'member', username: `mate-${org.orgId}` });
    expectStatus(await call('PATCH /team/{id}', `/team/${mate.id}`, { token: org.admin.token, json: { disabled: true } }), 200);
    expectStatus(await call('PATCH /team/{id}', '/team/999999', { token: org.admin.token, json: { disabled: true } }), 404);
    const invitation = { username: `invitee-${org.orgId}`, email: 'invitee@example.com', role: 'finance' };
    const invited = expectStatus(await call('POST /team/invitations', '/team/invitations', { token: org.admin.token, json: invitation }), 201).body;
    expectStatus(await call('POST /team/invitations', '/team/invitations', { token: org.admin.token, json: invitation }), 409);
    expectStatus(await call('POST /team/invitations', '/team/invitations', { token: org.member.token, json: invitation }), 403);
    expectStatus(await call('GET /team/invitations', '/team/invitations', { token: org.admin.token }), 200);
    expectStatus(await call('DELETE /team/invitations/{id}', `/team/invitations/${invited.id}`, { token: org.admin.token }), 200);
    expectStatus(await call('DELETE /team/invitations/{id}', `/team/invitations/${invited.id}`, { token: org.admin.token }), 404);
    // The e-mailed token is sealed in the outbox: an invitation with a token of the driver's own.
    const inviteToken = 'contract-invitation-token-0123456789abcdefghij';
    await stack.db.query(sql.unsafe`
      INSERT INTO invitations (org_id, email, username, role, token_hash, invited_by, created_at, expires_at)
      VALUES (${org.orgId}, 'joiner@example.com', ${`joiner-${org.orgId}`}, 'member', ${sql.binary(createHash('sha256').update(inviteToken).digest())},
              (SELECT id FROM users WHERE username = ${org.admin.username}), now(), now() + interval '1 hour')`);
    expectStatus(await call('POST /invitations/preview', '/invitations/preview', { json: { token: inviteToken } }), 200);
    expectStatus(await call('POST /invitations/accept', '/invitations/accept', { json: { token: inviteToken, password: 'joiner-password-1' } }), 201);
    expectStatus(await call('POST /invitations/preview', '/invitations/preview', { json: { token: inviteToken } }), 400);
    expectStatus(await call('POST /invitations/accept', '/invitations/accept', { json: { token: inviteToken, password: 'joiner-password-1' } }), 400);

    // ---- webhook endpoints: the receiver is the identity simulator's sandbox hook ----
    const hookUrl = `${stack.identitySim.url}/sandbox/hooks/contract-${org.orgId}`;
    const hook = expectStatus(await call('POST /webhook-endpoints', '/webhook-endpoints', { token: org.admin.token, json: { url: hookUrl, events: ['ping'], description: 'contract' } }), 201).body;
    expectStatus(await call('POST /webhook-endpoints', '/webhook-endpoints', { token: org.admin.token, json: { url: 'ftp://example.com/hook', events: ['ping'] } }), 400);
    expectStatus(await call('POST /webhook-endpoints', '/webhook-endpoints', { token: org.member.token, json: { url: hookUrl, events: ['ping'] } }), 403);
    expectStatus(await call('GET /webhook-endpoints', '/webhook-endpoints', { token: org.admin.token }), 200);
    expectStatus(await call('GET /webhook-endpoints/{id}', `/webhook-endpoints/${hook.id}`, { token: org.admin.token }), 200);
    expectStatus(await call('GET /webhook-endpoints/{id}', '/webhook-endpoints/we_000000000000000000000000', { token: org.admin.token }), 404);
    expectStatus(await call('PATCH /webhook-endpoints/{id}', `/webhook-endpoints/${hook.id}`, { token: org.admin.token, json: { description: 'contract receiver' } }), 200);
    expectStatus(await call('PATCH /webhook-endpoints/{id}', `/webhook-endpoints/${hook.id}`, { token: org.admin.token, json: { events: ['no.such.event'] } }), 400);
    expectStatus(await call('POST /webhook-endpoints/{id}/rotate-secret', `/webhook-endpoints/${hook.id}/rotate-secret`, { token: org.admin.token }), 200);
    expectStatus(await call('POST /webhook-endpoints/{id}/test', `/webhook-endpoints/${hook.id}/test`, { token: org.admin.token }), 202);
    const deliveries = expectStatus(await call('GET /webhook-endpoints/{id}/deliveries', `/webhook-endpoints/${hook.id}/deliveries`, { token: org.admin.token }), 200).body;
    expectStatus(await call('POST /webhook-endpoints/deliveries/{delivery_id}/redeliver', `/webhook-endpoints/deliveries/${deliveries.data[0].id}/redeliver`, { token: org.admin.token }), 202);
    expectStatus(await call('POST /webhook-endpoints/deliveries/{delivery_id}/redeliver', '/webhook-endpoints/deliveries/999999999/redeliver', { token: org.admin.token }), 404);
    expectStatus(await call('DELETE /webhook-endpoints/{id}', `/webhook-endpoints/${hook.id}`, { token: org.admin.token }), 204);
    expectStatus(await call('DELETE /webhook-endpoints/{id}', `/webhook-endpoints/${hook.id}`, { token: org.admin.token }), 404);

    // ---- verification links: one submission on the page (outside the document) first ----
    const link = expectStatus(await call('POST /verification-links', '/verification-links', { token: org.admin.token, json: { reason: 'corporate', purpose: 'Contract check', require_face: false, client_ref: 'contract' } }), 201).body;
    expectStatus(await call('POST /verification-links', '/verification-links', { token: org.admin.token, json: { reason: 'corporate', purpose: 'Contract check', max_uses: 0 } }), 400);
    expectStatus(await call('POST /verification-links', '/verification-links', { token: org.admin.token, json: { purpose: 'Contract check' } }), 422);
    expectStatus(await call('POST /verification-links', '/verification-links', { token: org.member.token, json: { reason: 'corporate', purpose: 'Contract check' } }), 403);
    const linkPage = await openPage(stack, link.url);
    expect((await submitPage(stack, link.url, { csrf: linkPage.csrf, vnin: 'AA000000000001ZZ' })).status).toBe(200);
    expectStatus(await call('GET /verification-links', '/verification-links', { token: org.admin.token }), 200);
    const linkSubmissions = expectStatus(await call('GET /verification-links/{id}', `/verification-links/${link.id}`, { token: org.admin.token }), 200).body.submissions;
    expect(linkSubmissions).toHaveLength(1);
    expectStatus(await call('GET /verification-links/{id}', '/verification-links/LNK-000000000000', { token: org.admin.token }), 404);
    expectStatus(await call('POST /verification-links/{id}/revoke', `/verification-links/${link.id}/revoke`, { token: org.admin.token }), 200);
    expectStatus(await call('POST /verification-links/{id}/revoke', `/verification-links/${link.id}/revoke`, { token: org.admin.token }), 409);
    expectStatus(await call('POST /verification-links/{id}/revoke', '/verification-links/LNK-000000000000/revoke', { token: org.admin.token }), 404);

    expectStatus(await call('GET /me/organisation', '/me/organisation', { token: org.member.token }), 200);
    expectStatus(await call('PATCH /me/organisation', '/me/organisation', { token: org.admin.token, json: { require_consent: false } }), 200);
    expectStatus(await call('PATCH /me/organisation', '/me/organisation', { token: org.admin.token, json: { require_consent: 'yes' } }), 422);

    // Automatic top-up: read, set (off: no saved card is needed), a wrong password, a bad value, a member.
    expectStatus(await call('GET /settings/auto-topup', '/settings/auto-topup', { token: org.admin.token }), 200);
    const auto = { enabled: false, below_units: 10, units: 1000, max_per_day: 1, password: org.admin.password };
    expectStatus(await call('PUT /settings/auto-topup', '/settings/auto-topup', { token: org.admin.token, json: auto }), 200);
    expectStatus(await call('PUT /settings/auto-topup', '/settings/auto-topup', { token: org.admin.token, json: { ...auto, password: `${org.admin.password}-wrong` } }), 403);
    expectStatus(await call('PUT /settings/auto-topup', '/settings/auto-topup', { token: org.admin.token, json: { ...auto, max_per_day: 0 } }), 400);
    expectStatus(await call('PUT /settings/auto-topup', '/settings/auto-topup', { token: org.member.token, json: auto }), 403);

    // ---- verification (every requery answer, however the verification was made) ----
    const token = org.member.token;
    const found = expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate', consent } }), 200).body.data.reference_id as string;
    expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '12345678902', reason: 'corporate' } }), 200);
    expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '31415926535', reason: 'corporate' } }), 200);
    expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '99999999999', reason: 'corporate' } }), 404);
    expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '123', reason: 'corporate' } }), 400);
    expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { reason: 'corporate' } }), 422);
    expectStatus(await call('POST /verify-nin', '/verify-nin', { token: other.member.token, json: { nin: '31415926536', reason: 'corporate' } }), 402);
    const asyncFound = expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' }, headers: { Prefer: 'respond-async' } }), 202).body.reference_id as string;
    const asyncMissing = expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '99999999999', reason: 'corporate' }, headers: { Prefer: 'respond-async' } }), 202).body.reference_id as string;
    const idem = { 'Idempotency-Key': `contract-${org.orgId}` };
    expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' }, headers: idem }), 200);
    expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' }, headers: idem }), 200);
    expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '12345678902', reason: 'corporate' }, headers: idem }), 409);

    expectStatus(await call('POST /verify-nin/vnin', '/verify-nin/vnin', { token, json: { vnin: 'AA000000000001ZZ', reason: 'corporate' } }), 200);
    expectStatus(await call('POST /verify-nin/vnin', '/verify-nin/vnin', { token, json: { vnin: 'AA000000000009ZZ', reason: 'corporate' } }), 404);
    expectStatus(await call('POST /verify-nin/vnin', '/verify-nin/vnin', { token, json: { vnin: 'short', reason: 'corporate' } }), 400);
    expectStatus(await call('GET /verify-nin/vnin/instructions', '/verify-nin/vnin/instructions', { token }), 200);

    expectStatus(await call('POST /verify-nin/phone', '/verify-nin/phone', { token, json: { phone_no: '08031234567', reason: 'telecommunicationSimReg' } }), 200);
    expectStatus(await call('POST /verify-nin/phone', '/verify-nin/phone', { token, json: { phone_no: '07234567890', reason: 'corporate' } }), 404);
    expectStatus(await call('POST /verify-nin/phone', '/verify-nin/phone', { token, json: { phone_no: '0803', reason: 'corporate' } }), 400);
    expectStatus(await call('POST /verify-nin/demography', '/verify-nin/demography', { token, json: { first_name: 'Ada', last_name: 'Okafor', date_of_birth: '14-03-1991', gender: 'F' } }), [200, 404]);
    expectStatus(await call('POST /verify-nin/demography', '/verify-nin/demography', { token, json: { first_name: 'Ada', last_name: 'Okafor', date_of_birth: '31-02-1991', gender: 'F' } }), 400);

    const matchBody = { nin: '12345678901', reason: 'corporate', fname: 'adaeze', lname: 'OKONKWO', dob: '14-03-1991', gender: 'f' };
    const matched = expectStatus(await call('POST /verify-nin/match', '/verify-nin/match', { token, json: matchBody }), 200).body.data.reference_id as string;
    const asyncMatch = expectStatus(await call('POST /verify-nin/match', '/verify-nin/match', { token, json: matchBody, headers: { Prefer: 'respond-async' } }), 202).body.reference_id as string;
    expectStatus(await call('POST /verify-nin/match', '/verify-nin/match', { token, json: { ...matchBody, nin: '99999999999' } }), 404);
    expectStatus(await call('POST /verify-nin/match', '/verify-nin/match', { token, json: { reason: 'corporate' } }), 422);

    // The face match, on the fixture with a real portrait (its selfie from the simulator's files).
    const selfie = readFileSync('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg').toString('base64');
    const faceBody = { nin: '12345678903', reason: 'corporate', selfie, consent: { obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'v1' } };
    const faced = expectStatus(await call('POST /verify-nin/face', '/verify-nin/face', { token, json: faceBody }), 200).body.data.reference_id as string;
    expectStatus(await call('POST /verify-nin/face', '/verify-nin/face', { token, json: { ...faceBody, match_only: true } }), 200);
    expectStatus(await call('POST /verify-nin/face', '/verify-nin/face', { token, json: { ...faceBody, nin: '99999999999' } }), 404);
    expectStatus(await call('POST /verify-nin/face', '/verify-nin/face', { token, json: { ...faceBody, selfie: Buffer.from('not an image').toString('base64') } }), 422);
    expectStatus(await call('POST /verify-nin/face', '/verify-nin/face', { token, json: { ...faceBody, consent: undefined } }), 400);

    // A liveness check in place of the selfie (the sandbox's synthetic frames): passed, used, failed.
    const lv = (name: string) => readFileSync(`src/simulators/identity-authority/faces/liveness/grace-hopper/${name}.jpg`).toString('base64');
    const framesFor = (challenges: string[], still: boolean) =>
      [['front', 'front'], ...challenges.flatMap((c) => (still ? [[c, `still-${c}`]] : [[c, `${c}-mid`], [c, c]]))].map(([step, name], i) => ({ step, image: lv(name!), captured_at_ms: 1000 + i * 400 }));
    const session = expectStatus(await call('POST /liveness/sessions', '/liveness/sessions', { token }), 201).body as { id: string; challenges: string[] };
    expectStatus(await call('GET /liveness/sessions/{id}', `/liveness/sessions/${session.id}`, { token }), 200);
    expectStatus(await call('GET /liveness/sessions/{id}', '/liveness/sessions/lvs_000000000000000000000000', { token }), 404);
    const livenessBody = { ...faceBody, selfie: undefined, liveness: { session_id: session.id, frames: framesFor(session.challenges, false) } };
    expectStatus(await call('POST /verify-nin/face', '/verify-nin/face', { token, json: livenessBody }), 200);
    expectStatus(await call('POST /verify-nin/face', '/verify-nin/face', { token, json: livenessBody }), 409);
    const failing = expectStatus(await call('POST /liveness/sessions', '/liveness/sessions', { token }), 201).body as { id: string; challenges: string[] };
    expectStatus(await call('POST /verify-nin/face', '/verify-nin/face', { token, json: { ...livenessBody, liveness: { session_id: failing.id, frames: framesFor(failing.challenges, true) } } }), 422);
    expectStatus(await call('POST /verify-nin/face', '/verify-nin/face', { token, json: { ...livenessBody, liveness: { session_id: 'lvs_000000000000000000000000', frames: framesFor(failing.challenges, true) } } }), 404);

    // A face match carries the person's consent: its consent receipt (another reference's: 404).
    expectStatus(await call('GET /verifications/{reference_id}/receipt', `/verifications/${faced}/receipt`, { token }), 200);
    expectStatus(await call('GET /verifications/{reference_id}/receipt', '/verifications/REF-000000000000/receipt', { token }), 404);

    const requery = (reference_id: string) => call('POST /verify-nin/requery', '/verify-nin/requery', { token, json: { reference_id } });
    for (const ref of [found, asyncFound, matched, asyncMatch, faced]) expectStatus(await requery(ref), 200);
    expectStatus(await requery(asyncMissing), 404);
    expectStatus(await requery('REF-000000000000'), 404);
    expectStatus(await requery('nope'), 400);
    expectStatus(await call('POST /verify-nin/requery', '/verify-nin/requery', { token, json: {} }), 422);
    expectStatus(await call('POST /verify-nin/requery', '/verify-nin/requery', { token, raw: 'x', contentType: 'text/plain' }), 415);

    expectStatus(await call('GET /verify-nin/slip/{reference_id}', `/verify-nin/slip/${found}`, { token }), 200);
    expectStatus(await call('GET /verify-nin/slip/{reference_id}', `/verify-nin/slip/${matched}`, { token }), 404);
    expectStatus(await call('GET /verify-nin/slip/{reference_id}', '/verify-nin/slip/nope', { token }), 400);

    // ---- batches (a batch that is not paused) ----
    const batch = expectStatus(
      await call('POST /verify-nin/batches', '/verify-nin/batches', { token, json: { reason: 'corporate', rows: [{ nin: '12345678901', client_ref: 'a' }, { nin: 'bad' }, { nin: '99999999999' }] } }),
      202,
    ).body.id as string;
    expectStatus(await call('POST /verify-nin/batches', '/verify-nin/batches?reason=corporate', { token, raw: 'nin,client_ref\n12345678902,b\n', contentType: 'text/csv' }), 202);
    expectStatus(await call('POST /verify-nin/batches', '/verify-nin/batches', { token, json: { rows: [] } }), 422);
    await until(
      () => call('GET /verify-nin/batches/{id}', `/verify-nin/batches/${batch}`, { token }),
      (r) => r.body?.status === 'completed',
      30_000,
    );
    expectStatus(await call('GET /verify-nin/batches/{id}', `/verify-nin/batches/${batch}`, { token }), 200);
    expectStatus(await call('GET /verify-nin/batches/{id}', '/verify-nin/batches/BAT-000000000000', { token }), 404);
    expectStatus(await call('GET /verify-nin/batches', '/verify-nin/batches', { token }), 200);
    expectStatus(await call('GET /verify-nin/batches', '/verify-nin/batches?limit=0', { token }), [400, 422]);
    expectStatus(await call('GET /verify-nin/batches/{id}/results', `/verify-nin/batches/${batch}/results`, { token, headers: { accept: 'application/json' } }), 200);
    expectStatus(await call('GET /verify-nin/batches/{id}/results', `/verify-nin/batches/${batch}/results`, { token, headers: { accept: 'text/csv' } }), 200);
    expectStatus(await call('GET /verify-nin/batches/{id}/results', '/verify-nin/batches/BAT-000000000000/results', { token }), 404);
    expectStatus(await call('POST /verify-nin/batches/{id}/cancel', `/verify-nin/batches/${batch}/cancel`, { token }), [200, 409]);
    expectStatus(await call('POST /verify-nin/batches/{id}/cancel', '/verify-nin/batches/BAT-000000000000/cancel', { token }), 404);

    expectStatus(await call('GET /nimc-reasons', '/nimc-reasons', { token }), 200);
    expectStatus(await call('GET /upstream-reasons', '/upstream-reasons', { token }), 200);
    expectStatus(await call('GET /upstream-reasons', '/upstream-reasons', { token: 'not-a-token' }), 401);

    // ---- top-ups and the processor's notification ----
    const admin = org.admin.token;
    expectStatus(await call('GET /topup/quote', '/topup/quote?units=100', { token: admin }), 200);
    expectStatus(await call('GET /topup/quote', '/topup/quote?units=150', { token: admin }), 400);
    const topup = expectStatus(await call('POST /topup/initialize', '/topup/initialize', { token: admin, form: { units: 100 } }), 200).body;
    expectStatus(await call('POST /topup/initialize', '/topup/initialize', { token: admin, form: { units: 150 } }), 400);
    expectStatus(await call('POST /topup/initialize', '/topup/initialize', { token: org.member.token, form: { units: 100 } }), 403);
    expectStatus(await call('POST /topup/verify', '/topup/verify', { token: admin, form: { reference: topup.reference } }), 400);
    const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${topup.reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(paid.status).toBe(200);
    expectStatus(await call('POST /topup/verify', '/topup/verify', { token: admin, form: { reference: topup.reference } }), 200);
    expectStatus(await call('POST /topup/verify', '/topup/verify', { token: admin, form: { reference: 'TOP-1-0000000000000000' } }), [403, 404]);
    const event = JSON.stringify({ event: 'charge.success', data: { id: 4242, reference: topup.reference, amount: topup.total_amount, currency: 'NGN', status: 'success', paid_at: new Date().toISOString() } });
    expectStatus(await call('POST /webhooks/paystack', '/webhooks/paystack', { raw: event, contentType: 'application/json', headers: { 'x-paystack-signature': sign(event) } }), 200);
    expectStatus(await call('POST /webhooks/paystack', '/webhooks/paystack', { raw: event, contentType: 'application/json', headers: { 'x-paystack-signature': sign(`${event} `) } }), 401);

    // ---- history, ledger, audit ----
    expectStatus(await call('GET /usage/daily', '/usage/daily', { token: admin }), 200);
    expectStatus(await call('GET /usage/daily', '/usage/daily?days=0', { token: admin }), [400, 422]);
    for (const [op, path] of [
      ['GET /transactions', '/transactions'],
      ['GET /topups', '/topups'],
      ['GET /verifications', '/verifications'],
      ['GET /audit-events', '/audit-events'],
    ] as const) {
      expectStatus(await call(op, path, { token: admin }), 200);
      expectStatus(await call(op, path, { token: admin, headers: { accept: 'text/csv' } }), 200);
      expectStatus(await call(op, path, { token: admin, headers: { accept: 'image/png' } }), 406);
      expectStatus(await call(op, `${path}?limit=abc`, { token: admin }), [400, 422]);
    }
    expectStatus(await call('GET /verifications', `/verifications?delivery=async`, { token: admin }), 200);
    expectStatus(await call('GET /topups/{reference}', `/topups/${topup.reference}`, { token: admin }), 200);
    expectStatus(await call('GET /topups/{reference}', '/topups/TOP-1-0000000000000000', { token: admin }), 404);
    expectStatus(await call('GET /topups/{reference}/invoice', `/topups/${topup.reference}/invoice`, { token: admin }), 200);
    expectStatus(await call('GET /topups/{reference}/invoice', '/topups/TOP-1-0000000000000000/invoice', { token: admin }), 404);
    const month = new Date(Date.now() + 3600_000).toISOString().slice(0, 7);
    for (const accept of ['application/json', 'text/csv', 'application/pdf']) {
      expectStatus(await call('GET /statements/{month}', `/statements/${month}`, { token: admin, headers: { accept } }), 200);
    }
    expectStatus(await call('GET /statements/{month}', '/statements/2026-13', { token: admin }), 400);
    expectStatus(await call('GET /statements/{month}', `/statements/${month}`, { token: admin, headers: { accept: 'image/png' } }), 406);

    // ---- platform and operations ----
    const platformUser = { username: `platform-${org.orgId}@example.com`, password: 'pw-platform-long-enough' };
    await createUser(stack.db, { orgId: null, ...platformUser, role: 'platform_admin', requirePasswordChange: false });
    const platform = await stack.login(platformUser.username, platformUser.password);
    expectStatus(await call('GET /platform/organisations', '/platform/organisations', { token: platform }), 200);
    expectStatus(await call('GET /platform/organisations', '/platform/organisations', { token: admin }), 403);
    expectStatus(await call('GET /platform/organisations/{id}', `/platform/organisations/${org.orgId}`, { token: platform }), 200);
    expectStatus(await call('GET /platform/organisations/{id}', '/platform/organisations/999999', { token: platform }), 404);
    expectStatus(await call('GET /healthz', '/healthz'), 200);
    expectStatus(await call('GET /readyz', '/readyz'), 200);
    expectStatus(await call('GET /openapi.json', '/openapi.json'), 200);
    expectStatus(await call('GET /openapi-3.0.json', '/openapi-3.0.json'), 200);

    // ---- a verification that waits and one that failed (last: they upset the authority's circuit) ----
    const waiting = expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '50010000001', reason: 'corporate', consent }, headers: { Prefer: 'respond-async' } }), 202).body.reference_id as string;
    expectStatus(await requery(waiting), 202);
    const failed = expectStatus(await call('POST /verify-nin', '/verify-nin', { token, json: { nin: '50010000002', reason: 'corporate' } }), [502, 503]).body.reference_id as string;
    expectStatus(await requery(failed), [502, 503]);

    // The token is spent last.
    expectStatus(await call('POST /logout', '/logout', { token: mfaUser.token }), 204);
    expectStatus(await call('POST /logout', '/logout', { token: mfaUser.token }), 401);

    const notDriven = operations.map((o) => o.key).filter((k) => !driven.has(k));
    expect(notDriven, 'operations of the document the driver did not call').toEqual([]);
    expect(surprises, 'answers with another status than the driver meant to provoke').toEqual([]);
    expect(violations, `Prism log:\n${prismLog.slice(-4000)}`).toEqual([]);
  }, 110_000);
});

/** Every schema node an operation's responses reach, following $refs (each component once). */
function responseSchemas(doc: any): { where: string; node: any }[] {
  const out: { where: string; node: any }[] = [];
  const seen = new Set<string>();
  const visit = (node: any, where: string): void => {
    if (Array.isArray(node)) return node.forEach((n, i) => visit(n, `${where}[${i}]`));
    if (!node || typeof node !== 'object') return;
    if (typeof node.$ref === 'string') {
      if (seen.has(node.$ref)) return;
      seen.add(node.$ref);
      const target = node.$ref.slice(2).split('/').reduce((n: any, k: string) => n?.[k], doc);
      return visit(target, node.$ref);
    }
    out.push({ where, node });
    for (const [k, v] of Object.entries(node)) if (k !== 'example' && k !== 'examples') visit(v, `${where}.${k}`);
  };
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const m of METHODS) if (item[m]) visit(item[m].responses, `${m.toUpperCase()} ${path} responses`);
  }
  return out;
}

describe('the document as a strict client reads it', () => {
  const doc = buildOpenApiDocument();

  it('When the schemas of every response are followed, then none is closed with additionalProperties: false (answers may gain fields)', () => {
    const closed = responseSchemas(doc).filter((s) => s.node.additionalProperties === false).map((s) => s.where);
    expect(closed).toEqual([]);
  });

  it('When a response schema allows null beside an enumeration, then null is one of the enumerated values', () => {
    const broken = responseSchemas(doc)
      .filter((s) => Array.isArray(s.node.enum) && Array.isArray(s.node.type) && s.node.type.includes('null') && !s.node.enum.includes(null))
      .map((s) => `${s.where}: ${JSON.stringify(s.node)}`);
    expect(broken).toEqual([]);
  });
});
