import fc from 'fast-check';
import type { Request } from 'express';
import { sql } from 'slonik';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.ts';
import { sealJson, type KeyRing } from '../../src/lib/crypto.ts';
import { roles } from '../../src/lib/roles.ts';
import { admittedSql } from '../../src/modules/auth/along.ts';
import { admissionError, claimsMay, EVERYTHING_DONE } from '../../src/modules/auth/auth.middleware.ts';
import { CLIENT_SUBJECT, type TokenClaims } from '../../src/modules/auth/auth.schemas.ts';
import { principalOfRow } from '../../src/modules/auth/auth.service.ts';
import { parsePrincipalRow } from '../../src/modules/organisations/index.ts';
import { answerOf } from '../../src/modules/verification/answer.ts';
import { servedByRequery } from '../../src/modules/verification/verification.repository.ts';
import { STATUSES, verificationRow } from '../../src/modules/verification/verification.schemas.ts';
import { useTestPool } from '../setup/harness.ts';

// The requery's statement appends `verification.requeried` where its SQL admits the principal and
// serves the row. That SQL is compiled from the rules the code decides by (lib/rule.ts); here both
// run on generated principals, claims, rows and instants, the SQL in real PostgreSQL over values typed
// as the tables type them (so the JSON and timestamps are PostgreSQL's own), the code on what the
// service's pool parses back, and they must decide alike. The one difference allowed is the one the
// statement is built to leave to the code: an API client with an address list (the caller's address
// is not in the statement), where the SQL records nothing and the route records after deciding.

const q = sql.type(z.record(z.string(), z.any()));
const pool = useTestPool({ maxPoolSize: 2 });


const T0 = Date.UTC(2026, 10, 27, 12, 0, 0, 500);
/** An instant a few milliseconds around T0, with microseconds PostgreSQL keeps and a JavaScript Date does not. */
const micros = fc.record({ ms: fc.integer({ min: -3, max: 3 }), us: fc.constantFrom(0, 1, 499, 500, 999) });
const microText = ({ ms, us }: { ms: number; us: number }) => new Date(T0 + ms).toISOString().replace('Z', `${String(us).padStart(3, '0')}Z`);
const nowArb = fc.integer({ min: -3, max: 3 }).map((ms) => new Date(T0 + ms));
const orgArb = fc.constantFrom(null, 1, 2);
/** Mostly the value that admits: admission is a conjunction, and a fair coin per field would seldom admit anyone. */
const mostly = <T>(usual: T, other: T) => fc.oneof({ arbitrary: fc.constant(usual), weight: 7 }, { arbitrary: fc.constant(other), weight: 1 });

const userArb = fc.record({
  kind: fc.constant('user' as const),
  id: fc.constantFrom(7, 8),
  org_id: orgArb,
  role: fc.constantFrom(...roles.names),
  active: mostly(true, false),
  subscription_active: fc.constantFrom(null, true, false),
  token_version: fc.integer({ min: 0, max: 2 }),
  must_change_password: mostly(false, true),
  mfa_enrolment_required: mostly(false, true),
});
const clientArb = fc.record({
  kind: fc.constant('client' as const),
  id: fc.constantFrom(7, 8),
  client_id: fc.constantFrom('cl_a', 'cl_b'),
  org_id: fc.constantFrom(1, 2),
  role: fc.constantFrom(...roles.orgRoles),
  active: mostly(true, false),
  suspended: mostly(false, true),
  token_version: fc.integer({ min: 0, max: 2 }),
  subscription_active: fc.boolean(),
  allowed_ips: fc.constantFrom(null, [] as string[], ['203.0.113.0/24'], ['203.0.113.0/24'], ['198.51.100.7', '2001:db8::/32']),
  expires_at: fc.option(micros, { nil: null }),
});
type Row = { kind: 'user' | 'client' } & Record<string, unknown>;

