import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { batcher } from '../../lib/batch.ts';
import { chainAppend, EVENT_COLUMNS, eventTexts, type CanonicalFields } from '../audit/index.ts';
import { parsePrincipalRow, principalJson, type PrincipalRow } from '../organisations/index.ts';
import type { TokenClaims } from './auth.schemas.ts';
import { subjectOf } from './auth.service.ts';
import { ruleSql, UNSURE, type Binding } from '../../lib/rule.ts';
import { ADMISSION, PRINCIPAL_ROW } from './admission.ts';

const batchRow = z.object({ n: z.coerce.number(), principal: z.unknown() }).loose();
const MAX_BATCH = 64;

/** `recorded`: the reading's audit event was appended by the statement that read it. */
export type AlongRead = { row: Record<string, unknown>; principalRow: PrincipalRow | null; recorded: boolean };

/**
 * A route's one-row query, given as SQL over the reading's key and the token's organisation (`i.key`,
 * `i.org`): it must return at most one row, whose columns come back beside the principal's (columns
 * named `n`, `principal` or `recorded` are the reader's own).
 */
export type Alongside = (key: FragmentSqlToken, org: FragmentSqlToken) => FragmentSqlToken;

/**
 * A route whose reads are recorded on the audit trail by the statement that reads them: `served` is
 * SQL over the route's row (its columns as `r.<column>`; `now` the reading's instant, see Reading)
 * that is true only where the route answers that row, at that instant, with what the event records.
 */
export type AlongRecording = { served: (now: FragmentSqlToken) => FragmentSqlToken };

/**
 * One reading: the token's claims and the route's key. With `event` (a route with a recording),
 * the statement appends that event when the reading's principal is admitted and its row is served;
 * `may` is what the claims alone decide of the admission (the token's scope for the route),
 * `now` the instant at which the statement judges the reading, and the code after it must judge
 * the reading at the same instant (expiries are compared to it on both sides).
 */
export type Reading = { c: TokenClaims; key: string; event?: { fields: CanonicalFields; may: boolean; now: Date } };

/**
 * The token's principal and a route's own row in one statement: on the hottest reads (a requery)
 * the principal's separate query was a third of the database work, a round trip and a wake-up of a
 * backend per request. It is still read for this very request, at the same snapshot as its row, by
 * a statement that starts after the request arrived, so nothing about it is cached: a change
 * committed before the request is seen.
 *
 * Without `alongside`, the principal alone (every other authenticated route: `authenticate`).
 *
 * The readings of concurrent requests share that statement (lib/batch.ts, as the audit trail's
 * writer shares its appends): up to 64, one `unnest` row each. A failed statement fails every
 * request it read for (each then answers as a database fault does: 503 or 500).
 *
 * With `recording` (the requery), the same statement also appends the audit event of each reading
 * it serves (recordingQuery below), so a read of personal data is on the trail without a statement of
 * its own.
 */
export function alongReader(db: CommonQueryMethods, name: string, alongside: Alongside | null, recording: AlongRecording | null = null): (r: Reading) => Promise<AlongRead> {
  const shape = shapeOf(alongside, recording);
  const read = batcher({ maxBatch: MAX_BATCH, run: (batch: Reading[]) => readBatch(db, name, shape, batch) });
  return async (r) => readOf(r.c, await read(r));
}

function readOf(c: TokenClaims, row: Record<string, unknown>): AlongRead {
  const { n: _, principal: json, recorded: id, ...rest } = row;
  const recorded = id !== null && id !== undefined;
  if (json === null) return { row: rest, principalRow: null, recorded };
  return { row: rest, principalRow: parsePrincipalRow(subjectOf(c).kind, json), recorded };
}

/**
 * The parts of a reader's statement that are the same for every batch, built once (slonik flattens a
 * fragment when it is made: rebuilding them for every batch was a twentieth of the API's CPU).
 */
