import { sql, type CommonQueryMethods, type FragmentSqlToken, type IdentifierSqlToken } from 'slonik';
import { z } from 'zod';
import type { TimeRange } from '../../lib/pagination.ts';
import { canonicalBody, type CanonicalFields } from './canonical.ts';

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));
const intOrNull = z.union([z.number(), z.bigint(), z.string(), z.null()]).transform((v) => (v === null ? null : Number(v)));
const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));

export const eventRow = z.object({
  id: int,
  at: time,
  org_id: intOrNull,
  actor: z.string(),
  action: z.string(),
  target: z.string().nullable(),
  request_id: z.string().nullable(),
  ip: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  prev_hash: z.instanceof(Buffer),
  hash: z.instanceof(Buffer),
});
export type EventRow = z.infer<typeof eventRow>;

const columns = sql.fragment`id, at, org_id, actor, action, target, request_id, ip, details, prev_hash, hash`;

const appendedRow = z.object({ id: int });

/**
 * The chain's append, as the common table expressions of a statement: the events are the rows of
 * the CTE `source` names (columns k, numbered from 1 in chain order without gaps, then body, at,
 * org_id, actor, action, target, request_id, ip, details, as eventTexts gives them). The chain head
 * is locked only when there is an event to append (a writer that waited for it reads the head the
 * one before it committed), each event's id and hash follow from the one before it, and the head
 * moves to the last. Defines `audit_chain(k, id, prev_hash, hash)` for the statement's own query.
 * Used by insertEvents, and by a statement of another module that records the events of what it
 * reads (the requery: auth/along.ts), so there is one definition of how an event joins the chain.
 */
export function chainAppend(source: IdentifierSqlToken): FragmentSqlToken {
  return sql.fragment`
    audit_head AS (
      SELECT last_id, last_hash FROM audit_chain_head WHERE singleton AND EXISTS (SELECT 1 FROM ${source}) FOR UPDATE
    ), audit_chain (k, id, prev_hash, hash) AS (
      SELECT i.k, h.last_id + 1, h.last_hash, sha256(h.last_hash || convert_to((h.last_id + 1)::text || E'\n' || i.body, 'UTF8'))
      FROM audit_head h JOIN ${source} i ON i.k = 1
      UNION ALL
      SELECT i.k, c.id + 1, c.hash, sha256(c.hash || convert_to((c.id + 1)::text || E'\n' || i.body, 'UTF8'))
      FROM audit_chain c JOIN ${source} i ON i.k = c.k + 1
    ), audit_moved AS (
      UPDATE audit_chain_head SET last_id = tail.id, last_hash = tail.hash
      FROM (SELECT id, hash FROM audit_chain ORDER BY k DESC LIMIT 1) tail
      WHERE singleton
    ), audit_inserted AS (
      INSERT INTO audit_events (id, at, org_id, actor, action, target, request_id, ip, details, prev_hash, hash)
      SELECT c.id, i.at::timestamptz, i.org_id::bigint, i.actor, i.action, i.target, i.request_id, i.ip, i.details::jsonb, c.prev_hash, c.hash
      FROM audit_chain c JOIN ${source} i ON i.k = c.k
      RETURNING id
    )`;
}

/** The columns chainAppend reads after k, in its order: an event as text (sent as text arrays). */
export const EVENT_COLUMNS = ['body', 'at', 'org_id', 'actor', 'action', 'target', 'request_id', 'ip', 'details'] as const;

export function eventTexts(e: CanonicalFields): (string | null)[] {
  return [canonicalBody(e), e.at.toISOString(), e.orgId === null ? null : String(e.orgId), e.actor, e.action, e.target, e.requestId, e.ip, JSON.stringify(e.details)];
}

// Built once: slonik flattens a fragment when it is made, which costs CPU on every statement.
const INPUT_COLUMNS = sql.join(EVENT_COLUMNS.map((c) => sql.identifier([c])), sql.fragment`, `);
const APPEND_INPUT = chainAppend(sql.identifier(['input']));

/**
 * Appends events, in order, in one statement (chainAppend). In a caller's transaction the head
 * stays locked until COMMIT, so callers record last, just before it.
 */
export async function insertEvents(db: CommonQueryMethods, events: readonly CanonicalFields[]): Promise<number[]> {
  const texts = events.map(eventTexts);
  const column = (i: number) => sql.array(texts.map((t) => t[i] ?? null), 'text');
  const ids = await db.anyFirst(sql.prepared('audit_append', appendedRow)`
    WITH RECURSIVE input AS (
      SELECT * FROM unnest(${sql.join(EVENT_COLUMNS.map((_, i) => column(i)), sql.fragment`, `)})
        WITH ORDINALITY AS t(${INPUT_COLUMNS}, k)
    ), ${APPEND_INPUT}
    SELECT id FROM audit_inserted ORDER BY id`);
  if (ids.length !== events.length) throw new Error(`audit: ${events.length} events given, ${ids.length} written`);
  return [...ids];
}

export type EventFilter = { orgId: number; action?: string; range: TimeRange };

function where(f: EventFilter, beforeId?: number) {
  const parts = [sql.fragment`org_id = ${f.orgId}`];
  if (f.action) parts.push(sql.fragment`action = ${f.action}`);
  if (f.range.since) parts.push(sql.fragment`at >= ${sql.timestamp(f.range.since)}`);
  if (f.range.before) parts.push(sql.fragment`at < ${sql.timestamp(f.range.before)}`);
  if (beforeId !== undefined) parts.push(sql.fragment`id < ${beforeId}`);
  return sql.join(parts, sql.fragment` AND `);
}

/** Newest first, served by audit_events_org_idx (or the action index when filtered by action). */
export async function listEvents(db: CommonQueryMethods, f: EventFilter, limit: number, beforeId?: number) {
  return db.any(sql.type(eventRow)`
    SELECT ${columns} FROM audit_events WHERE ${where(f, beforeId)} ORDER BY id DESC LIMIT ${limit}`);
}

/** The whole chain in id order, a batch at a time (audit:verify). */
export async function chainBatch(db: CommonQueryMethods, afterId: number, limit: number) {
  return db.any(sql.type(eventRow)`SELECT ${columns} FROM audit_events WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`);
}

export async function chainHead(db: CommonQueryMethods) {
  return db.one(sql.type(z.object({ last_id: int, last_hash: z.instanceof(Buffer) }))`
    SELECT last_id, last_hash FROM audit_chain_head WHERE singleton`);
}
