import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { JobPayload, JobResult } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { describe } from '../../lib/errors.ts';
import type { BackgroundLane, FairShare } from '../../context.ts';
import type { Logger } from '../../lib/logger.ts';
import { cancelLookup, lookupOutcomes, startVerification, type LookupOutcome } from '../verification/index.ts';
import * as repo from './batches.repository.ts';
import { reportBatchStatus } from './events.ts';
import { tokensOf } from './vnin-tokens.ts';
import { queryOfWaiting } from './waiting.ts';

/**
 * What feeding a batch needs; the workers (and the API, for cancel) provide it. `lane`: the workers'
 * gate for background steps (background-lane.ts); without it (the API) a step runs at once.
 */
export type FeedDeps = { db: DatabasePool; config: Config; producer: Producer; clock: Clock; logger: Logger; fairShare: FairShare; lane?: Pick<BackgroundLane, 'run' | 'refresh' | 'busy'> };

/** One background step: taking one row, or noting one lookup's end. Steps never nest (a gate of width one would wait on itself). */
const step = <T>(deps: Pick<FeedDeps, 'lane'>, fn: () => Promise<T>): Promise<T> => (deps.lane ? deps.lane.run(fn) : fn());

// Feeding and cancelling one batch are serialised by an advisory lock on the batch id (the class
// keeps these locks apart from any other use of advisory locks).
const LOCK_CLASS = 1919;
const lockKey = (batchId: string) => sql.fragment`${LOCK_CLASS}, hashtext(${batchId})`;

/** The failure code of a batch lookup ended by its batch's cancellation (kept by its verification). */
export const BATCH_CANCELLED = 'batch_cancelled';

/**
 * Cancels a queued lookup of the batch whose job is not running: its verification ends failed
 * `batch_cancelled`, unit given back. True when it was cancelled here.
 */
export function cancelQueuedLookup(deps: Pick<FeedDeps, 'db' | 'config' | 'producer' | 'fairShare'>, o: { referenceId: string; orgId: number }): Promise<boolean> {
  return cancelLookup(deps, { ...o, code: BATCH_CANCELLED, detail: 'batch cancelled before the lookup started' });
}

function lookupState(o: LookupOutcome): 'found' | 'not_found' | 'failed' | 'cancelled' | null {
  switch (o.status) {
    case 'pending':
      return null;
    case 'found':
    case 'not_found':
      return o.status;
    case 'expired':
      return 'failed';
    case 'failed':
      return o.failureCode === BATCH_CANCELLED ? 'cancelled' : 'failed';
  }
}

/** Ends the batch once none of its rows is pending; the batch row lock orders concurrent last lookups. True when it ended here. */
export async function completeIfDone(tx: CommonQueryMethods, batchId: string): Promise<boolean> {
  const b = await repo.lockBatch(tx, batchId);
  if (!b || b.status === 'completed' || b.status === 'cancelled') return false;
  if (await repo.anyPending(tx, batchId)) return false;
  if (!(await repo.setStatus(tx, batchId, 'completed'))) return false;
  await reportBatchStatus(tx, batchId, 'completed');
  return true;
}

/** A batch that ended keeps no vNIN token (one left by a feeder that died after queuing its job). */
async function forgetTokens(deps: FeedDeps | (Pick<FeedDeps, 'producer' | 'config'> & { logger: Logger }), batchId: string): Promise<void> {
  await tokensOf(deps)
    .dropAll(batchId)
    .catch((err: unknown) => deps.logger.warn({ err: describe(err), batchId }, 'vNIN tokens of an ended batch not removed; they expire by themselves'));
}

/**
 * A batch lookup's verification has ended (its job settled it, or a cancel did): the lookup takes
 * its outcome, and the batch ends if it was the last. Safe to repeat: both steps are guarded.
 */
