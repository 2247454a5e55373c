import { sql } from 'slonik';
import { z } from 'zod';
import { jobIds } from '../../jobs/catalog.ts';
import { sealJson } from '../../lib/crypto.ts';
import { AppError, describe } from '../../lib/errors.ts';
import { decodeCursor, encodeCursor, pageOf } from '../../lib/pagination.ts';
import { requireOrgMember, type Principal } from '../auth/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { requireKnownReason, type ReasonsDeps } from '../reasons/index.ts';
import { newReferenceId, reservePendingSlots, subjectHash, SUBSCRIPTION_REQUIRED, vninHash } from '../verification/index.ts';
import * as repo from './batches.repository.ts';
import { reportBatchStatus } from './events.ts';
import { BATCH_ID_RE, consentSchema, type BatchView, type Consent } from './batches.schemas.ts';
import { cancelQueuedLookup, lockKey, noteLookupEnded, type FeedDeps } from './feeder.ts';
import { tokensOf } from './vnin-tokens.ts';
import { lookupAad } from './waiting.ts';
import { checkRows, dedupe, MAX_ROWS, NO_ROWS, TOO_MANY_ROWS, type ConsentCheck, type RawRow } from './rows.ts';

export type BatchDeps = FeedDeps & ReasonsDeps;

export const BATCH_NOT_FOUND = 'Batch not found';
export const CONSENT_REQUIRED = 'consent is required by your organisation';

const newBatchId = () => `BAT-${newReferenceId().slice(4)}`;

/** The organisation's `require_consent` setting, as for a single live verification. */
async function consentRequired(deps: BatchDeps, orgId: number): Promise<boolean> {
  return (await organisationSettings(deps.db, orgId)).require_consent;
}

/** A row's own consent, by the rules of the batch's (and every verification's) consent object. */
const checkConsent: ConsentCheck = (value) => {
  const p = consentSchema.safeParse(value);
  if (p.success) return { consent: p.data };
  const issue = p.error.issues[0]!;
  return { error: `consent${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}: ${issue.message}` };
};

/** POST /verify-nin/batches: validates every row, stores the batch, and asks the workers to feed it. */
export async function createBatch(
  deps: BatchDeps,
  req: { principal: Principal; rows: RawRow[]; defaultReason: string | null; consent: Consent | null; requestId: string },
): Promise<{ id: string; status: 'queued'; total: number; invalid: number; estimated_units: number }> {
  const orgId = requireOrgMember(req.principal);
  if (req.rows.length === 0) throw new AppError('bad_request', NO_ROWS);
  if (req.rows.length > MAX_ROWS) throw new AppError('payload_too_large', TOO_MANY_ROWS);
  if (req.defaultReason !== null) await requireKnownReason(deps, req.defaultReason);
  const reasons = new Set(req.rows.map((r) => r.reason).filter((r) => r !== ''));
  const known = new Set<string>(req.defaultReason ? [req.defaultReason] : []);
  for (const r of reasons) {
    if (r.length > 100) continue;
    try {
      await requireKnownReason(deps, r);
      known.add(r);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
    }
  }
  const checked = checkRows(req.rows, { defaultReason: req.defaultReason, knownReason: (k) => known.has(k), batchConsent: req.consent, checkConsent });
  const { lookups, lookupOf } = dedupe(checked);
  // Fixture values are exempt, as for a single verification: only rows that reach the authority need it.
  if (checked.some((r) => r.invalid === null && !r.fixture && r.consent === null) && (await consentRequired(deps, orgId))) {
    throw new AppError('bad_request', CONSENT_REQUIRED);
  }
  const live = lookups.filter((l) => !l.fixture);
  if (live.length > 0 && !req.principal.subscriptionActive) throw new AppError('forbidden', SUBSCRIPTION_REQUIRED);
  const invalid = checked.filter((r) => r.invalid !== null).length;
  const valid = checked.length - invalid;

  const id = newBatchId();
  const ring = deps.config.encryptionKeys;
  // A vNIN is never stored: PostgreSQL gets its keyed hash, the token waits sealed in Redis.
  const sealedLookups = lookups.map((l) => {
    const s = sealJson(ring, l.kind === 'vnin' ? vninHash(deps.config, l.value) : l.value, lookupAad(id, l.idx));
    // Whom a NIN row concerns, as a verification keeps it: subject:export and subject:erase find it.
    const subject = l.kind === 'nin' ? subjectHash(deps.config.SUBJECT_HASH_KEY, l.value) : null;
    return { idx: l.idx, kind: l.kind, fixture: l.fixture, reason: l.reason, rowCount: l.rowCount, queryEnc: s.data, keyId: s.keyId, consent: l.consent, subjectHash: subject };
  });
  const tokens = lookups.filter((l) => l.kind === 'vnin').map((l) => ({ idx: l.idx, vnin: l.value }));
  const rows = checked.map((r, i) => ({ rowNo: r.rowNo, clientRef: r.clientRef, lookupIdx: lookupOf[i] ?? null, invalidReason: r.invalid }));
  // A batch of invalid rows only has nothing to look up: it is complete as it is created.
  const reason = req.defaultReason ?? lookups[0]?.reason ?? '';
  // The tokens first: a batch is never stored with its tokens missing. If the batch is then not
  // stored, they are removed (or expire with a vNIN's validity).
  await tokensOf(deps).keep(id, tokens);
  try {
    await deps.db.transaction(async (tx) => {
      // ORG_MAX_PENDING counts every row not yet ended: the verifications' pending counter (whose row
      // lock, taken first, orders concurrent batches and asynchronous lookups of the organisation) and
      // the batch rows it does not see yet. The whole batch fits, or none of it is taken (429).
      const cap = deps.config.ORG_MAX_PENDING;
      await reservePendingSlots(tx, { orgId, n: 0, cap });
      await reservePendingSlots(tx, { orgId, n: valid + (await repo.uncountedPendingRows(tx, orgId)), cap });
      await repo.insertBatch(
        tx,
        { id, orgId, userId: req.principal.userId, apiClientId: req.principal.apiClientId, reason, total: checked.length, invalid, estimatedUnits: live.length, requestId: req.requestId, createdAt: deps.clock.now() },
        sealedLookups,
        rows,
      );
      if (lookups.length === 0 && (await repo.setStatus(tx, id, 'completed'))) await reportBatchStatus(tx, id, 'completed');
    });
  } catch (err) {
    if (tokens.length > 0) await tokensOf(deps).dropAll(id).catch(() => undefined);
    throw err;
  }
  if (lookups.length > 0) {
    try {
      await deps.producer.enqueue('batch.feed', { batchId: id }, { jobId: jobIds.batchStart(id) });
    } catch (err) {
      // The batch is stored: the periodic feed starts it.
      deps.logger.warn({ err: describe(err), batchId: id }, 'batch start not queued; the periodic feed starts it');
    }
  }
  deps.logger.info({ batchId: id, orgId, total: checked.length, invalid, lookups: lookups.length }, 'batch accepted');
  return { id, status: 'queued', total: checked.length, invalid, estimated_units: live.length };
}

