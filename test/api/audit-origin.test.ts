import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newResetToken } from '../../src/modules/accounts/reset-token.ts';
import { insertResetWithinCap } from '../../src/modules/accounts/resets.repository.ts';
import { verifyChain, type AuditAction } from '../../src/modules/audit/index.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type ApiResponse, type OrgFixture, type Stack } from '../setup/harness.ts';

// Every event a request causes carries that request's id and source address (the audit writer takes
// them from the request's scope, so no caller passes them), and every route that changes state is
// either known to write its event or exempt for a stated reason.

type Exempt = { exempt: string };
const exempt = (why: string): Exempt => ({ exempt: why });

const LOOKUP = exempt('a verification: its own row keeps who asked, the request id and its ledger line (history, not the trail)');
/**
 * Each state-changing route of the API (POST, PUT, PATCH, DELETE), by its path under `/v1` (the same
 * routes answer at `/`, `/portal/api` and `/portal/api/v1`), and the event it writes, or why none.
 * A route in neither this table nor EXEMPT_PREFIXES fails the first test below: decide which.
 */
const STATE_CHANGING: Record<string, AuditAction | AuditAction[] | Exempt> = {
  'POST /login': ['auth.login', 'auth.login_failed'],
  'POST /logout': 'auth.logout',
  'POST /change-password': 'account.password_changed',
  'POST /forgot-password': exempt('answers alike for every name and sets no credential: a reset token is mailed, and the password changes (account.password_reset) only when it is used'),
  'POST /reset-password': 'account.password_reset',
  'POST /me/mfa/totp': 'mfa.enrolment_started',
  'POST /me/mfa/totp/confirm': 'mfa.enabled',
  'DELETE /me/mfa/totp': 'mfa.disabled',
  'POST /team': exempt('retired: answers 410 to everyone and changes nothing (users are made by accepting an invitation, or by the operator\'s user:create, which records team.user_created)'),
  // Disabling or demoting an administrator also suspends the API clients they created: this event is that change.
  'PATCH /team/:id': 'team.user_updated',
  'POST /team/invitations': 'team.invitation_sent',
  'DELETE /team/invitations/:id': 'team.invitation_revoked',
  'POST /invitations/accept': 'team.invitation_accepted',
  'POST /invitations/preview': exempt('reads an invitation by its token (a POST only to keep the token out of URLs) and changes nothing'),
  'PATCH /me/organisation': 'organisation.settings_changed',
  'PUT /settings/auto-topup': 'auto_topup.settings_changed',
  'POST /api-clients': 'api_client.created',
  'POST /webhook-endpoints': 'webhook_endpoint.created',
  'PATCH /webhook-endpoints/:id': 'webhook_endpoint.updated',
  'DELETE /webhook-endpoints/:id': 'webhook_endpoint.deleted',
  'POST /webhook-endpoints/:id/rotate-secret': 'webhook_endpoint.secret_rotated',
  'POST /webhook-endpoints/:id/test': 'webhook_endpoint.pinged',
  'POST /webhook-endpoints/deliveries/:delivery_id/redeliver': 'webhook_endpoint.redelivered',
  'POST /verification-links': 'verification_link.created',
  'POST /verification-links/:id/revoke': 'verification_link.revoked',
  // The person's submission on a link's page runs a vNIN lookup (its own row) or a face match (its event).
  'POST /v/:token/liveness-session': exempt("a liveness session for a link's page: free, it keeps only its row (the poses' order, its state); the submission that sends its frames is the verification"),
  'POST /v/:token/submit': exempt("a verification asked by the person on a link's page: its verification row (and a face match's verification.face_matched event) and the link's submission row keep it"),
  // The person e-mails their own receipt to an address they typed: nothing of an account or an organisation changes.
  'POST /r/:token/email': exempt('the person sends their consent receipt to an address they typed: the outbox row is the sending, sealed and erased once sent, and the address is kept nowhere'),
  'POST /liveness/sessions': exempt('opens a free challenge of head poses that lives two minutes: its row keeps the organisation and when; the face match that uses it is recorded on its own verification row'),
  'POST /api-clients/:client_id/adopt': 'api_client.adopted',
  'POST /api-clients/:client_id/rotate': 'api_client.rotated',
  'DELETE /api-clients/:client_id': 'api_client.revoked',
  'POST /verify-nin': LOOKUP,
  'POST /verify-nin/vnin': LOOKUP,
  'POST /verify-nin/phone': LOOKUP,
  'POST /verify-nin/demography': LOOKUP,
  'POST /verify-nin/match': LOOKUP,
  // A face match is a lookup and, once compared (or found without a photo), this event.
  'POST /verify-nin/face': 'verification.face_matched',
  'POST /verify-nin/requery': 'verification.requeried',
  'POST /verify-nin/batches': exempt('a batch of verifications: the batch row keeps who uploaded it, each lookup its verification row'),
  'POST /verify-nin/batches/:id/cancel': exempt('stops the batch\'s pending lookups: the batch row keeps its state, the ledger each release; no credential'),
  'POST /topup/initialize': exempt('a pending top-up row (who, the amount); no unit moves until topup.credited'),
  'POST /topup/verify': exempt('asks the processor; the credit it may cause is topup.credited, written by the credit job'),
  'POST /webhooks/paystack': exempt('signed by the processor, not a person; the credit it causes is topup.credited, written by the credit job'),
};