export async function noteLookupEnded(
  deps: { db: DatabasePool; config: Config; producer: Producer; logger: Logger },
  batchId: string,
  referenceId: string,
  known?: { state: 'found' | 'not_found' | 'failed' | 'cancelled'; failureCode: string | null },
): Promise<void> {
  let ended = known;
  if (!ended) {
    const outcome = (await lookupOutcomes({ db: deps.db, ring: deps.config.encryptionKeys }, [referenceId], { records: false })).get(referenceId);
    const state = outcome ? lookupState(outcome) : null;
    if (!state) return;
    // A failure's code, or a vNIN refusal's (not_found), as the verification keeps it.
    ended = { state, failureCode: state === 'failed' ? (outcome!.failureCode ?? 'upstream_unavailable') : state === 'not_found' ? outcome!.failureCode : null };
  }
  const e = ended;
  const done = await deps.db.transaction(async (tx) => {
    // The lock first: two last lookups ending together are ordered, and the second sees the first's end.
    await repo.lockBatch(tx, batchId);
    return (await repo.markEnded(tx, batchId, referenceId, e.state, e.failureCode)) && (await completeIfDone(tx, batchId));
  });
  if (done) await forgetTokens(deps, batchId);
}

// Feeds asked for while this process was feeding the same batch: run once more after, so the last
// settlement's refill is never lost to the lock.
const knocked = new Set<string>();

/**
 * Queues a batch's next lookups up to BATCH_QUEUE_DEPTH: each takes its unit as it is queued. With no
 * spendable unit the batch pauses (insufficient_units) and the next feed after a credit resumes it.
 * `reconcile` (the periodic pass) also settles lookups whose end was not noted and re-queues
 * lookups whose job was lost. Returns how many lookups were queued.
 */
export async function feedBatch(deps: FeedDeps, batchId: string, o: { reconcile?: boolean } = {}): Promise<number> {
  let queued = 0;
  for (let round = 0; round < 5; round++) {
    knocked.delete(batchId);
    const ran = await deps.db.connect(async (conn) => {
      const locked = await conn.oneFirst(sql.type(z.object({ ok: z.boolean() }))`SELECT pg_try_advisory_lock(${lockKey(batchId)}) AS ok`);
      if (!locked) {
        knocked.add(batchId);
        return false;
      }
      try {
        queued += await feedLocked(deps, conn, batchId, o.reconcile ?? false);
      } finally {
        await conn.query(sql.unsafe`SELECT pg_advisory_unlock(${lockKey(batchId)})`);
      }
      return true;
    });
    if (!ran || !knocked.has(batchId)) break;
  }
  return queued;
}

/**
 * A batch's queue depth while interactive lookups come and go. The CPU a batch takes from them grows
 * with its rows a second, and rows a second are the lookups in flight over the time each is in
 * flight (Little's law): against a fast authority two in flight already make a hundred rows a
 * second, against one answering in 1.2 s it takes 120 for the same rate, and those wait at the
 * authority without using our CPU. So the depth follows the measured mean lookup time, between
 * BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE and BATCH_QUEUE_DEPTH.
 */
export function depthWhileInteractive(c: Pick<Config, 'BATCH_QUEUE_DEPTH' | 'BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE' | 'BATCH_ROWS_PER_SECOND_WHILE_INTERACTIVE'>, meanLookupMs: number): number {
  const forRate = Math.ceil((c.BATCH_ROWS_PER_SECOND_WHILE_INTERACTIVE * Math.max(0, meanLookupMs)) / 1000);
  return Math.min(c.BATCH_QUEUE_DEPTH, Math.max(c.BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE, forRate));
}

// Lookups of one feed handled at once: their holds, rows and enqueues overlap, so a feed takes a
// few round trips whatever its size (one by one, a loaded machine fed a batch slower than the
// authority answered it).
const PARALLEL = 16;

type Fed = 'queued' | 'decided' | 'no_units' | 'skipped';

