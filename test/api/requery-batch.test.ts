import { sql, type CommonQueryMethods } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alongReader } from '../../src/modules/auth/along.ts';
import { CLIENT_SUBJECT, type TokenClaims } from '../../src/modules/auth/auth.schemas.ts';

import { verificationOfOrgQuery } from '../../src/modules/verification/verification.repository.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Requeries that arrive together share one statement (auth/along.ts): each still gets its own
// principal and its own organisation's row, and a refused principal in the batch is refused alone.

let stack: Stack;
let a: OrgFixture;
let b: OrgFixture;
let refA: string;
let refB: string;
let client: { client_id: string; client_secret: string };

const fixture = async (token: string) => {
  const r = await stack.api('POST', '/v1/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' } });
  expect(r.status).toBe(200);
  return r.body.data.reference_id as string;
};
const userId = async (token: string) => (await stack.api('GET', '/v1/me', { token })).body.id as number;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  a = await stack.createOrg({ units: 5 });
  b = await stack.createOrg({ units: 5 });
  refA = await fixture(a.member.token);
  refB = await fixture(b.member.token);
  const created = await stack.api('POST', '/v1/api-clients', { token: a.admin.token, json: { name: 'Batch reader', role: 'member' } });
  expect(created.status).toBe(201);
  client = created.body;
});
afterAll(async () => stack?.close());

