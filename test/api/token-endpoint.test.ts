import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// POST /login as an OAuth 2.0 client library sees it: RFC 6749 section 5.2 error bodies, and client
// credentials checked on every grant that carries them.

let stack: Stack;
let org: OrgFixture;
let other: OrgFixture;
let client: { client_id: string; client_secret: string };

beforeAll(async () => {
  stack = await startStack({ workers: false });
  [org, other] = await Promise.all([stack.createOrg(), stack.createOrg()]);
  client = (await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'Token tests', role: 'member' } })).body;
});
afterAll(async () => stack?.close());

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const token = (raw: string, headers: Record<string, string> = {}) =>
  stack.api('POST', '/v1/login', { raw, contentType: 'application/x-www-form-urlencoded', headers });
const oauth = (error: string, detail: string) => ({ detail, error, error_description: detail });

describe('Token endpoint errors (RFC 6749 section 5.2)', () => {
  it('When a parameter is missing or repeated, then 400 invalid_request naming it', async () => {
    const u = encodeURIComponent(org.member.username);
    const cases: [string, string][] = [
      [`username=${u}`, 'Field required: password'],
      [`password=x`, 'Field required: username'],
      [`grant_type=client_credentials&client_id=${client.client_id}`, 'Field required: client_secret'],
      [`grant_type=client_credentials`, 'Field required: client_id'],
      [`username=${u}&password=a&password=b`, 'Parameter sent more than once: password'],
      [`grant_type=password&grant_type=password&username=${u}&password=x`, 'Parameter sent more than once: grant_type'],
      [`username=&password=x`, 'username: username must not be empty'],
      [`username=${u}%00&password=x`, 'username: must not contain control characters'],
    ];
    for (const [body, detail] of cases) {
      const r = await token(body);
      expect(r.status, body).toBe(400);
      expect(r.body, body).toEqual(oauth('invalid_request', detail));
      expect(r.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('When grant_type is not one the service offers, then 400 unsupported_grant_type', async () => {
    const r = await token(`grant_type=authorization_code&code=abc`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual(oauth('unsupported_grant_type', 'grant_type must be "password" or "client_credentials"'));
  });

  it('When the password is wrong, then 401 with the same detail as before and error invalid_grant', async () => {
    const r = await token(`username=${encodeURIComponent(org.member.username)}&password=wrong-one`);
    expect(r.status).toBe(401);
    expect(r.body).toEqual(oauth('invalid_grant', 'Incorrect username or password'));
  });

  it('When client authentication fails, then 401 invalid_client, with WWW-Authenticate: Basic when Basic was used', async () => {
    const viaBasic = await token('grant_type=client_credentials', { authorization: basic(client.client_id, 'not-the-secret') });
    expect(viaBasic.status).toBe(401);
    expect(viaBasic.body).toEqual(oauth('invalid_client', 'Incorrect client credentials'));
    expect(viaBasic.headers.get('www-authenticate')).toBe('Basic realm="idverify"');
    const garbled = await token('grant_type=client_credentials', { authorization: 'Basic !!!' });
    expect(garbled.status).toBe(401);
    expect(garbled.body.error).toBe('invalid_client');
    expect(garbled.headers.get('www-authenticate')).toBe('Basic realm="idverify"');
    const viaForm = await token(`grant_type=client_credentials&client_id=${client.client_id}&client_secret=nope`);
    expect(viaForm.status).toBe(401);
    expect(viaForm.body).toEqual(oauth('invalid_client', 'Incorrect client credentials'));
  });

  it('When the body is JSON, then 415 with error invalid_request', async () => {
    const r = await stack.api('POST', '/v1/login', { json: { username: 'a', password: 'b' } });
    expect(r.status).toBe(415);
    expect(r.body).toEqual(oauth('invalid_request', 'Content-Type must be application/x-www-form-urlencoded'));
  });
});

describe('Client credentials on the password grant (RFC 6749 section 3.2.1)', () => {
  const pw = () => `grant_type=password&username=${encodeURIComponent(org.member.username)}&password=${encodeURIComponent(org.member.password)}`;

  it('When a password grant carries a wrong Basic client header, then 401 invalid_client and no token, though the password is right', async () => {
    const r = await token(pw(), { authorization: basic(client.client_id, 'wrong-secret') });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(oauth('invalid_client', 'Incorrect client credentials'));
    expect(r.headers.get('www-authenticate')).toBe('Basic realm="idverify"');
    const unknown = await token(pw(), { authorization: basic('cli_000000000000000000000000', 'x') });
    expect(unknown.status).toBe(401);
    const inForm = await token(`${pw()}&client_id=${client.client_id}&client_secret=wrong-secret`);
    expect(inForm.status).toBe(401);
    expect(inForm.body.error).toBe('invalid_client');
  });

  it('When a password grant carries the right client credentials, or none, or an empty Basic pair (Swagger UI), then a token', async () => {
    for (const headers of [{ authorization: basic(client.client_id, client.client_secret) }, {}, { authorization: 'Basic Og==' }] as Record<string, string>[]) {
      const r = await token(pw(), headers);
      expect(r.status, JSON.stringify(headers)).toBe(200);
      expect(r.body.token_type).toBe('bearer');
    }
  });

  it("When an organisation's client signs in a person of another organisation, then 400 unauthorized_client", async () => {
    const r = await token(`username=${encodeURIComponent(other.member.username)}&password=${encodeURIComponent(other.member.password)}`, {
      authorization: basic(client.client_id, client.client_secret),
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(oauth('unauthorized_client', 'This API client may not sign in users of another organisation'));
  });
});