async function feedOne(deps: FeedDeps, batch: repo.BatchRow, w: repo.WaitingLookup): Promise<Fed> {
  const s = await startVerification(deps, {
    delivery: 'batch',
    batch: { id: batch.id, lookup: w.idx },
    orgId: batch.org_id,
    userId: batch.user_id,
    apiClientId: batch.api_client_id,
    // A vNIN whose token is gone (Redis lost it, or it outlived a vNIN's validity) comes as its hash:
    // nothing can be asked, so the row ends at once, failed, with no unit held and no job.
    query: await queryOfWaiting(deps, batch, w),
    consent: w.consent,
    requestId: batch.request_id,
    now: deps.clock.now(),
  });
  const vnin = w.kind === 'vnin';
  if (s.kind === 'no_units') return 'no_units';
  if (s.kind === 'decided') {
    // A fixture (free, its ledger line written) or a lost token: no job, the row ends here.
    await repo.markQueued(deps.db, batch.id, w.idx, s.referenceId, s.status, s.code);
    if (vnin) await tokensOf(deps).drop(batch.id, w.idx);
    return 'decided';
  }
  if (!(await repo.markQueued(deps.db, batch.id, w.idx, s.referenceId))) {
    // The row was cancelled meanwhile (the feed's lock keeps a cancel and a subject's erasure out
    // while it runs, so only a path that skipped the lock gets here): its lookup never happens.
    await cancelQueuedLookup(deps, { referenceId: s.referenceId, orgId: batch.org_id });
    return 'skipped';
  }
  try {
    // A token leaves Redis before its job is added: lost to a crash in between, its row ends
    // lookup_abandoned; the other order could leave a copy behind for a second job to send again.
    if (vnin) await tokensOf(deps).drop(batch.id, w.idx);
    await s.queue();
  } catch (err) {
    // The verification and its hold stand; the periodic pass queues its job again.
    deps.logger.warn({ err: describe(err), batchId: batch.id, referenceId: s.referenceId }, 'batch lookup not queued; the periodic feed retries');
  }
  return 'queued';
}

async function feedLocked(deps: FeedDeps, conn: CommonQueryMethods, batchId: string, reconcile: boolean): Promise<number> {
  const batch = await repo.findBatch(conn, batchId);
  if (!batch || batch.status === 'completed' || batch.status === 'cancelled') return 0;
  if (reconcile) await reconcileQueued(deps, conn, batchId);

  // Shallower while interactive calls come and go: what is queued runs ungated (background-lane.ts).
  const depth = deps.lane?.busy ? depthWhileInteractive(deps.config, await deps.fairShare.meanLookupMs()) : deps.config.BATCH_QUEUE_DEPTH;
  const inQueue = await repo.countQueued(conn, batchId);
  const room = depth - inQueue;
  // A running batch is topped up by the quarter of its depth, not lookup by lookup: one feed per
  // settlement would cost more than the lookups it feeds. A paused one tries again at once.
  if (batch.status === 'running' && inQueue > 0 && room < Math.max(1, Math.floor(depth / 4))) return 0;
  const results: Fed[] = [];
  if (room > 0) {
    const waiting = await repo.nextWaiting(conn, batchId, room);
    for (let i = 0; i < waiting.length && !results.includes('no_units'); i += PARALLEL) {
      // Every lookup of the round settles before the lock can go: one that failed must not leave the
      // others running unlocked (a cancel could then pass them).
      // Each row is a step of the background lane: while interactive lookups are in flight, rows
      // are taken one at a time (BACKGROUND_STEPS_WHILE_INTERACTIVE) instead of PARALLEL at once.
      const settled = await Promise.allSettled(waiting.slice(i, i + PARALLEL).map((w) => step(deps, () => feedOne(deps, batch, w))));
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      results.push(...settled.map((r) => (r as PromiseFulfilledResult<Fed>).value));
    }
  }
  const queued = results.filter((r) => r === 'queued').length;
  if (results.includes('no_units')) {
    const paused = await conn.transaction(async (tx) => {
      if (!(await repo.setStatus(tx, batchId, 'paused', 'insufficient_units'))) return false;
      await reportBatchStatus(tx, batchId, 'paused', 'insufficient_units');
      return true;
    });
    if (paused) deps.logger.info({ batchId }, 'batch paused: insufficient units');
  } else if (queued > 0 || results.includes('decided') || (batch.status !== 'running' && inQueue > 0)) {
    await repo.setStatus(conn, batchId, 'running');
  }
  if (await deps.db.transaction((tx) => completeIfDone(tx, batchId))) await forgetTokens(deps, batchId);
  return queued;
}