describe('Batched requery reads', () => {
  const now = Math.floor(Date.now() / 1000);
  const claims = (sub: string, org: number | null, role: TokenClaims['role']): TokenClaims =>
    ({ sub, org, role, ver: 0, jti: `jti-${sub}-${Math.random()}`, iat: now, exp: now + 600 }) as TokenClaims;
  /** The pool, counting its statements; `failFirst`: the first statement fails as a lost database would. */
  const counted = (failFirst = false) => {
    const c = { statements: 0, db: {} as CommonQueryMethods };
    c.db = { any: (...args: Parameters<CommonQueryMethods['any']>) => (++c.statements === 1 && failFirst ? Promise.reject(new Error('connection lost')) : stack.db.any(...args)) } as unknown as CommonQueryMethods;
    return c;
  };
  const principals = async () => ({
    memberA: claims(String(await userId(a.member.token)), a.orgId, 'member'),
    memberB: claims(String(await userId(b.member.token)), b.orgId, 'member'),
    clientA: claims(`${CLIENT_SUBJECT}${client.client_id}`, a.orgId, 'member'),
    nobody: claims('999999999', a.orgId, 'member'),
  });

  it('When ten readings are asked at once, then two statements read them (the first alone, the nine that waited together), each with its own principal and row', async () => {
    const counter = counted();
    const read = alongReader(counter.db, 'requery_batch_test', (ref, org) => verificationOfOrgQuery(ref, org));
    const { memberA, memberB, clientA, nobody } = await principals();
    const asked: [TokenClaims, string][] = [
      [memberA, refA], [memberA, refB], [memberB, refB], [memberB, refA], [clientA, refA],
      [clientA, 'REF-000000000000'], [nobody, refA], [memberA, refA], [memberB, refB], [clientA, refB],
    ];
    const reads = await Promise.all(asked.map(([c, ref]) => read({ c, key: ref })));
    expect(counter.statements).toBe(2);
    reads.forEach((r, i) => {
      const [c, ref] = asked[i]!;
      const own = (c.org === a.orgId && ref === refA) || (c.org === b.orgId && ref === refB);
      expect(r.row.reference_id ?? null, `reading ${i}`).toBe(own ? ref : null);
      if (c === nobody) expect(r.principalRow).toBeNull();
      else expect(r.principalRow, `reading ${i}`).toMatchObject({ org_id: c.org, ...(c === clientA ? { client_id: client.client_id } : { id: Number(c.sub) }) });
    });
  });

  it('When the principals of users, a client and an unknown subject are asked at once, then each gets its own, and a reader inside a transaction reads outside it', async () => {
    const counter = counted();
    const read = alongReader(counter.db, 'principal_batch_test', null);
    const { memberA, memberB, clientA, nobody } = await principals();
    const asked = [memberA, clientA, nobody, memberB, memberB, clientA, memberA, nobody, clientA];
    const reads = await Promise.all(asked.map((c) => read({ c, key: '' })));
    expect(counter.statements).toBe(2);
    reads.forEach((r, i) => {
      const c = asked[i]!;
      expect(r.row, `reading ${i}`).toEqual({});
      if (c === nobody) expect(r.principalRow).toBeNull();
      else expect(r.principalRow, `reading ${i}`).toMatchObject({ org_id: c.org, ...(c === clientA ? { client_id: client.client_id } : { id: Number(c.sub) }) });
    });
    // Started from inside a transaction's context, the reader's statements still run on the pool.
    const inTx = await stack.db.transaction(async () => Promise.all([read({ c: memberA, key: '' }), read({ c: memberB, key: '' })]));
    expect(inTx.map((r) => r.principalRow?.org_id)).toEqual([a.orgId, b.orgId]);
    expect((await read({ c: clientA, key: '' })).principalRow).toMatchObject({ client_id: client.client_id });
  });

  it('When a statement fails, then every reading it was for fails with it, and the readings after it are read', async () => {
    const counter = counted(true);
    const read = alongReader(counter.db, 'principal_fail_test', null);
    const { memberA, memberB } = await principals();
    const [first, ...rest] = await Promise.allSettled([memberA, memberB, memberA, memberB, memberA].map((c) => read({ c, key: '' })));
    expect(first).toMatchObject({ status: 'rejected', reason: { message: 'connection lost' } });
    expect(rest.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(counter.statements).toBe(2);
    expect((await read({ c: memberB, key: '' })).principalRow).toMatchObject({ org_id: b.orgId });
  });

  it('When a statement hangs, then the readings that arrive meanwhile are read by another beside it, and the hung one still answers its own', async () => {
    let statements = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const db = {
      any: async (...args: Parameters<CommonQueryMethods['any']>) => {
        if (++statements === 1) await held;
        return stack.db.any(...args);
      },
    } as unknown as CommonQueryMethods;
    const read = alongReader(db, 'principal_hang_test', null);
    const { memberA, memberB } = await principals();
    const hung = read({ c: memberA, key: '' });
    expect((await read({ c: memberB, key: '' })).principalRow).toMatchObject({ org_id: b.orgId });
    expect(statements).toBe(2);
    // The statement beside it has ended; a reading that arrives now, while the first still hangs, starts another.
    expect((await read({ c: memberA, key: '' })).principalRow).toMatchObject({ org_id: a.orgId });
    expect(statements).toBe(3);
    release();
    expect((await hung).principalRow).toMatchObject({ org_id: a.orgId });
  });

  it('When requeries of several organisations, a client and a disabled user arrive together, then each gets its own answer', async () => {
    const c = await stack.createOrg({ units: 1 });
    const disabledToken = c.member.token;
    await stack.db.query(sql.unsafe`UPDATE users SET disabled = true, disabled_by = 'org_admin' WHERE username = ${c.member.username}`);
    const grant = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret } });
    expect(grant.status).toBe(200);
    const clientToken = grant.body.access_token as string;
    const ask = (token: string, ref: string) => stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref } });
    const cases: [string, string, number][] = [
      [a.member.token, refA, 200], [b.member.token, refB, 200], [clientToken, refA, 200], [a.member.token, refB, 404],
      [b.member.token, refA, 404], [disabledToken, refA, 401], [a.admin.token, refA, 200], [clientToken, refB, 404],
    ];
    const answers = await Promise.all([...cases, ...cases].map(([token, ref]) => ask(token, ref)));
    answers.forEach((r, i) => {
      const [, ref, status] = cases[i % cases.length]!;
      expect(r.status, `case ${i % cases.length}`).toBe(status);
      if (status === 200) expect(r.body.data.reference_id).toBe(ref);
    });
  });
});
