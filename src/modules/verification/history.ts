import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { cursorTimestamp, decodeCursor, encodeCursor, lagosRange, pageOf } from '../../lib/pagination.ts';
import { requireOrgMember, type Principal } from '../auth/index.ts';
import {
  VERIFICATION_CSV_COLUMNS,
  verificationSummaryRow,
  type VerificationFilters,
  type VerificationListQuery,
  type VerificationSummary,
} from './history.schemas.ts';
import { csvInstant, csvLine, csvName, csvText, streamCsvLines } from '../../lib/csv-sql.ts';
import { DELIVERIES, REFERENCE_RE, type VerificationStatus } from './verification.schemas.ts';
import { openJson, type KeyRing } from '../../lib/crypto.ts';
import { keyRing } from './sealing.ts';
import { verdictOfVerification, type VerdictFields } from './verdict.ts';

const SCOPE = 'verifications';
const cursorShape = z.tuple([cursorTimestamp, z.string().regex(REFERENCE_RE)]);

function filterParts(orgId: number, q: VerificationFilters) {
  const range = lagosRange(q.from, q.to);
  const parts = [sql.fragment`v.org_id = ${orgId}`];
  if (q.status) parts.push(sql.fragment`v.status = ${q.status}`);
  // `mode=sync|async|batch` filters on the delivery; a lookup kind there filters on the kind.
  if (q.mode) parts.push((DELIVERIES as readonly string[]).includes(q.mode) ? sql.fragment`v.delivery = ${q.mode}` : sql.fragment`v.mode = ${q.mode}`);
  if (q.kind) parts.push(sql.fragment`v.mode = ${q.kind}`);
  if (q.delivery) parts.push(sql.fragment`v.delivery = ${q.delivery}`);
  if (q.batch_id) parts.push(sql.fragment`v.batch_id = ${q.batch_id}`);
  if (range.since) parts.push(sql.fragment`v.created_at >= ${sql.timestamp(range.since)}`);
  if (range.before) parts.push(sql.fragment`v.created_at < ${sql.timestamp(range.before)}`);
  return parts;
}

const withActor = sql.fragment`
  verifications v
  LEFT JOIN users u ON u.id = v.user_id
  LEFT JOIN api_clients c ON c.id = v.api_client_id`;
const charged = sql.fragment`EXISTS (SELECT 1 FROM wallet_transactions t WHERE t.kind = 'verification' AND t.reference = v.reference_id)`;

/**
 * Every verification of the organisation, whoever asked: a user (users row) or an API client
 * (api_clients row, retired ones too); exactly one of the two is set (verifications_one_actor).
 * Newest first by (created_at, reference_id), served by verifications_org_idx. `charged` is read
 * from the ledger, not from the status: once a record is erased its status is `expired`, but its
 * debit line stays (found through the one-debit unique index).
 */
async function listPage(
  db: CommonQueryMethods,
  f: { orgId: number; q: VerificationListQuery; after?: readonly [string, string]; limit: number },
) {
  const parts = filterParts(f.orgId, f.q);
  if (f.after) parts.push(sql.fragment`(v.created_at, v.reference_id) < (${f.after[0]}::timestamptz, ${f.after[1]})`);
  return db.any(sql.type(verificationSummaryRow)`
    SELECT v.reference_id, v.delivery AS mode, v.mode AS kind, v.delivery, v.batch_id, v.reason, v.status, v.fixture, u.username, c.client_id, c.name AS client_name, v.consent, v.created_at,
           v.failure_code, v.key_id, CASE WHEN v.status = 'found' AND v.mode IN ('face', 'match') THEN v.record_enc END AS record_enc,
           ${charged} AS charged,
           to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
    FROM ${withActor}
    WHERE ${sql.join(parts, sql.fragment` AND `)}
    ORDER BY v.created_at DESC, v.reference_id DESC
    LIMIT ${f.limit}`);
}