/** The token: whose subject names the row generated (or a missing one), and claims around the row's. */
const readingArb = fc
  .record({
    row: fc.option(fc.oneof(userArb, clientArb, clientArb), { nil: null, freq: 8 }),
    missingKind: fc.constantFrom('user', 'client'),
    role: fc.constantFrom(...roles.names),
    sameRole: mostly(true, false),
    org: orgArb,
    sameOrg: mostly(true, false),
    sameVer: mostly(true, false),
    ver: fc.constantFrom(undefined, 0, 1, 2),
    scope: fc.constantFrom(undefined, 'requery', 'verify', 'verify requery history:read', 'verify requery history:read topup'),
    route: fc.oneof(fc.constant(['POST', '/verify-nin/requery']), fc.constantFrom(['POST', '/topup/initialize'], ['GET', '/team'], ['GET', '/me'], ['GET', '/nowhere'])),
    ip: fc.constantFrom('203.0.113.9', '203.0.113.9', '198.51.100.7', '2001:db8::1', '192.0.2.1'),
    now: nowArb,
  })
  .map((g) => {
    const row = g.row as Row | null;
    const kind = row?.kind ?? g.missingKind;
    const sub = kind === 'client' ? `${CLIENT_SUBJECT}${(row?.client_id as string | undefined) ?? 'cl_z'}` : String((row?.id as number | undefined) ?? 9);
    const claims = {
      sub,
      org: g.sameOrg && row ? (row.org_id as number | null) : g.org,
      role: g.sameRole && row ? (row.role as string) : g.role,
      ...(g.sameVer && row ? (row.token_version === 0 && g.ver === undefined ? {} : { ver: row.token_version }) : g.ver === undefined ? {} : { ver: g.ver }),
      ...(g.scope === undefined ? {} : { scope: g.scope }),
      jti: 'jti',
      iat: Math.floor(T0 / 1000),
      exp: Math.floor(T0 / 1000) + 600,
    } as TokenClaims;
    return { row, kind, claims, route: g.route as [string, string], ip: g.ip, now: g.now };
  });

/** The principal as the service's statement would return it: PostgreSQL's row_to_json of typed columns. */
function principalJson(row: Row | null) {
  if (!row) return sql.fragment`NULL::json`;
  if (row.kind === 'user')
    return sql.fragment`(SELECT row_to_json(p) FROM (SELECT ${row.id as number}::int8 AS id, ${row.org_id as number | null}::int8 AS org_id, 'someone'::text AS username,
      ${row.role as string}::text AS role, ${row.active as boolean}::boolean AS active, ${row.subscription_active as boolean | null}::boolean AS subscription_active,
      NULL::int4 AS max_in_flight, ${row.token_version as number}::int4 AS token_version, ${row.must_change_password as boolean}::boolean AS must_change_password,
      ${row.mfa_enrolment_required as boolean}::boolean AS mfa_enrolment_required) p)`;
  const ips = row.allowed_ips as string[] | null;
  const expires = row.expires_at as { ms: number; us: number } | null;
  return sql.fragment`(SELECT row_to_json(p) FROM (SELECT ${row.id as number}::int8 AS id, ${row.client_id as string}::text AS client_id, ${row.org_id as number}::int8 AS org_id,
    'reader'::text AS name, ${row.role as string}::text AS role, ${row.active as boolean}::boolean AS active, ${row.suspended as boolean}::boolean AS suspended,
    ${row.token_version as number}::int4 AS token_version, ${row.subscription_active as boolean}::boolean AS subscription_active, NULL::int4 AS max_in_flight,
    ${ips === null ? null : sql.array(ips, 'text')}::text[] AS allowed_ips, ${expires === null ? null : microText(expires)}::timestamptz AS expires_at) p)`;
}

const fakeRequest = (method: string, path: string, ip: string) => ({ method, route: { path }, ip, socket: {} }) as unknown as Request;

