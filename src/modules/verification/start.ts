import { UniqueIntegrityConstraintViolationError, type CommonQueryMethods } from 'slonik';
import type { Config } from '../../config.ts';
import { jobIds, QUEUES } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import { sealJson } from '../../lib/crypto.ts';
import type { FairShare } from '../../context.ts';
import { recordFixtureCalls } from '../wallet/index.ts';
import { enqueueBackgroundLookup } from './background.ts';
import { fixtureOutcome, fixtureVninOutcome } from './fixtures.ts';
import { expiresAt, newReferenceId, pendingOf, type AskedBy } from './run.ts';
import { settle } from './settle.ts';
import * as repo from './verification.repository.ts';
import type { StoredVninQuery, VerificationQuery } from './verification.schemas.ts';

// How another module has a lookup done: it starts one, cancels one still queued, and reads how its
// lookups ended (outcomes.ts). The lookup's end is reported by its job (its payload names the batch),
// never by a call from here: this module knows the batch only as a column of its own rows.

/**
 * What a batch row may ask: a NIN, a phone or a vNIN. A vNIN whose token its owner lost while the
 * row waited (Redis lost it, or it outlived a vNIN's validity) comes as the token's keyed hash only.
 */
export type LookupQuery = Extract<VerificationQuery, { mode: 'nin' | 'phone' | 'vnin' }> | StoredVninQuery;

export type StartDeps = { db: CommonQueryMethods; config: Config; producer: Producer; fairShare: FairShare };

/**
 * A lookup to start. `delivery: 'batch'`: a batch's row, in the background lane like an asynchronous
 * lookup, named by its batch and lookup so that a unique index lets it be written once (a feeder
 * that died before noting it finds it again). `again`: a lookup started before, as that reference,
 * whose job may have gone missing (Redis lost it, it failed on our own fault).
 */
export type LookupStart = NewLookup | LookupAgain;
export type NewLookup = AskedBy & { delivery: 'batch'; batch: { id: string; lookup: number }; query: LookupQuery; now: Date };
export type LookupAgain = { delivery: 'batch'; batch: { id: string }; orgId: number; again: { referenceId: string; mode: LookupQuery['mode']; reason: string; acceptedAt: Date } };

/**
 * How it started. `decided`: at once, nothing queued (a fixture, free with its zero ledger line; a
 * lost vNIN token, failed `lookup_abandoned`, nothing held). `no_units`: nothing written. `held`:
 * its verification is pending with its unit held; `queue()` queues its job (after whatever the
 * caller must note first). Started `again`: `queued` while its job waits or runs; `lost` when it
 * has none any more, to queue with `queue(token)` (a vNIN's token, when the caller still has it;
 * without one its job ends it failed, unit given back).
 */
export type LookupStarted = Started | StartedAgain;
export type Started =
  | { kind: 'decided'; referenceId: string; status: 'found' | 'not_found' | 'failed'; code: string | null }
  | { kind: 'no_units' }
  | { kind: 'held'; referenceId: string; queue(): Promise<void> };
export type StartedAgain = { kind: 'queued'; referenceId: string } | { kind: 'lost'; referenceId: string; queue(vnin: string | null): Promise<void> };

