import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdentityAuthority } from '../../src/adapters/identity-authority/index.ts';
import type { IdentityAuthority, UpstreamOutcome } from '../../src/adapters/identity-authority/types.ts';
import { normalisePerson, personRecordSchema } from '../../src/modules/verification/person.ts';
import { upstreamError as failure } from '../setup/upstream.ts';

/**
 * The real adapters against the providers' published examples (test/fixtures/providers, each file
 * naming the page it was copied from), served over HTTP at the documented method and path. Where a
 * page publishes no body, the test says so and serves none, or only what the page's text states.
 */
interface Fixture {
  source: string;
  request: { method: string; url: string; headers: Record<string, string>; query?: Record<string, string>; body?: Record<string, string> };
  status: number | null;
  response: unknown;
}

function fixture<T = Fixture>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/providers/${name}.json`, import.meta.url), 'utf8')) as T;
}

/** `{{baseUrl}}api/v1/x?y=1` as written on a page: the path and query after the placeholder. */
function documented(url: string): { path: string; query: Record<string, string> } {
  const rest = url.replace(/^\{\{[^}]+\}\}/, '');
  const u = new URL(rest.startsWith('/') ? rest : `/${rest}`, 'http://placeholder');
  return { path: u.pathname, query: Object.fromEntries(u.searchParams) };
}

interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** One HTTP server answering every call with the current `answer`, remembering the last request. */
async function recorder(): Promise<{ url: string; last(): Seen; answer(status: number, body?: unknown): void; close(): Promise<void> }> {
  let seen: Seen | undefined;
  let reply: { status: number; body?: unknown } = { status: 500 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://placeholder');
      const text = Buffer.concat(chunks).toString('utf8');
      seen = { method: req.method ?? '', path: u.pathname, query: Object.fromEntries(u.searchParams), headers: req.headers, body: text ? JSON.parse(text) : undefined };
      res.statusCode = reply.status;
      if (reply.body === undefined) return void res.end();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    last: () => {
      if (!seen) throw new Error('no request arrived');
      return seen;
    },
    answer: (status, body) => void (reply = { status, body }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function raw(outcome: UpstreamOutcome): Record<string, unknown> {
  if (outcome.kind !== 'found') throw new Error(`expected found, got ${outcome.kind}`);
  return outcome.raw;
}

const KEY = 'sk_examples';
const APP = 'app_examples';
let server: Awaited<ReturnType<typeof recorder>>;
beforeAll(async () => {
  server = await recorder();
});
afterAll(async () => server.close());

/** The documented header names carry the configured credentials, the secret key as it is. */
function expectDocumentedHeaders(f: Fixture, seen: Seen): void {
  const values = Object.keys(f.request.headers).map((name) => seen.headers[name.toLowerCase()]);
  expect(values.sort()).toEqual([APP, KEY].sort());
}

describe('Prembly, against docs.prembly.com', () => {
  const nin = fixture('prembly/nin-request');
  const codes = fixture<{ codes: Record<string, unknown> }>('prembly/response-codes');
  let prembly: IdentityAuthority;
  beforeAll(() => {
    prembly = createIdentityAuthority({ dialect: 'prembly', baseUrl: server.url, apiKey: KEY, appId: APP, timeoutMs: 2_000 });
  });

  it('When a NIN is looked up, then the request is the documented one: method, path, app-id and x-api-key, number_nin', async () => {
    // No response example could be copied: the answer is the smallest the response-codes page describes.
    server.answer(200, { response_code: '01' });
    const testNin = String(nin.request.body?.number_nin);
    await prembly.lookupNin({ nin: testNin, reason: 'corporate' });
    const seen = server.last();
    expect(seen.method).toBe(nin.request.method);
    expect(seen.path).toBe(documented(nin.request.url).path);
    expect(seen.body).toEqual(nin.request.body);
    expectDocumentedHeaders(nin, seen);
    expect(nin.response).toBeNull();
  });

  it('When the base URL already names /identitypass, then the same documented path is called', async () => {
    server.answer(200, { response_code: '01' });
    const rooted = createIdentityAuthority({ dialect: 'prembly', baseUrl: `${server.url}/identitypass`, apiKey: KEY, appId: APP, timeoutMs: 2_000 });
    await rooted.lookupNin({ nin: '12345678901', reason: 'corporate' });
    expect(server.last().path).toBe('/identitypass/verification/vnin');
  });

  it('When response_code comes with HTTP 200, as the table says it may, then 01 is no record, 02 retryable, 03 final', async () => {
    expect(Object.keys(codes.codes)).toEqual(expect.arrayContaining(['00', '01', '02', '03']));
    server.answer(200, { response_code: '01' });
    expect(await prembly.lookupNin({ nin: '12345678901', reason: 'corporate' })).toEqual({ kind: 'not_found' });
    server.answer(200, { response_code: '02' });
    expect(await failure(prembly.lookupNin({ nin: '12345678901', reason: 'corporate' }))).toMatchObject({ retryable: true });
    server.answer(200, { response_code: '03' });
    expect(await failure(prembly.lookupNin({ nin: '12345678901', reason: 'corporate' }))).toMatchObject({ retryable: false });
  });
});

describe('Prembly vNIN, against the same page', () => {
  const vnin = fixture('prembly/vnin-request');
  it('When a vNIN is looked up, then the documented path and headers carry it as `number`, and a not-found (01) is vnin_not_found', async () => {
    server.answer(200, { status: false, detail: 'Record not found', response_code: '01' });
    const prembly = createIdentityAuthority({ dialect: 'prembly', baseUrl: server.url, apiKey: KEY, appId: APP, timeoutMs: 2_000 });
    const token = String(vnin.request.body?.number);
    expect(token).toMatch(/^[A-Z0-9]{16}$/);
    expect(await prembly.lookupVnin({ vnin: token, reason: 'corporate' })).toEqual({ kind: 'not_found', refusal: 'vnin_not_found' });
    const seen = server.last();
    expect([seen.method, seen.path]).toEqual([vnin.request.method, documented(vnin.request.url).path]);
    expect(seen.body).toEqual(vnin.request.body);
    expectDocumentedHeaders(vnin, seen);
    expect(vnin.response).toBeNull();
  });
});

describe('Prembly\'s published envelope (another IdentityPass endpoint)', () => {
  const envelope = fixture('prembly/envelope-sample');
  it('When the published answer comes back, then status true with response_code 00 is found, the record read from data and verification.reference kept as the transaction id', async () => {
    server.answer(200, envelope.response);
    const prembly = createIdentityAuthority({ dialect: 'prembly', baseUrl: server.url, apiKey: KEY, appId: APP, timeoutMs: 2_000 });
    const r = raw(await prembly.lookupNin({ nin: '12345678901', reason: 'corporate' }));
    const published = envelope.response as { data: Record<string, unknown>; verification: { reference: string } };
    expect(r).toMatchObject({ ...published.data, transaction_id: published.verification.reference });
  });
});

describe('Dojah, against its documentation', () => {
  const ninFound = fixture('dojah/nin-found');
  const phoneFound = fixture('dojah/phone-found');
  const notFound = fixture('dojah/vnin-not-found');
  const statuses = fixture<{ statuses: Record<string, unknown> }>('dojah/response-codes');
  let dojah: IdentityAuthority;
  beforeAll(() => {
    dojah = createIdentityAuthority({ dialect: 'dojah', baseUrl: server.url, apiKey: KEY, appId: APP, timeoutMs: 2_000 });
  });

  it('When the "Lookup NIN" example is served, then the request is the documented one and the entity maps to the person', async () => {
    server.answer(200, ninFound.response);
    const testNin = String(ninFound.request.query?.nin);
    const outcome = await dojah.lookupNin({ nin: testNin, reason: 'corporate' });
    const seen = server.last();
    expect(seen.method).toBe(ninFound.request.method);
    expect(seen.path).toBe(documented(ninFound.request.url).path);
    expect(seen.query).toEqual(ninFound.request.query);
    expectDocumentedHeaders(ninFound, seen);
    expect(String(seen.headers.authorization)).not.toMatch(/^Bearer /);

    const record = personRecordSchema.parse(normalisePerson(raw(outcome)));
    expect(record).toMatchObject({ fname: 'John', mname: '', lname: 'Doe', dob: '01-01-1982', gender: 'M', phone: '08012345678' });
    // The answer carries no NIN: the adapter fills in the one asked for.
    expect(record.nin).toBe(testNin);
    // The photo is passed on; the page cuts it short with "...", which is not base64, so the
    // normalised image is empty rather than a broken picture.
    expect(raw(outcome).photo).toBe((ninFound.response as { entity: { photo: string } }).entity.photo);
    expect(record.image).toBe('');
  });

  it('When the "Phone Number Advance" example is served, then the documented query goes out and the entity maps to the person', async () => {
    server.answer(200, phoneFound.response);
    const { path, query } = documented(phoneFound.request.url);
    const outcome = await dojah.lookupPhone({ phone: String(query.phone_number), reason: 'corporate' });
    const seen = server.last();
    expect([seen.method, seen.path]).toEqual([phoneFound.request.method, path]);
    expect(seen.query).toEqual(query);
    expectDocumentedHeaders(phoneFound, seen);

    const record = personRecordSchema.parse(normalisePerson(raw(outcome)));
    expect(record).toMatchObject({ fname: 'JOHN', mname: 'CHHUKWU', lname: 'DOE', dob: '12-12-1960', gender: 'M', phone: '08012345678', nin: '' });
    // A placeholder text, not a picture: the adapter passes it on, and the normaliser drops it.
    expect(raw(outcome).photo).toBe('BASE 64 IMAGE');
    expect(record.image).toBe('');
  });

  it('When the published not-found body comes with 404 (the table\'s "Records/parameters not found") or 400, then there is no record', async () => {
    expect(notFound.status).toBeNull();
    for (const status of [404, 400]) {
      server.answer(status, notFound.response);
      expect(await dojah.lookupNin({ nin: '70123456789', reason: 'corporate' }), String(status)).toEqual({ kind: 'not_found' });
    }
  });

  it('When the "Lookup Virtual NIN" example is served, then the documented query goes out and the person comes without the token or a NIN', async () => {
    const vninFound = fixture('dojah/vnin-found');
    server.answer(200, vninFound.response);
    const token = String(vninFound.request.query?.vnin);
    const outcome = await dojah.lookupVnin({ vnin: token, reason: 'corporate' });
    const seen = server.last();
    expect([seen.method, seen.path]).toEqual([vninFound.request.method, documented(vninFound.request.url).path]);
    expect(seen.query).toEqual(vninFound.request.query);
    expectDocumentedHeaders(vninFound, seen);
    expect(JSON.stringify(raw(outcome))).not.toContain(token);
    const record = personRecordSchema.parse(normalisePerson(raw(outcome)));
    // The sample's dateOfBirth is the format ("YYYY-MM-DD"), not a date: nothing to normalise.
    expect(record).toMatchObject({ nin: '', fname: 'John', mname: 'Doe', lname: 'Alamutu', gender: 'M', phone: '08012345678', dob: '' });
  });

  it('When the published vNIN not-found body comes, then it is vnin_not_found', async () => {
    server.answer(404, notFound.response);
    expect(await dojah.lookupVnin({ vnin: 'AB012345678910YZ', reason: 'corporate' })).toEqual({ kind: 'not_found', refusal: 'vnin_not_found' });
  });

  it('When a status of the response-codes table comes (no body is published), then 408, 424, 429 and 5xx are retryable, the other 4xx final', async () => {
    const listed = Object.keys(statuses.statuses).flatMap((k) => k.split(',').map(Number));
    const retryable = new Set([408, 424, 429, 500, 502, 503, 504]);
    for (const status of listed.filter((s) => s !== 200)) {
      server.answer(status);
      const err = await failure(dojah.lookupNin({ nin: '70123456789', reason: 'corporate' }));
      expect({ status: err.status, retryable: err.retryable }, String(status)).toEqual({ status, retryable: retryable.has(status) });
    }
  });
});
