import fc from 'fast-check';
import { expect } from 'vitest';
import { request, type RawResponse } from '../chaos/chaos-stack.ts';

/**
 * Building blocks for property-based fuzzing of the HTTP surface: hostile bodies, query strings and
 * headers, and the one property every answer must have (never a 5xx; an error is `{detail: string}`
 * JSON; a success is a JSON object).
 */

const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
/** A header value Node will send (no CR/LF, no bytes above 0x7e). */
export const headerValue = fc.oneof(fc.string({ unit: printable, maxLength: 80 }), fc.constantFrom('', ' ', 'null', 'undefined', '0', '-1', 'true', '{}', '[]', 'A'.repeat(2000)));

/** Strings an attacker or a broken client sends: unicode, control characters, huge, numeric-looking. */
export const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: fc.stringMatching(/^[0-9]{0,14}$/) },
  { weight: 1, arbitrary: fc.string({ minLength: 1000, maxLength: 20_000, unit: printable }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '12345678901 ',
      ' 12345678901',
      '１２３４５６７８９０１', // full-width digits
      '1234567890١', // an Arabic-Indic digit
      '99999999999',
      '00000000000',
      '5001000000',
      'REF-',
      'REF-AAAAAAAAAAAA',
      'REF-aaaaaaaaaaaa',
      'TOP-1-0000000000000000',
      'TOP-99999999999999999999-0123456789abcdef',
      "' OR 1=1 --",
      '${jndi:ldap://x}',
      '<script>alert(1)</script>',
      '../../etc/passwd',
      '__proto__',
      'constructor',
      '%00',
      '1e309',
      'NaN',
      '-0',
      '0x10',
      '100.5',
      '1e2',
      ' 100 ',
      '9'.repeat(40),
    ),
  },
);

/** Any JSON value, including deep nesting and prototype-pollution keys. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.constantFrom(0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 100, 1e40, 0.5)) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false) },
  { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 12 }), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'a', 'nin', '$gt'), fc.string({ maxLength: 8 }), { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** A JSON body built around the endpoint's field names (so validation runs deep), or any garbage. */
export function jsonBody(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  // Every field present most of the time, each value either plausible or hostile, plus stray keys.
  const present = fc.tuple(...Object.entries(fields).map(([k, arb]) => fc.option(fc.oneof({ weight: 3, arbitrary: arb }, { weight: 2, arbitrary: nastyValue }), { freq: 6, nil: undefined }).map((v) => [k, v] as [string, unknown])));
  const shaped = fc
    .tuple(present, fc.oneof(fc.constant({}), fc.dictionary(fc.string({ maxLength: 10 }), nastyValue, { maxKeys: 3 })))
    .map(([ps, extra]) => JSON.stringify({ ...extra, ...Object.fromEntries(ps.filter(([, v]) => v !== undefined)) }));
  return fc.oneof(
    { weight: 6, arbitrary: shaped },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '{"nin":', '[]', 'null', '"x"', '{"a":1}{"b":2}', '{"nin":"1"}'.repeat(3), `{"x":${'['.repeat(5000)}`) },
  );
}