/** A batch's lookup, as the entrance starts it (see LookupStart and LookupStarted). */
export async function startLookup(deps: StartDeps, s: NewLookup): Promise<Started>;
export async function startLookup(deps: StartDeps, s: LookupAgain): Promise<StartedAgain>;
export async function startLookup(deps: StartDeps, s: LookupStart): Promise<LookupStarted> {
  if ('again' in s) return startAgain(deps, s);
  const { query } = s;
  if ('vninHash' in query) return recordLostVnin(deps, { ...s, query });
  const fixture = 'nin' in query ? fixtureOutcome(query.nin) : 'vnin' in query ? fixtureVninOutcome(query.vnin) : null;
  if (fixture) return recordFixture(deps, { ...s, query }, fixture);
  const ref = newReferenceId();
  const { pending, jobQuery, useOnce } = pendingOf(deps, { ...s, query }, ref, s.now);
  const row = { ...pending, delivery: s.delivery, batchId: s.batch.id, batchLookup: s.batch.lookup };
  const queue = (referenceId: string, acceptedAt: Date, sealed: { keyId: string; data: Buffer } | null) => () =>
    queueLookup(deps, { referenceId, orgId: s.orgId, batchId: s.batch.id, acceptedAt, vnin: useOnce, sealed });
  try {
    // The pending verification and its held unit: one statement (the wallet's hold).
    if (!(await repo.insertPendingHoldingUnit(deps.db, row))) return { kind: 'no_units' };
    return { kind: 'held', referenceId: ref, queue: queue(ref, s.now, jobQuery) };
  } catch (err) {
    const existing = await writtenBefore(deps.db, s.batch, err);
    // Written by a feeder that died before noting it, so before any job held the token: the job
    // queued now may carry it (sealed to the existing reference).
    const again = 'vnin' in query ? sealJson(deps.config.encryptionKeys, query, existing.reference_id) : null;
    return { kind: 'held', referenceId: existing.reference_id, queue: queue(existing.reference_id, existing.created_at, again) };
  }
}

/** The verification of this batch lookup, written before: the unique index refused a second one. */
async function writtenBefore(db: CommonQueryMethods, batch: NewLookup['batch'], err: unknown) {
  if (!(err instanceof UniqueIntegrityConstraintViolationError)) throw err;
  const existing = await repo.findOfBatchLookup(db, batch.id, batch.lookup);
  if (!existing) throw err;
  return existing;
}

/**
 * A vNIN whose token was lost while it waited: it cannot be asked for, so its verification is
 * recorded as ended at once, failed `lookup_abandoned`, with nothing held, queued or charged.
 */
async function recordLostVnin(deps: StartDeps, s: NewLookup & { query: StoredVninQuery }): Promise<Started> {
  const ref = newReferenceId();
  const q = sealJson(deps.config.encryptionKeys, s.query, ref);
  const row: repo.DecidedVerification = {
    referenceId: ref,
    orgId: s.orgId,
    userId: s.userId,
    apiClientId: s.apiClientId,
    reason: s.query.reason,
    consent: s.consent,
    requestId: s.requestId,
    createdAt: s.now,
    expiresAt: expiresAt(deps.config, s.now),
    delivery: s.delivery,
    batchId: s.batch.id,
    batchLookup: s.batch.lookup,
    mode: 'vnin',
    queryEnc: q.data,
    keyId: q.keyId,
    subjectHash: null,
    fixture: false,
    status: 'failed',
    failureCode: 'lookup_abandoned',
    holdsUnit: false,
    recordEnc: null,
  };
  try {
    await repo.insertVerification(deps.db, row);
    return { kind: 'decided', referenceId: ref, status: 'failed', code: 'lookup_abandoned' };
  } catch (err) {
    const existing = await writtenBefore(deps.db, s.batch, err);
    return { kind: 'decided', referenceId: existing.reference_id, status: 'failed', code: 'lookup_abandoned' };
  }
}

/** A fixture NIN or vNIN: decided at once, free, with its zero ledger line (the wallet writes it), as a single fixture call is. */
async function recordFixture(
  deps: StartDeps,
  s: NewLookup & { query: Exclude<LookupQuery, StoredVninQuery> },
  fixture: NonNullable<ReturnType<typeof fixtureOutcome>>,
): Promise<Started> {
  const ref = newReferenceId();
  const { pending } = pendingOf(deps, s, ref, s.now);
  const record = fixture.kind === 'found' ? sealJson(deps.config.encryptionKeys, fixture.record, ref).data : null;
  // A fixture vNIN's refusal (vnin_not_found, ...) is kept as a live one is, for requery and results.
  const code = fixture.kind === 'not_found' ? (fixture.refusal ?? null) : null;
  const row: repo.DecidedVerification = {
    ...pending,
    delivery: s.delivery,
    batchId: s.batch.id,
    batchLookup: s.batch.lookup,
    fixture: true,
    status: fixture.kind,
    failureCode: code ?? undefined,
    holdsUnit: false,
    recordEnc: record,
  };
  const details = { fixture: true, outcome: fixture.kind, mode: s.query.mode, reason: s.query.reason, batch_id: s.batch.id };
  try {
    await recordFixtureCalls(deps.db, { records: repo.decidedRecord(row, details) });
    return { kind: 'decided', referenceId: ref, status: fixture.kind, code };
  } catch (err) {
    const existing = await writtenBefore(deps.db, s.batch, err);
    return { kind: 'decided', referenceId: existing.reference_id, status: fixture.kind, code };
  }
}