type Shape = { readings: FragmentSqlToken; joined: FragmentSqlToken; served: FragmentSqlToken | null };

function shapeOf(alongside: Alongside | null, recording: AlongRecording | null): Shape {
  const readings = sql.fragment`
    SELECT a.*,
           i.n,
           ${principalJson(sql.fragment`i.user_id`, sql.fragment`i.client_id`)} AS principal`;
  const joined = alongside ? sql.fragment`LEFT JOIN LATERAL (${alongside(sql.fragment`i.key`, sql.fragment`i.org`)}) a ON true` : sql.fragment`, LATERAL (SELECT) a`;
  return { readings, joined, served: recording ? servedQuery(recording) : null };
}

/** The principal and the route's row of each reading. */
function readingsQuery(shape: Shape, batch: readonly Reading[]) {
  const subjects = batch.map((w) => subjectOf(w.c));
  const userIds = subjects.map((s) => (s.kind === 'user' ? String(s.userId) : null));
  const clientIds = subjects.map((s) => (s.kind === 'client' ? s.clientId : null));
  return sql.fragment`
    ${shape.readings}
    FROM unnest(
      ${sql.array(userIds, 'int8')}, ${sql.array(clientIds, 'text')},
      ${sql.array(batch.map((w) => w.key), 'text')}, ${sql.array(batch.map((w) => orgText(w.c)), 'int8')}
    ) WITH ORDINALITY AS i(user_id, client_id, key, org, n)
    ${shape.joined}`;
}

const orgText = (c: TokenClaims) => (c.org === null ? null : String(c.org));

/** One statement for the batch, prepared (its text is the same whatever the batch's size). */
async function readBatch(db: CommonQueryMethods, name: string, shape: Shape, batch: readonly Reading[]) {
  const rows = shape.served && batch.some((w) => w.event)
    ? await db.any(sql.prepared(`${name}_along_recorded`, batchRow)`${recordingQuery(shape, shape.served, batch)}`)
    : await db.any(sql.prepared(`${name}_along`, batchRow)`${readingsQuery(shape, batch)} ORDER BY i.n`);
  // Each row names the reading it answers (its place in the batch, from 1).
  if (rows.length !== batch.length || rows.some((r, i) => Number(r.n) !== i + 1)) throw new Error('along: the statement did not answer the readings in order');
  return rows;
}

const list = (parts: Parameters<typeof sql.join>[0]) => sql.join(parts, sql.fragment`, `);

/**
 * The readings' audit events, as the CTE `along_events` (one row per reading, by its place `n`:
 * the event's columns, null for a reading without one, and what the claims say).
 */
function eventsQuery(batch: readonly Reading[]) {
  const texts = batch.map((w) => (w.event ? eventTexts(w.event.fields) : EVENT_COLUMNS.map(() => null)));
  return sql.fragment`
    SELECT * FROM unnest(
      ${list(EVENT_COLUMNS.map((_, i) => sql.array(texts.map((t) => t[i] ?? null), 'text')))},
      ${sql.array(batch.map((w) => orgText(w.c)), 'int8')}, ${sql.array(batch.map((w) => w.c.role), 'text')},
      ${sql.array(batch.map((w) => w.c.ver ?? 0), 'int4')}, ${sql.array(batch.map((w) => w.event?.may === true), 'bool')},
      ${sql.array(batch.map((w) => w.event?.now.toISOString() ?? null), 'timestamptz')}
    ) WITH ORDINALITY AS e(${EVENT_COLUMN_NAMES}, claimed_org, claimed_role, claimed_ver, may, event_now, n)`;
}

const EVENT_COLUMN_NAMES = list(EVENT_COLUMNS.map((c) => sql.identifier([`event_${c}`])));

/**
 * The readings and, in the same statement (one transaction), the audit events of those whose
 * principal SQL admits and whose row the route serves (`along_served`, numbered in batch order),
 * appended to the chain (the audit module's chainAppend). The deny-list and the rate limits were
 * asked before.
 */