/** Third-party surfaces mounted whole, exempt as a group. */
const EXEMPT_PREFIXES: Record<string, string> = {
  '/admin/queues/': 'bull-board: platform operators acting on jobs (retry, clean, pause) behind their own sign-in; no organisation data or credential',
};

const SAFE = new Set(['get', 'head', 'options']);
// The mounts of the API router: the versioned base, the portal bridge under either spelling, and `/`.
const API_MOUNTS = ['/portal/api/v1', '/portal/api', '/v1'];

/** `METHOD /path` of every state-changing route the application answers, walked from express's own router. */
function stateChangingRoutes(app: Stack['app']): Set<string> {
  const found = new Set<string>();
  const walk = (stack: any[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const path of [layer.route.path].flat()) {
          let full = `${prefix}${String(path)}`;
          const mount = API_MOUNTS.find((m) => full.startsWith(`${m}/`));
          if (mount) full = full.slice(mount.length);
          for (const method of Object.keys(layer.route.methods)) if (!SAFE.has(method)) found.add(`${method === '_all' ? 'ALL' : method.toUpperCase()} ${full}`);
        }
        continue;
      }
      const inner = layer.handle?.stack ?? layer.handle?.router?.stack;
      if (!inner) continue;
      for (const path of [layer.rawPath ?? '/'].flat()) walk(inner, path === '/' ? prefix : `${prefix}${String(path)}`);
    }
  };
  walk((app as any).router.stack, '');
  return found;
}

let stack: Stack;
let org: OrgFixture;
const FROM = '198.51.100.7';

beforeAll(async () => {
  // Behind a proxy on the loopback: the address recorded is the forwarded one, as the sign-in guard sees it.
  stack = await startStack({ workers: false, env: { TRUST_PROXY: 'loopback' } });
  org = await stack.createOrg({ units: 10 });
});
afterAll(async () => stack?.close());

const row = z.object({ action: z.string(), request_id: z.string().nullable(), ip: z.string().nullable(), target: z.string().nullable(), actor: z.string() });
const eventsOf = (requestId: string) => stack.db.any(sql.type(row)`SELECT action, request_id, ip, target, actor FROM audit_events WHERE request_id = ${requestId} ORDER BY id`);

const proven = new Set<string>();

/**
 * Sends one request with its own X-Request-Id, from FROM, and expects it answered `status` and
 * recorded by exactly one `action` event that carries that id and address. Answers the response.
 */