/** A lookup started before: its job still waits or runs, or it has none any more (removed here if it ended or failed). */
async function startAgain(deps: StartDeps, s: LookupAgain): Promise<StartedAgain> {
  const { referenceId, mode, reason, acceptedAt } = s.again;
  const job = await deps.producer.queue(QUEUES.lookups).getJob(jobIds.lookup(referenceId));
  const state = job ? await job.getState() : 'missing';
  if (state !== 'missing' && state !== 'failed' && state !== 'completed' && state !== 'unknown') return { kind: 'queued', referenceId };
  if (job) await job.remove();
  return {
    kind: 'lost',
    referenceId,
    queue: (vnin) =>
      queueLookup(deps, {
        referenceId,
        orgId: s.orgId,
        batchId: s.batch.id,
        acceptedAt,
        vnin: mode === 'vnin',
        sealed: vnin ? sealJson(deps.config.encryptionKeys, { mode: 'vnin', vnin, reason }, referenceId) : null,
      }),
  };
}

/**
 * Queues a batch lookup in the background lane (below every synchronous lookup, in turn with other
 * organisations' background lookups), waiting out authority outages like an asynchronous lookup
 * until ASYNC_MAX_WAIT_HOURS after it was accepted. The job id makes a second add a no-op. Without
 * a sealed query the job reads the row's own (a vNIN's job, finding no token, ends it failed).
 */
async function queueLookup(
  deps: Pick<StartDeps, 'producer' | 'fairShare'>,
  o: { referenceId: string; orgId: number; batchId: string; acceptedAt: Date; vnin: boolean; sealed: { keyId: string; data: Buffer } | null },
): Promise<void> {
  // A vNIN's job holds its token: erased as the lookup starts, and the job leaves Redis when done.
  await enqueueBackgroundLookup(
    deps,
    {
      referenceId: o.referenceId,
      orgId: o.orgId,
      delivery: 'batch',
      acceptedAt: o.acceptedAt.getTime(),
      batchId: o.batchId,
      ...(o.sealed ? { query: { keyId: o.sealed.keyId, data: o.sealed.data.toString('base64') } } : {}),
      ...(o.vnin ? { useOnce: true as const } : {}),
    },
    { removeWhenDone: o.vnin },
  );
}

/**
 * The one way another module cancels a queued lookup whose job is not running at this moment
 * (waiting its turn, or waiting out an authority outage): the job is removed (a job a worker holds
 * cannot be, and is left to finish), then the verification ends failed with the caller's `code`,
 * its unit given back. True when it was cancelled here.
 */
export async function cancelLookup(
  deps: Pick<StartDeps, 'db' | 'config' | 'producer' | 'fairShare'>,
  o: { referenceId: string; orgId: number; code: string; detail: string },
): Promise<boolean> {
  const job = await deps.producer.queue(QUEUES.lookups).getJob(jobIds.lookup(o.referenceId));
  if (job) {
    try {
      await job.remove();
    } catch {
      return false;
    }
  }
  const decision = { kind: 'failed' as const, code: o.code, detail: o.detail };
  const cancelled = (await settle(deps.db, deps.config.encryptionKeys, { referenceId: o.referenceId, keyId: null, decision, attempts: 0 })) !== null;
  // Its place in the background lane goes too (best effort: a lost one goes stale by itself).
  await deps.fairShare.background.finish({ orgId: o.orgId, referenceId: o.referenceId }).catch(() => undefined);
  return cancelled;
}
