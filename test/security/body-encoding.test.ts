import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { request } from '../chaos/chaos-stack.ts';

// A body whose Content-Encoding header does not match its bytes is the client's mistake: 400 (or
// 415) with {detail}, never a 500. Correctly compressed bodies are accepted like plain ones.

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg({ units: 1 });
});
afterAll(async () => stack?.close());

const ENDPOINTS = [
  { path: '/v1/verify-nin/requery', type: 'application/json', body: '{"reference_id":"REF-AAAAAAAAAAAA"}', auth: true },
  { path: '/v1/verify-nin', type: 'application/json', body: '{"nin":"12345678901","reason":"corporate"}', auth: true },
  { path: '/v1/topup/initialize', type: 'application/x-www-form-urlencoded', body: 'units=abc', auth: true },
  { path: '/v1/login', type: 'application/x-www-form-urlencoded', body: 'username=a', auth: false },
  { path: '/v1/webhooks/paystack', type: 'application/json', body: '{}', auth: false },
];

describe('Content-Encoding', () => {
  for (const encoding of ['gzip', 'deflate', 'br']) {
    it(`When a body claims Content-Encoding ${encoding} but is not compressed (or is truncated), then 4xx with {detail}, never 500`, async () => {
      const failures: string[] = [];
      for (const e of ENDPOINTS) {
        const compressed = encoding === 'gzip' ? gzipSync(e.body) : encoding === 'deflate' ? deflateSync(e.body) : brotliCompressSync(e.body);
        for (const body of [e.body, 'null', compressed.subarray(0, Math.max(1, compressed.length - 4)).toString('latin1')]) {
          const r = await request(`${stack.url}${e.path}`, {
            method: 'POST',
            headers: { 'content-type': e.type, 'content-encoding': encoding, ...(e.auth ? { authorization: `Bearer ${org.admin.token}` } : {}) },
            body,
          });
          if (r.status >= 500 || r.status < 400 || typeof r.body?.detail !== 'string') failures.push(`${e.path} ${JSON.stringify(body).slice(0, 30)} -> ${r.status} ${JSON.stringify(r.body)}`);
        }
      }
      expect(failures).toEqual([]);
    });
  }
});