describe('the SQL that carries a rule decides as the code does', () => {
  it('principal admission: the requery statement admits exactly the principals principalOfRow and admissionError admit (an API client with an address list left to the code)', async () => {
    const seen = { admitted: 0, refused: 0, leftToCode: 0 };
    await fc.assert(
      fc.asyncProperty(readingArb, async ({ row, kind, claims, route, ip, now }) => {
        const req = fakeRequest(route[0], route[1], ip);
        const may = claimsMay(req, claims);
        const admitted = admittedSql(sql.fragment`x.principal`, {
          org: sql.fragment`${claims.org}::int8`,
          role: sql.fragment`${claims.role}::text`,
          ver: sql.fragment`${claims.ver ?? 0}::int4`,
          may: sql.fragment`${may}::boolean`,
          now: sql.fragment`${now.toISOString()}::timestamptz`,
        });
        const got = await pool.db.one(q`SELECT x.principal, ${admitted} AS admitted FROM (SELECT ${principalJson(row)} AS principal) x`);
        expect(typeof got.admitted).toBe('boolean');
        // The code, on the row as the service parses it (organisations/principals.ts, as auth/along.ts does).
        const parsed = got.principal === null ? null : parsePrincipalRow(kind, got.principal);
        const p = principalOfRow({ now: () => now }, claims, parsed);
        const codeAdmits = !('error' in p) && admissionError(req, p, EVERYTHING_DONE) === null;
        const leftToCode = row?.kind === 'client' && ((row.allowed_ips as string[] | null) ?? []).length > 0;
        expect({ sql: got.admitted, code: codeAdmits, leftToCode }).toEqual({ sql: codeAdmits && !leftToCode, code: codeAdmits, leftToCode });
        seen[got.admitted ? 'admitted' : codeAdmits ? 'leftToCode' : 'refused']++;
      }),
      { numRuns: 1500 },
    );
    // Not a test of nothing: both answers, and the case left to the code, came up often.
    expect(Math.min(seen.admitted, seen.refused, seen.leftToCode), JSON.stringify(seen)).toBeGreaterThan(10);
  });

  it('"served by the requery": its SQL holds exactly where answerOf answers the record (200), at millisecond edges of the retention', async () => {
    const ring: KeyRing = [
      { id: 'k1', key: Buffer.alloc(32, 1) },
      { id: 'k2', key: Buffer.alloc(32, 2) },
    ];
    const config = { encryptionKeys: ring } as unknown as Config;
    const served = servedByRequery(ring.map((k) => k.id));
    const seen = { served: 0, not: 0 };
    const rowArb = fc.record({
      status: fc.oneof(fc.constant('found' as const), fc.constantFrom(...STATUSES)),
      key_id: fc.constantFrom(null, 'k1', 'k2', 'k2', 'retired'),
      hasRecord: mostly(true, false),
      expires: micros,
      now: nowArb,
    });
    await fc.assert(
      fc.asyncProperty(rowArb, async ({ status, key_id, hasRecord, expires, now }) => {
        const ref = 'ref-1';
        const entry = ring.find((k) => k.id === key_id);
        const record = !hasRecord ? null : entry ? sealJson([entry], { first_name: 'A' }, ref).data : Buffer.from('not sealed here');
        const got = await pool.db.one(q`
          SELECT r.status, r.record_enc, r.key_id, r.expires_at, ${served(sql.fragment`r.now`)} AS served
          FROM (SELECT ${status}::text AS status, ${record === null ? null : sql.binary(record)}::bytea AS record_enc, ${key_id}::text AS key_id,
                       ${microText(expires)}::timestamptz AS expires_at, ${now.toISOString()}::timestamptz AS now) r`);
        expect(typeof got.served).toBe('boolean');
        const row = verificationRow.parse({
          reference_id: ref, org_id: 1, mode: 'nin', reason: 'corporate', fixture: false, query_enc: null, failure_code: null, consent: null,
          created_at: T0 - 60_000, delivery: 'sync', status: got.status, record_enc: got.record_enc, key_id: got.key_id, expires_at: got.expires_at,
        });
        let answered: boolean;
        try {
          answered = answerOf({ config, clock: { now: () => now } }, row, 'requery').status === 200;
        } catch {
          answered = false;
        }
        expect({ sql: got.served }).toEqual({ sql: answered });
        seen[answered ? 'served' : 'not']++;
      }),
      { numRuns: 600 },
    );
    expect(Math.min(seen.served, seen.not), JSON.stringify(seen)).toBeGreaterThan(30);
  });
});