/** GET /verifications: every member of the organisation sees its verifications. */
export async function listVerifications(
  db: DatabasePool,
  ring: KeyRing,
  principal: Principal,
  q: VerificationListQuery,
): Promise<{ data: VerificationSummary[]; next_cursor: string | null }> {
  const orgId = requireOrgMember(principal);
  const after = q.cursor ? decodeCursor(SCOPE, q.cursor, cursorShape) : undefined;
  const rows = await listPage(db, { orgId, q, ...(after ? { after } : {}), limit: q.limit + 1 });
  const page = pageOf(rows, q.limit, (last) => encodeCursor(SCOPE, [last.created_key, last.reference_id]));
  return {
    data: page.data.map((r) => ({
      reference_id: r.reference_id,
      mode: r.mode,
      kind: r.kind,
      delivery: r.delivery,
      batch_id: r.batch_id,
      reason: r.reason,
      status: r.status,
      ...verdictOfRow(ring, r),
      charged: r.charged,
      fixture: r.fixture,
      username: r.username,
      api_client: r.client_id === null ? null : { client_id: r.client_id, name: r.client_name ?? '' },
      consent: r.consent,
      created_at: r.created_at,
    })),
    next_cursor: page.next,
  };
}

/**
 * A row's verdict (verdict.ts): a face match or match-only verification's result is read from its
 * sealed value, as a requery reads it; one sealed under a key this process lacks has none to show.
 */
function verdictOfRow(ring: KeyRing, r: { reference_id: string; kind: string; status: VerificationStatus; failure_code: string | null; record_enc: Buffer | null; key_id: string | null }): VerdictFields {
  const row = { status: r.status, failure_code: r.failure_code, mode: r.kind };
  if (!r.record_enc || !r.key_id) return verdictOfVerification(row, null);
  if (!ring.some((k) => k.id === r.key_id)) return { verdict: null, verdict_reasons: [] };
  return verdictOfVerification(row, openJson<unknown>(keyRing(ring, r.key_id), { keyId: r.key_id, data: r.record_enc }, r.reference_id));
}

const csvField: Record<(typeof VERIFICATION_CSV_COLUMNS)[number], ReturnType<typeof sql.fragment>> = {
  reference_id: sql.fragment`v.reference_id`,
  mode: csvText(sql.fragment`v.delivery`),
  kind: csvText(sql.fragment`v.mode`),
  batch_id: csvText(sql.fragment`v.batch_id`),
  reason: csvText(sql.fragment`v.reason`),
  status: csvText(sql.fragment`v.status`),
  charged: sql.fragment`${charged}::text`,
  fixture: sql.fragment`v.fixture::text`,
  username: csvName(sql.fragment`u.username`),
  api_client_id: csvText(sql.fragment`c.client_id`),
  api_client_name: csvName(sql.fragment`c.name`),
  consent_obtained_at: csvText(sql.fragment`v.consent->>'obtained_at'`),
  consent_channel: csvName(sql.fragment`v.consent->>'channel'`),
  consent_notice_version: csvName(sql.fragment`v.consent->>'notice_version'`),
  created_at: csvInstant(sql.fragment`v.created_at`),
};

export const VERIFICATION_CSV_HEADER = `${VERIFICATION_CSV_COLUMNS.join(',')}\r\n`;

/** GET /verifications as CSV: the whole filtered range, newest first, streamed from `db` (the export pool). */
export function streamVerificationCsv(db: DatabasePool, principal: Principal, q: VerificationFilters) {
  const orgId = requireOrgMember(principal);
  const parts = filterParts(orgId, q);
  return {
    orgId,
    stream: (onStream: (rows: NodeJS.ReadableStream) => void) =>
      streamCsvLines(
        db,
        csvLine(VERIFICATION_CSV_COLUMNS, csvField),
        sql.fragment`FROM ${withActor} WHERE ${sql.join(parts, sql.fragment` AND `)} ORDER BY v.created_at DESC, v.reference_id DESC`,
        onStream,
      ),
  };
}
