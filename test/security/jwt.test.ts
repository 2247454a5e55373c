import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUserDisabled } from '../../src/modules/organisations/organisations.service.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Forged and stale tokens against every kind of authenticated endpoint: each must answer 401 with
// {detail}, and none may reach the handler (nothing charged, nothing created).

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_TOKEN: '100000', RATE_LIMIT_PER_ORG: '100000' } });
  org = await stack.createOrg({ units: 50 });
});
afterAll(async () => stack?.close());

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** Every authenticated endpoint, with a body that would succeed for a valid token. */
const ENDPOINTS: { method: string; path: string; call: () => { json?: unknown; form?: Record<string, string | number> } }[] = [
  { method: 'GET', path: '/v1/me', call: () => ({}) },
  { method: 'GET', path: '/v1/nimc-reasons', call: () => ({}) },
  { method: 'POST', path: '/v1/verify-nin', call: () => ({ json: { nin: '23456789012', reason: 'corporate' } }) },
  { method: 'POST', path: '/v1/verify-nin', call: () => ({ json: { nin: '12345678901', reason: 'corporate' } }) },
  { method: 'POST', path: '/v1/verify-nin/phone', call: () => ({ json: { phone_no: '08031234567', reason: 'corporate' } }) },
  { method: 'POST', path: '/v1/verify-nin/demography', call: () => ({ json: { first_name: 'Ada', last_name: 'Obi', date_of_birth: '01-01-1990', gender: 'f' } }) },
  { method: 'POST', path: '/v1/verify-nin/requery', call: () => ({ json: { reference_id: 'REF-AAAAAAAAAAAA' } }) },
  { method: 'POST', path: '/v1/topup/initialize', call: () => ({ form: { units: 100 } }) },
  { method: 'POST', path: '/v1/topup/verify', call: () => ({ form: { reference: 'TOP-1-0123456789abcdef' } }) },
];

function claimsOf(token: string): jwt.JwtPayload {
  return jwt.decode(token) as jwt.JwtPayload;
}

async function expectAll401(token: string, label: string) {
  for (const e of ENDPOINTS) {
    const r = await stack.api(e.method, e.path, { token, ...e.call() });
    expect(r.status, `${label}: ${e.method} ${e.path} -> ${r.status} ${r.text.slice(0, 200)}`).toBe(401);
    expect(typeof r.body.detail, label).toBe('string');
  }
}

async function balance(): Promise<number> {
  return (await stack.api('GET', '/v1/me', { token: org.admin.token })).body.organisation.units;
}

describe('forged and stale tokens', () => {
  it('When the token says alg none (any capitalisation), then 401 everywhere', async () => {
    const claims = { ...claimsOf(org.admin.token) };
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      await expectAll401(`${b64({ alg, typ: 'JWT' })}.${b64(claims)}.`, `alg ${alg}`);
      await expectAll401(`${b64({ alg, typ: 'JWT' })}.${b64(claims)}`, `alg ${alg} (no dot)`);
    }
  });

  it('When the token is RS256-signed with an attacker key pair, or HS256-signed with that public key PEM as the secret, then 401', async () => {
    const claims = claimsOf(org.admin.token);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const rs = jwt.sign(claims, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), { algorithm: 'RS256' });
    await expectAll401(rs, 'RS256 with attacker key');
    // The classic confusion: a verifier that accepts any alg would check HS256 against its "public key".
    const hsWithPem = jwt.sign(claims, pem, { algorithm: 'HS256' });
    await expectAll401(hsWithPem, 'HS256 keyed with a public key PEM');
    // And the server's own secret used with another algorithm of the same family.
    await expectAll401(jwt.sign(claims, stack.config.JWT_SECRET, { algorithm: 'HS384' }), 'HS384 with the right secret');
  });

  it('When the token is signed with the wrong key, then 401', async () => {
    const claims = claimsOf(org.admin.token);
    await expectAll401(jwt.sign(claims, 'a-wrong-secret-that-is-long-enough-0123456789', { algorithm: 'HS256' }), 'wrong key');
    await expectAll401(jwt.sign(claims, '', { algorithm: 'none' }), 'jsonwebtoken none');
  });

  it('When the token has expired or is not yet valid, then 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const base = claimsOf(org.admin.token);
    const sign = (c: object) => jwt.sign(c, stack.config.JWT_SECRET, { algorithm: 'HS256' });
    await expectAll401(sign({ ...base, iat: now - 7200, nbf: now - 7200, exp: now - 3600 }), 'expired an hour ago');
    await expectAll401(sign({ ...base, iat: now - 3601, nbf: now - 3601, exp: now - 1 }), 'expired a second ago');
    await expectAll401(sign({ ...base, iat: now + 600, nbf: now + 600, exp: now + 4200 }), 'not yet valid');
    const { exp: _exp, ...noExp } = base;
    await expectAll401(sign(noExp), 'no exp claim');
  });

  it('When any part of a valid token is tampered with, then 401', async () => {
    const [h, p, s] = org.member.token.split('.') as [string, string, string];
    const claims = claimsOf(org.member.token);
    const variants: [string, string][] = [
      ['role raised to org_admin', `${h}.${b64({ ...claims, role: 'org_admin' })}.${s}`],
      ['role raised to platform_admin', `${h}.${b64({ ...claims, role: 'platform_admin', org: null })}.${s}`],
      ['other organisation', `${h}.${b64({ ...claims, org: (claims.org as number) + 1 })}.${s}`],
      ['other user', `${h}.${b64({ ...claims, sub: '1' })}.${s}`],
      ['exp pushed out', `${h}.${b64({ ...claims, exp: (claims.exp as number) + 86400 })}.${s}`],
      ['signature flipped', `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`],
      ['signature dropped', `${h}.${p}.`],
      ['header alg swapped to HS512', `${b64({ alg: 'HS512', typ: 'JWT' })}.${p}.${s}`],
      ['extra segment', `${h}.${p}.${s}.${s}`],
    ];
    for (const [label, token] of variants) await expectAll401(token, label);
  });

  it('When the issuer is wrong, then 401', async () => {
    const claims = claimsOf(org.admin.token);
    const { iss: _iss, ...rest } = claims;
    await expectAll401(jwt.sign(rest, stack.config.JWT_SECRET, { algorithm: 'HS256', issuer: 'someone-else' }), 'wrong issuer');
    await expectAll401(jwt.sign(rest, stack.config.JWT_SECRET, { algorithm: 'HS256' }), 'no issuer');
  });

  it('When the user has been disabled, then their unexpired token gets 401 everywhere', async () => {
    const victim = await stack.createOrg({ units: 5 });
    expect((await stack.api('GET', '/v1/me', { token: victim.admin.token })).status).toBe(200);
    await setUserDisabled(stack.db, { username: victim.admin.username }, true);
    await expectAll401(victim.admin.token, 'disabled admin');
    const me = await stack.api('GET', '/v1/me', { token: org.admin.token });
    expect(me.status).toBe(200);
  });

  it('When all those attacks are over, then nothing was charged or created', async () => {
    expect(await balance()).toBe(50);
    const topups = await stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM topups`);
    expect(topups).toBe(0);
  });
});
