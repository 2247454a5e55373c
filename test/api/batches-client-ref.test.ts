import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// A row's client_ref follows one rule whether it arrives in JSON rows or a CSV column: no control
// character (tab, CR, ESC, DEL...). CSV names the row (as numbered in the results) and the column.

const q = sql.type(z.object({ n: z.number() }));

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg({ units: 5 });
});
afterAll(async () => stack?.close());

const csv = (raw: string) => stack.api('POST', '/v1/verify-nin/batches?reason=corporate', { token: org.admin.token, raw, contentType: 'text/csv' });
const json = (rows: unknown[]) => stack.api('POST', '/v1/verify-nin/batches', { token: org.admin.token, json: { reason: 'corporate', rows } });
const batches = () => stack.db.oneFirst(q`SELECT count(*)::int AS n FROM verification_batches`);

it('When a CSV client_ref holds a tab, CR or ESC, then 400 naming the row and the column, and no batch is stored', async () => {
  const before = await batches();
  const cases: [string, string][] = [
    ['nin,client_ref\r\n12345678901,ok\r\n12345678902,"cust\tone"\r\n', 'row 2, column client_ref: must not contain control characters'],
    ['client_ref,nin\r\n"a\rb",12345678901\r\n', 'row 1, column client_ref: must not contain control characters'],
    ['nin,client_ref\r\n12345678901,a\r\n12345678902,b\r\n12345678903,x\u001b[31m\r\n', 'row 3, column client_ref: must not contain control characters'],
    ['nin,client_ref\r\n12345678901,del\u007f\r\n', 'row 1, column client_ref: must not contain control characters'],
  ];
  const got = [];
  for (const [raw] of cases) {
    const r = await csv(raw);
    got.push([r.status, r.body?.detail]);
  }
  expect(got).toEqual(cases.map(([, detail]) => [400, detail]));
  expect(await batches()).toBe(before);
});

it('When a JSON row client_ref holds a tab, CR or ESC, then 400 naming the field, as for CSV', async () => {
  const before = await batches();
  const got = [];
  for (const ref of ['cust\tone', 'a\rb', 'x\u001b[31m', 'del\u007f', 'tail\t']) {
    const r = await json([{ nin: '12345678901', client_ref: 'ok' }, { nin: '12345678902', client_ref: ref }]);
    got.push([r.status, r.body?.detail]);
  }
  expect(got).toEqual(Array.from({ length: 5 }, () => [400, 'rows.1.client_ref: must not contain control characters']));
  expect(await batches()).toBe(before);
});

it('When client_ref is plain text in CSV or JSON, then the batch is accepted', async () => {
  expect((await csv('nin,client_ref\r\n12345678901,cust one\r\n')).status).toBe(202);
  expect((await json([{ nin: '12345678901', client_ref: 'cust one' }])).status).toBe(202);
});
