import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { batcher } from '../../lib/batch.ts';
import { chainAppend, EVENT_COLUMNS, eventTexts, type CanonicalFields } from '../audit/index.ts';
import { clientPrincipalQuery, clientPrincipalRow, principalRow, userPrincipalQuery } from '../organisations/index.ts';
import type { TokenClaims } from './auth.schemas.ts';
import { subjectOf } from './auth.service.ts';

const batchRow = z.object({ n: z.coerce.number(), principal: z.unknown() }).loose();
const MAX_BATCH = 64;

export type PrincipalRow = z.infer<typeof principalRow> | z.infer<typeof clientPrincipalRow>;
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
  // A row the schema does not know is our fault (a 500), never the caller's (a ZodError would be a 4xx).
  const parsed = subjectOf(c).kind === 'client' ? clientPrincipalRow.safeParse(json) : principalRow.safeParse(json);
  if (!parsed.success) throw new Error('along: the principal row does not match its schema');
  return { row: rest, principalRow: parsed.data, recorded };
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
           CASE WHEN i.user_id IS NOT NULL
             THEN (SELECT row_to_json(p) FROM (${userPrincipalQuery(sql.fragment`i.user_id`)}) p)
             ELSE (SELECT row_to_json(p) FROM (${clientPrincipalQuery(sql.fragment`i.client_id`)}) p)
           END AS principal`;
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
 * `along_served` and the append of its events. The admission written here is the part of
 * principalOfRow and admissionError (auth.service.ts, auth.middleware.ts) that the row decides,
 * never wider: where it is unsure (an API client with an address list) it records nothing, and the
 * route records the event itself once the code has decided (the code decides every answer; this
 * only spares that statement when they agree). Each reading is judged at its own instant.
 */
function servedQuery(recording: AlongRecording) {
  const now = sql.fragment`e.event_now`;
  const p = sql.fragment`r.principal`;
  return sql.fragment`
    along_served AS (
      SELECT row_number() OVER (ORDER BY r.n) AS k, r.n, ${list(EVENT_COLUMNS.map((c) => sql.fragment`e.${sql.identifier([`event_${c}`])} AS ${sql.identifier([c])}`))}
      FROM readings r JOIN along_events e ON e.n = r.n
      WHERE e.event_body IS NOT NULL AND e.may
        AND (${p}->>'active')::boolean AND ${p}->>'role' = e.claimed_role
        AND (${p}->>'org_id')::int8 = e.claimed_org AND (${p}->>'token_version')::int4 = e.claimed_ver
        AND CASE WHEN ${p}->>'client_id' IS NOT NULL
          THEN NOT (${p}->>'suspended')::boolean
            AND (${p}->>'expires_at' IS NULL OR date_trunc('milliseconds', (${p}->>'expires_at')::timestamptz) > ${now})
            AND coalesce(json_array_length(CASE WHEN json_typeof(${p}->'allowed_ips') = 'array' THEN ${p}->'allowed_ips' END), 0) = 0
          ELSE NOT (${p}->>'must_change_password')::boolean AND NOT (${p}->>'mfa_enrolment_required')::boolean
        END
        AND (${recording.served(now)}) IS TRUE
    ), ${chainAppend(sql.identifier(['along_served']))}`;
}