/** A form body built around the endpoint's field names, including repeated keys and bad encoding. */
export function formBody(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  const pairs = fc.array(
    fc.tuple(fc.oneof(fc.constantFrom(...Object.keys(fields)), fc.string({ maxLength: 10 }), fc.constantFrom('units[]', 'units[a]', '__proto__')), fc.oneof(fc.constantFrom(...Object.keys(fields)).chain((k) => fields[k]!), nastyValue)),
    { maxLength: 5 },
  );
  const encode = (ps: [string, unknown][]) => ps.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v) ?? '')}`).join('&');
  // Every field present most of the time, each value either plausible or hostile.
  const shaped = fc
    .tuple(...Object.entries(fields).map(([k, arb]) => fc.option(fc.oneof({ weight: 3, arbitrary: arb }, { weight: 1, arbitrary: nastyValue }), { freq: 6, nil: undefined }).map((v) => [k, v] as [string, unknown])))
    .map((ps) => encode(ps.filter(([, v]) => v !== undefined)));
  return fc.oneof(
    { weight: 6, arbitrary: shaped },
    { weight: 3, arbitrary: pairs.map((ps) => encode(ps)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.constantFrom('', '%', '%zz', 'units=%E0%A4%A', 'units=100&units=200', '&&&', '='.repeat(100), 'a=1&'.repeat(50)) },
  );
}

export const contentTypes = (preferred: string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(preferred) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=xyz',
        'application/xml',
        'application/*',
        '*/*',
        '',
      ),
    },
    { weight: 1, arbitrary: headerValue },
  );

export const querySuffix = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 20 }), { maxKeys: 4 }).map((d) => `?${new URLSearchParams(d).toString()}`) },
  { weight: 1, arbitrary: fc.constantFrom('?', '?nin=12345678901', '?nin[]=1&nin[]=2', '?__proto__[x]=1', '?%', '?a=%zz', `?q=${'x'.repeat(3000)}`) },
);

/**
 * Extra headers: request ids, idempotency keys, origins, encodings, accept, spoofed forwarding.
 * Absent more often than present, so that most requests get past the early refusals (CORS, media
 * type) and reach validation and the handlers.
 */
const someHeaders = fc.record(
  {
    'x-request-id': headerValue,
    'idempotency-key': headerValue,
    // Compressed encodings with bytes that do not match them have their own test (body-encoding.test.ts).
    'content-encoding': fc.constantFrom('identity', 'x-unknown', 'gzip, br', ''),
    accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml', ''),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', '127.0.0.1, 10.0.0.1', 'not-an-ip', ''),
    'accept-language': headerValue,
    'x-paystack-signature': headerValue,
    origin: fc.constantFrom('https://evil.example', 'null', 'http://127.0.0.1', '', '', '', '', ''),
  },
  { requiredKeys: [] },
);
export const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  { weight: 2, arbitrary: someHeaders.map((h) => h as Record<string, string>) },
);

export type FuzzRequest = { method: string; path: string; headers: Record<string, string>; body?: string };

export type Tally = { requests: number; byStatus: Record<string, number>; byDetail: Record<string, number>; successes: FuzzRequest[] };

export function newTally(): Tally {
  return { requests: 0, byStatus: {}, byDetail: {}, successes: [] };
}

/** Sends one request and checks the property every answer of the API must have. */
export async function sendAndCheck(baseUrl: string, req: FuzzRequest, tally: Tally, o: { jsonOnly?: boolean } = {}): Promise<RawResponse> {
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([, v]) => v !== ''));
  let res: RawResponse;
  try {
    res = await request(`${baseUrl}${req.path}`, { method: req.method, headers, ...(req.body !== undefined ? { body: req.body } : {}), timeoutMs: 20_000 });
  } catch (err) {
    // Node refused to build the request (a header it will not send): not the server's doing.
    if ((err as { code?: string }).code === 'ERR_INVALID_CHAR' || (err as { code?: string }).code === 'ERR_INVALID_HTTP_TOKEN') return { status: -1, body: undefined, ms: 0 };
    throw err;
  }
  tally.requests++;
  tally.byStatus[res.status] = (tally.byStatus[res.status] ?? 0) + 1;
  const detailKey = `${res.status} ${String(res.body?.detail ?? '').slice(0, 50)}`;
  tally.byDetail[detailKey] = (tally.byDetail[detailKey] ?? 0) + 1;
  const what = `${req.method} ${req.path} -> ${res.status} ${JSON.stringify(res.body)?.slice(0, 300)}\nheaders: ${JSON.stringify(req.headers).slice(0, 300)}\nbody: ${JSON.stringify(req.body)?.slice(0, 300)}`;
  expect(res.status, what).toBeGreaterThanOrEqual(200);
  expect(res.status, what).toBeLessThan(500);
  if (o.jsonOnly !== false) {
    expect(typeof res.body === 'object' && res.body !== null, `not a JSON object: ${what}`).toBe(true);
    if (res.status >= 400) expect(typeof res.body.detail, `error without detail: ${what}`).toBe('string');
  }
  if (res.status >= 200 && res.status < 300) tally.successes.push(req);
  return res;
}

export function fuzzRuns(n: number): fc.Parameters<unknown> {
  // FUZZ_RUNS_SCALE lets CI or a developer turn the volume up or down without editing the tests.
  const scale = Number(process.env.FUZZ_RUNS_SCALE ?? 1);
  return { numRuns: Math.max(10, Math.round(n * (Number.isFinite(scale) && scale > 0 ? scale : 1))), endOnFailure: true };
}