function recordingQuery(shape: Shape, served: FragmentSqlToken, batch: readonly Reading[]) {
  return sql.fragment`
    WITH RECURSIVE readings AS (
      ${readingsQuery(shape, batch)}
    ), along_events AS (
      ${eventsQuery(batch)}
    ), ${served}
    SELECT r.*, c.id AS recorded
    FROM readings r LEFT JOIN along_served s ON s.n = r.n LEFT JOIN audit_chain c ON c.k = s.k
    ORDER BY r.n`;
}

/**
 * `along_served` and the append of its events. Its admission is not written here: it is compiled from
 * the rules principalOfRow and admissionError decide by (admission.ts: PRINCIPAL_ROW and ADMISSION,
 * through lib/rule.ts), over the principal's JSON and the reading's claims, and `recording.served`
 * (the route's rule, compiled the same way) says whether the row is served. It is never wider than
 * the code: what only the code knows (the caller's address, for an API client with an address list)
 * reads as unsure and records nothing; the route then records the event itself once the code has
 * decided (the code decides every answer; this only spares that statement when they agree).
 * test/api/rule-sql-agrees-with-code.test.ts checks both against the code on generated principals, claims, rows
 * and instants. Each reading is judged at its own instant.
 */
function servedQuery(recording: AlongRecording) {
  const now = sql.fragment`e.event_now`;
  return sql.fragment`
    along_served AS (
      SELECT row_number() OVER (ORDER BY r.n) AS k, r.n, ${list(EVENT_COLUMNS.map((c) => sql.fragment`e.${sql.identifier([`event_${c}`])} AS ${sql.identifier([c])}`))}
      FROM readings r JOIN along_events e ON e.n = r.n
      WHERE e.event_body IS NOT NULL
        AND ${admittedSql(sql.fragment`r.principal`, { org: sql.fragment`e.claimed_org`, role: sql.fragment`e.claimed_role`, ver: sql.fragment`e.claimed_ver`, may: sql.fragment`e.may`, now })}
        AND (${recording.served(now)}) IS TRUE
    ), ${chainAppend(sql.identifier(['along_served']))}`;
}

/** SQL expressions of a reading's claims, its scope for the route (claimsMay) and its instant. */
export type ClaimsSql = { org: FragmentSqlToken; role: FragmentSqlToken; ver: FragmentSqlToken; may: FragmentSqlToken; now: FragmentSqlToken };

/**
 * True (never NULL) where the code admits the principal (`principal`: its row as JSON, null for none)
 * on a route that lets no pending step through, whatever the caller's address.
 */
export function admittedSql(principal: FragmentSqlToken, c: ClaimsSql): FragmentSqlToken {
  const text = (f: string) => sql.fragment`(${principal}->>${f})`;
  const binding: Binding = {
    active: sql.fragment`${text('active')}::boolean`,
    role: text('role'),
    org_id: sql.fragment`${text('org_id')}::int8`,
    token_version: sql.fragment`${text('token_version')}::int4`,
    client_id: text('client_id'),
    suspended: sql.fragment`${text('suspended')}::boolean`,
    expires_at: sql.fragment`${text('expires_at')}::timestamptz`,
    allowed_ips: { jsonArray: sql.fragment`(${principal}->'allowed_ips')` },
    must_change_password: sql.fragment`${text('must_change_password')}::boolean`,
    mfa_enrolment_required: sql.fragment`${text('mfa_enrolment_required')}::boolean`,
    claimed_role: c.role,
    claimed_org: c.org,
    claimed_ver: c.ver,
    now: c.now,
    password_pending: sql.fragment`false`,
    mfa_pending: sql.fragment`false`,
    may: c.may,
    address_allowed: UNSURE,
  };
  return sql.fragment`${ruleSql(PRINCIPAL_ROW, binding)} AND ${ruleSql(ADMISSION, binding)}`;
}
