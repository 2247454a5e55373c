import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

let stack: Stack;
let org: OrgFixture;
let memberId: number;
beforeAll(async () => {
  stack = await startStack({ workers: false, captureLogs: true });
  org = await stack.createOrg();
  memberId = (await stack.api('GET', '/v1/me', { token: org.member.token })).body.id;
});
afterAll(async () => stack?.close());

/** What the raw socket receives for bytes the HTTP parser refuses before express. */
function rawExchange(bytes: string): Promise<string> {
  const url = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes));
    let got = '';
    socket.on('data', (d) => (got += d.toString('utf8')));
    socket.on('end', () => resolve(got));
    socket.on('error', reject);
  });
}

describe('token lifetime', () => {
  const sign = (iat: number, exp: number) =>
    jwt.sign({ sub: String(memberId), org: org.orgId, role: 'member', iat, nbf: iat, exp, jti: randomUUID() }, stack.config.JWT_SECRET, {
      algorithm: 'HS256',
      issuer: stack.config.JWT_ISSUER,
    });

  it('When a validly signed token claims a lifetime over JWT_TTL_SECONDS, then 401; at exactly the limit it works', async () => {
    const now = Math.floor(Date.now() / 1000);
    const ttl = stack.config.JWT_TTL_SECONDS;
    expect((await stack.api('GET', '/v1/me', { token: sign(now, now + ttl) })).status).toBe(200);
    for (const [iat, exp] of [
      [now, now + ttl + 1],
      [now, now + 10 * 365 * 86400],
      [now - 2 * ttl, now + 60],
    ] as const) {
      const r = await stack.api('GET', '/v1/me', { token: sign(iat, exp) });
      expect(r.status, `${exp - iat}`).toBe(401);
      expect(r.body).toEqual({ detail: 'Could not validate credentials' });
    }
  });
});

describe('requests refused by the HTTP parser', () => {
  it('When the headers are too large, then 431 with a JSON {detail}', async () => {
    const r = await stack.api('GET', '/v1/me', { token: org.member.token, headers: { 'x-padding': 'a'.repeat(20_000) } });
    expect(r.status).toBe(431);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.body).toEqual({ detail: 'Request header fields too large' });
    // The server is still serving.
    expect((await stack.api('GET', '/v1/me', { token: org.member.token })).status).toBe(200);
  });

  it('When the request line or a header is malformed, then 400 with a JSON {detail}', async () => {
    const answer = await rawExchange('GET /healthz HTTP/1.1\r\nHost: x\r\nnot a header line\r\n\r\n');
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/content-type: application\/json; charset=utf-8/i);
    expect(JSON.parse(body!)).toEqual({ detail: 'Malformed request' });
  });
});

describe('documentation page names', () => {
  it('When /docs is asked for an inherited object property name, then 404, not 500', async () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
      const r = await stack.api('GET', `/docs/${name}`);
      expect(r.status, name).toBe(404);
      expect(r.body).toEqual({ detail: 'Not Found' });
    }
    expect((await stack.api('GET', '/docs/docs.js')).status).toBe(200);
  });
});

describe('request log lines', () => {
  it('When an unknown path carries a NIN, then the log line names the route pattern, never the path', async () => {
    const nin = '40404040404';
    const unknown = await stack.api('GET', `/v1/verify-nin/${nin}?nin=${nin}`, { token: org.member.token, headers: { 'x-request-id': 'unknown-route-1' } });
    expect(unknown.status).toBe(404);
    const known = await stack.api('GET', `/v1/me?nin=${nin}`, { token: org.member.token, headers: { 'x-request-id': 'known-route-1' } });
    expect(known.status).toBe(200);
    const lines = () => stack.logs.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((l) => JSON.parse(l) as Record<string, any>);
    const done = (id: string) => lines().find((l) => l.req?.id === id && l.res);
    const unknownLine = await waitFor(() => done('unknown-route-1'), { what: 'log line of the unknown route' });
    const knownLine = await waitFor(() => done('known-route-1'), { what: 'log line of /me' });
    expect(unknownLine.route).toBe('unmatched');
    expect(unknownLine.req).toEqual({ id: 'unknown-route-1', method: 'GET' });
    expect(knownLine.route).toBe('/me');
    for (const l of stack.logs) expect(l).not.toContain(nin);
  });
});