export function viewOf(b: repo.BatchRow, t: repo.Tally): BatchView {
  return {
    id: b.id,
    status: b.status,
    paused_reason: b.paused_reason,
    total: b.total,
    done: t.found + t.not_found + t.failed + t.cancelled + b.invalid,
    found: t.found,
    not_found: t.not_found,
    failed: t.failed,
    invalid: b.invalid,
    cancelled: t.cancelled,
    units_charged: t.units_charged,
    created_at: b.created_at.toISOString(),
    finished_at: b.finished_at?.toISOString() ?? null,
  };
}

/** The caller's organisation's batch, or 404 (another organisation's batch reads as unknown). */
export async function requireBatch(deps: Pick<BatchDeps, 'db'>, principal: Principal, id: string): Promise<repo.BatchRow> {
  const orgId = requireOrgMember(principal);
  const b = BATCH_ID_RE.test(id) ? await repo.findBatch(deps.db, id, orgId) : null;
  if (!b) throw new AppError('not_found', BATCH_NOT_FOUND);
  return b;
}

export async function getBatch(deps: Pick<BatchDeps, 'db'>, principal: Principal, id: string): Promise<BatchView> {
  const b = await requireBatch(deps, principal, id);
  return viewOf(b, await repo.tally(deps.db, b.id));
}

const SCOPE = 'batches';
const cursorShape = z.tuple([z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/), z.string().regex(BATCH_ID_RE)]);

export async function listBatches(deps: Pick<BatchDeps, 'db'>, principal: Principal, q: { limit: number; cursor?: string | undefined }): Promise<{ data: BatchView[]; next_cursor: string | null }> {
  const orgId = requireOrgMember(principal);
  const after = q.cursor ? decodeCursor(SCOPE, q.cursor, cursorShape) : undefined;
  const rows = await repo.listBatches(deps.db, orgId, q.limit + 1, after);
  const page = pageOf(rows, q.limit, (last) => encodeCursor(SCOPE, [last.created_key, last.id]));
  const data = await Promise.all(page.data.map(async (b) => viewOf(b, await repo.tally(deps.db, b.id))));
  return { data, next_cursor: page.next };
}

/**
 * POST /verify-nin/batches/{id}/cancel: lookups not yet queued end cancelled at once; queued ones
 * whose job has not started are taken off the queue and end cancelled, their units given back.
 * Lookups already at the authority finish as they would have. Cancelling an ended batch changes nothing.
 */
export async function cancelBatch(deps: BatchDeps, principal: Principal, id: string): Promise<BatchView> {
  const b = await requireBatch(deps, principal, id);
  const cancelled = await deps.db.transaction(async (tx) => {
    // Waits for a feed in progress: after this, no feed of this batch queues anything more.
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${lockKey(b.id)})`);
    const locked = await repo.lockBatch(tx, b.id);
    if (!locked || locked.status === 'completed' || locked.status === 'cancelled') return false;
    await repo.setStatus(tx, b.id, 'cancelled');
    await repo.cancelWaiting(tx, b.id);
    await reportBatchStatus(tx, b.id, 'cancelled');
    return true;
  });
  if (cancelled) {
    // The waiting rows' vNIN tokens go with them (best effort: they expire with a vNIN's validity).
    await tokensOf(deps)
      .dropAll(b.id)
      .catch((err: unknown) => deps.logger.warn({ err: describe(err), batchId: b.id }, 'vNIN tokens of a cancelled batch not removed; they expire by themselves'));
    for (const q of await repo.queuedLookups(deps.db, b.id)) {
      await cancelQueuedLookup(deps, { referenceId: q.reference_id, orgId: q.org_id });
      await noteLookupEnded(deps, b.id, q.reference_id);
    }
    deps.logger.info({ batchId: b.id }, 'batch cancelled');
  }
  return getBatch(deps, principal, b.id);
}
