import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';

// A credited top-up's invoice is a PDF only, and the top-up itself JSON only: the Accept header is
// judged by the statements' rule, so a type the route cannot make is 406 rather than a body nobody
// asked for.

let stack: Stack;
let org: OrgFixture;
let reference: string;
beforeAll(async () => {
  stack = await startStack();
  org = await stack.createOrg();
  const r = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
  expect(r.status).toBe(200);
  reference = r.body.reference;
  const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${reference}/pay`, { method: 'POST' });
  expect(paid.status).toBe(200);
  await until(async () => (await stack.api('GET', `/v1/topups/${reference}`, { token: org.admin.token })).body.invoice_number, (n) => typeof n === 'string');
});
afterAll(async () => stack?.close());

const invoice = (accept: string | null) =>
  fetch(`${stack.url}/v1/topups/${reference}/invoice`, { headers: { authorization: `Bearer ${org.admin.token}`, ...(accept === null ? {} : { accept }) } });

describe('GET /topups/{reference}/invoice and the Accept header', () => {
  it('When the invoice is asked as CSV or JSON, then 406 with the types it offers, as a statement answers', async () => {
    for (const accept of ['text/csv', 'application/json']) {
      const r = await invoice(accept);
      expect(r.status, accept).toBe(406);
      expect(r.headers.get('content-type')).toMatch(/^application\/(problem\+)?json/);
      expect(((await r.json()) as { detail: string }).detail).toBe('Accept must allow application/pdf');
    }
    // The statements' answer to the same header, for comparison: the same status and wording.
    const month = new Date(Date.now() + 3600_000).toISOString().slice(0, 7);
    const s = await fetch(`${stack.url}/v1/statements/${month}`, { headers: { authorization: `Bearer ${org.admin.token}`, accept: 'image/png' } });
    expect(s.status).toBe(406);
    expect(((await s.json()) as { detail: string }).detail).toBe('Accept must allow application/json, text/csv, application/pdf');
  });

  it('When the invoice is asked as a PDF, with */* or with no Accept, then the PDF', async () => {
    for (const accept of ['application/pdf', '*/*', 'application/*', null, 'text/csv;q=0.9, application/pdf;q=0.5']) {
      const r = await invoice(accept);
      expect(r.status, String(accept)).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/pdf');
      expect(Buffer.from(await r.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
    }
  });
});

const topup = (accept: string | null) =>
  fetch(`${stack.url}/v1/topups/${reference}`, { headers: { authorization: `Bearer ${org.admin.token}`, ...(accept === null ? {} : { accept }) } });

describe('GET /topups/{reference} and the Accept header', () => {
  it('When the top-up is asked as CSV or PDF, then 406 naming JSON, in the invoice\'s wording', async () => {
    for (const accept of ['text/csv', 'application/pdf']) {
      const r = await topup(accept);
      expect(r.status, accept).toBe(406);
      expect(r.headers.get('content-type')).toMatch(/^application\/(problem\+)?json/);
      expect(((await r.json()) as { detail: string }).detail).toBe('Accept must allow application/json');
    }
  });

  it('When the top-up is asked as JSON, with */* or with no Accept, then its JSON', async () => {
    for (const accept of ['application/json', '*/*', null, 'text/csv;q=0.9, application/json;q=0.5']) {
      const r = await topup(accept);
      expect(r.status, String(accept)).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await r.json()) as { reference: string }).reference).toBe(reference);
    }
  });
});