/** Lookups marked queued whose verification ended unnoted, or whose job went missing. */
async function reconcileQueued(deps: FeedDeps, conn: CommonQueryMethods, batchId: string): Promise<void> {
  const queued = await repo.queuedLookups(conn, batchId);
  if (queued.length === 0) return;
  const outcomes = await lookupOutcomes({ db: conn, ring: deps.config.encryptionKeys }, queued.map((q) => q.reference_id), { records: false });
  for (const q of queued) {
    const o = outcomes.get(q.reference_id);
    if (o && o.status !== 'pending') {
      await noteLookupEnded(deps, batchId, q.reference_id);
      continue;
    }
    try {
      const again = { referenceId: q.reference_id, mode: q.kind, reason: q.reason, acceptedAt: o?.queuedAt ?? deps.clock.now() };
      const s = await startVerification(deps, { delivery: 'batch', batch: { id: batchId }, orgId: q.org_id, again });
      if (s.kind !== 'lost') continue;
      // A vNIN's job took its token with it; one still in Redis (the feeder died before queuing the
      // job) goes into the new job. Without a token the job ends the lookup failed, unit released.
      const token = q.kind === 'vnin' ? await tokensOf(deps).take(batchId, q.idx) : null;
      // Out of Redis before it is in a job, as when it was first queued.
      if (token) await tokensOf(deps).drop(batchId, q.idx);
      await s.queue(token);
    } catch (err) {
      deps.logger.warn({ err: describe(err), batchId, referenceId: q.reference_id }, 'batch lookup not re-queued; next pass retries');
    }
  }
}

/** `batch.feed`: one batch, an organisation's open batches (after a credit), or every open batch. */
export async function runFeed(deps: FeedDeps, p: { batchId?: string; orgId?: number }): Promise<{ batches: number; queued: number }> {
  // The periodic pass also reads the count of interactive lookups again (a publication lost with a
  // connection would otherwise keep the lane narrow).
  if (!p.batchId) await deps.lane?.refresh().catch((err: unknown) => deps.logger.warn({ err: describe(err) }, 'interactive lookups not counted; the next pass tries again'));
  const ids = p.batchId ? [p.batchId] : await repo.openBatchIds(deps.db, p.orgId);
  let queued = 0;
  for (const id of ids) queued += await feedBatch(deps, id, { reconcile: !p.batchId });
  return { batches: ids.length, queued };
}

/**
 * `batch.lookup-settled`: a lookup of the batch has settled, as its job reported (that report is
 * queued by the job once its lookup is decided, so this runs off the authority's slots: bookkeeping
 * inside the job would keep a slot busy while the authority sits idle). Notes the lookup's end (from
 * the job's own result when that is final, so no read), which ends the batch after its last row,
 * then refills the batch. Lost to a crash, the periodic feed notes the end and refills instead.
 */
export async function lookupSettled(deps: FeedDeps, p: JobPayload<'batch.lookup-settled'>): Promise<JobResult<'batch.lookup-settled'>> {
  const code = p.code ?? null;
  const final = p.outcome !== 'failed' || (code !== null && code !== 'still_pending' && code !== 'unknown_reference');
  const known = !final ? undefined : p.outcome === 'failed' && code === BATCH_CANCELLED ? { state: 'cancelled' as const, failureCode: null } : { state: p.outcome, failureCode: p.outcome === 'found' ? null : code };
  await step(deps, () => noteLookupEnded(deps, p.batchId, p.referenceId, known));
  return { queued: await feedBatch(deps, p.batchId) };
}

export { lockKey };