async function drive(route: string, action: AuditAction, status: number, send: (headers: Record<string, string>) => Promise<ApiResponse>): Promise<ApiResponse> {
  const requestId = `i29-7-${randomBytes(6).toString('hex')}`;
  const r = await send({ 'x-request-id': requestId, 'x-forwarded-for': FROM });
  expect(r.status, `${route}: ${r.text}`).toBe(status);
  const events = await eventsOf(requestId);
  expect(events.map((e) => e.action), route).toEqual([action]);
  expect(events[0], route).toMatchObject({ request_id: requestId, ip: FROM });
  proven.add(route);
  return r;
}

const codeAt = (secret: string, at: Date) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });

describe('every event a request causes carries its request id and address', () => {
  it('When the application\'s routes are walked, then every state-changing route writes a known event or is exempt for a stated reason, and the table names no route that is gone', () => {
    const routes = stateChangingRoutes(stack.app);
    const unexplained = [...routes].filter((r) => !(r in STATE_CHANGING) && !Object.keys(EXEMPT_PREFIXES).some((p) => r.split(' ')[1]!.startsWith(p)));
    expect(unexplained, 'state-changing routes with neither an event nor an exemption').toEqual([]);
    expect(Object.keys(STATE_CHANGING).filter((r) => !routes.has(r)), 'table entries with no such route').toEqual([]);
  });

  it('When each credential changes over HTTP (password, reset, two-factor, API clients, team), then each change leaves its event with the request id and address', async () => {
    const admin = { token: org.admin.token };
    // Two-factor sign-in: enrol, confirm, turn off (with a recovery code: the confirming step is spent).
    const enrol = await drive('POST /me/mfa/totp', 'mfa.enrolment_started', 201, (headers) => stack.api('POST', '/v1/me/mfa/totp', { token: org.member.token, headers }));
    const confirm = await drive('POST /me/mfa/totp/confirm', 'mfa.enabled', 200, (headers) =>
      stack.api('POST', '/v1/me/mfa/totp/confirm', { token: org.member.token, json: { code: codeAt(enrol.body.secret, new Date()) }, headers }),
    );
    // Turning two-factor on ended the member's tokens: a recovery code signs them in again.
    const again = await stack.api('POST', '/v1/login', { form: { username: org.member.username, password: org.member.password, otp: confirm.body.recovery_codes[0] } });
    expect(again.status).toBe(200);
    org.member.token = again.body.access_token;
    await drive('DELETE /me/mfa/totp', 'mfa.disabled', 204, (headers) =>
      stack.api('DELETE', '/v1/me/mfa/totp', { token: org.member.token, json: { code: confirm.body.recovery_codes[1], current_password: org.member.password }, headers }),
    );
    // Turning it off ended them again.
    org.member.token = await stack.login(org.member.username, org.member.password);

    // Passwords: a change, then a reset by a token.
    const newPassword = `changed-${randomBytes(6).toString('hex')}-pass`;
    await drive('POST /change-password', 'account.password_changed', 200, (headers) =>
      stack.api('POST', '/v1/change-password', { token: org.member.token, json: { current_password: org.member.password, new_password: newPassword }, headers }),
    );
    const memberId = Number((await stack.db.oneFirst(sql.type(z.object({ id: z.number() }))`SELECT id::int FROM users WHERE username = ${org.member.username}`)));
    const { token: resetToken, digest } = newResetToken();
    await stack.db.transaction((tx) => insertResetWithinCap(tx, { userId: memberId, tokenHash: digest, now: new Date(), expiresAt: new Date(Date.now() + 600_000), since: new Date(0), max: 1000 }));
    org.member.password = `reset-${randomBytes(6).toString('hex')}-pass`;
    await drive('POST /reset-password', 'account.password_reset', 200, (headers) => stack.api('POST', '/v1/reset-password', { json: { token: resetToken, new_password: org.member.password }, headers }));

    // Signing in and out: the tokens themselves.
    const signedIn = await drive('POST /login', 'auth.login', 200, (headers) => stack.api('POST', '/v1/login', { form: { username: org.member.username, password: org.member.password }, headers }));
    org.member.token = signedIn.body.access_token;
    await drive('POST /login', 'auth.login_failed', 401, (headers) => stack.api('POST', '/v1/login', { form: { username: org.member.username, password: 'not-the-password' }, headers }));
    await drive('POST /logout', 'auth.logout', 204, (headers) => stack.api('POST', '/v1/logout', { token: org.member.token, headers }));
    org.member.token = await stack.login(org.member.username, org.member.password);

    // The team: a role change (users are made by invitation or by the operator's CLI).
    const made = await stack.addUser(org.orgId, { role: 'member' });
    await drive('PATCH /team/:id', 'team.user_updated', 200, (headers) => stack.api('PATCH', `/v1/team/${made.id}`, { ...admin, json: { role: 'org_admin' }, headers }));

    // API clients: created by a second administrator, suspended by disabling them, adopted, rotated, revoked.
    const second = { username: `admin2-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    const secondUser = await createUser(stack.db, { orgId: org.orgId, ...second, role: 'org_admin', requirePasswordChange: false });
    const secondToken = await stack.login(second.username, second.password);
    const client = await drive('POST /api-clients', 'api_client.created', 201, (headers) =>
      stack.api('POST', '/v1/api-clients', { token: secondToken, json: { name: 'core banking', role: 'member' }, headers }),
    );
    const clientId = client.body.client_id as string;
    await drive('PATCH /team/:id', 'team.user_updated', 200, (headers) => stack.api('PATCH', `/v1/team/${secondUser.id}`, { ...admin, json: { disabled: true }, headers }));
    const status = async () => ((await stack.api('GET', '/v1/api-clients', admin)).body.data as { client_id: string; status: string }[]).find((c) => c.client_id === clientId)?.status;
    expect(await status()).toBe('suspended');
    const adopted = await drive('POST /api-clients/:client_id/adopt', 'api_client.adopted', 200, (headers) => stack.api('POST', `/v1/api-clients/${clientId}/adopt`, { ...admin, headers }));
    expect(adopted.body.status).toBe('active');
    expect((await eventsOf(adopted.headers.get('x-request-id')!))[0]).toMatchObject({ target: `client:${clientId}`, actor: expect.stringMatching(/^user:\d+$/) });
    await drive('POST /api-clients/:client_id/rotate', 'api_client.rotated', 200, (headers) => stack.api('POST', `/v1/api-clients/${clientId}/rotate`, { ...admin, headers }));
    await drive('DELETE /api-clients/:client_id', 'api_client.revoked', 204, (headers) => stack.api('DELETE', `/v1/api-clients/${clientId}`, { ...admin, headers }));

    // Webhook endpoints: the signing secret made, the endpoint changed, the secret rotated, the endpoint deleted.
    const hook = await drive('POST /webhook-endpoints', 'webhook_endpoint.created', 201, (headers) =>
      stack.api('POST', '/v1/webhook-endpoints', { ...admin, json: { url: `${stack.identitySim.url}/sandbox/hooks/i29-item07`, events: ['ping'] }, headers }),
    );
    // A ping and a redelivery make the service send on the caller's word: each is on the trail too.
    const ping = await drive('POST /webhook-endpoints/:id/test', 'webhook_endpoint.pinged', 202, (headers) => stack.api('POST', `/v1/webhook-endpoints/${hook.body.id}/test`, { ...admin, headers }));
    const deliveries = await stack.api('GET', `/v1/webhook-endpoints/${hook.body.id}/deliveries`, admin);
    const pinged = (deliveries.body.data as { id: string; event_id: string }[]).find((d) => d.event_id === ping.body.event_id)!;
    await drive('POST /webhook-endpoints/deliveries/:delivery_id/redeliver', 'webhook_endpoint.redelivered', 202, (headers) => stack.api('POST', `/v1/webhook-endpoints/deliveries/${pinged.id}/redeliver`, { ...admin, headers }));
    await drive('PATCH /webhook-endpoints/:id', 'webhook_endpoint.updated', 200, (headers) => stack.api('PATCH', `/v1/webhook-endpoints/${hook.body.id}`, { ...admin, json: { enabled: false }, headers }));
    await drive('POST /webhook-endpoints/:id/rotate-secret', 'webhook_endpoint.secret_rotated', 200, (headers) => stack.api('POST', `/v1/webhook-endpoints/${hook.body.id}/rotate-secret`, { ...admin, headers }));
    await drive('DELETE /webhook-endpoints/:id', 'webhook_endpoint.deleted', 204, (headers) => stack.api('DELETE', `/v1/webhook-endpoints/${hook.body.id}`, { ...admin, headers }));

    await drive('PATCH /me/organisation', 'organisation.settings_changed', 200, (headers) => stack.api('PATCH', '/v1/me/organisation', { ...admin, json: { require_consent: false }, headers }));

    await drive('PUT /settings/auto-topup', 'auto_topup.settings_changed', 200, (headers) =>
      stack.api('PUT', '/v1/settings/auto-topup', { ...admin, json: { enabled: false, below_units: 10, units: 1000, max_per_day: 1, password: org.admin.password }, headers }),
    );

    // Every route that changes a credential was driven, each leaving its event.
    const credential = ['POST /login', 'POST /logout', 'POST /change-password', 'POST /reset-password', 'POST /me/mfa/totp', 'POST /me/mfa/totp/confirm', 'DELETE /me/mfa/totp', 'PATCH /team/:id', 'POST /api-clients', 'POST /api-clients/:client_id/adopt', 'POST /api-clients/:client_id/rotate', 'DELETE /api-clients/:client_id', 'POST /webhook-endpoints', 'PATCH /webhook-endpoints/:id', 'POST /webhook-endpoints/:id/rotate-secret', 'DELETE /webhook-endpoints/:id'];
    expect(credential.filter((r) => !proven.has(r))).toEqual([]);
    expect((await verifyChain(stack.db)).ok).toBe(true);
  });

  it('When batch results are downloaded, or a stored record read again (requery, slip), directly or through the portal, then the read\'s event carries the request id and address', async () => {
    const batch = await stack.api('POST', '/v1/verify-nin/batches', { token: org.member.token, json: { reason: 'corporate', rows: [{ nin: '31234567890' }] } });
    expect(batch.status).toBe(202);
    for (const accept of ['text/csv', 'application/json']) {
      await drive('GET /verify-nin/batches/:id/results', 'batch.results_downloaded', 200, (headers) =>
        stack.api('GET', `/v1/verify-nin/batches/${batch.body.id}/results`, { token: org.member.token, headers: { ...headers, accept } }),
      );
    }
    const verified = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate' } });
    expect(verified.status).toBe(200);
    const ref = verified.body.data.reference_id as string;
    await drive('POST /verify-nin/requery', 'verification.requeried', 200, (headers) => stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref }, headers }));
    await drive('GET /verify-nin/slip/:reference_id', 'verification.slip_printed', 200, (headers) => stack.api('GET', `/v1/verify-nin/slip/${ref}`, { token: org.member.token, headers }));

    // Through the portal's bridge the request is the same request: its id and address.
    const signIn = await stack.api('POST', '/portal/api/login', { form: { username: org.member.username, password: org.member.password } });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
    await drive('GET /verify-nin/batches/:id/results', 'batch.results_downloaded', 200, (headers) =>
      stack.api('GET', `/portal/api/verify-nin/batches/${batch.body.id}/results`, { headers: { ...headers, cookie, accept: 'application/json' } }),
    );
  });
});
