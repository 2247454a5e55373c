import type { DatabasePool } from 'slonik';
import { failureCode, resilient, upstreamRetry, type UpstreamHooks } from '../../adapters/identity-authority/resilient.ts';
import type { SharedBreaker } from '../../adapters/identity-authority/breaker.ts';
import { UpstreamError, type IdentityAuthority, type UpstreamOutcome, type VninQuery } from '../../adapters/identity-authority/types.ts';
import type { CallSpacer } from '../../lib/call-spacing.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import type { JobPayload, JobResult } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import { openJson, type Sealed } from '../../lib/crypto.ts';
import { comparisonQueued, FACE_LOST_DETAIL, handOver, type FaceOfLookup } from './face-settle.ts';
import { describe } from '../../lib/errors.ts';
import type { BackgroundLane, FairShare } from '../../context.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { afterFailedTry, deadlineOf, oneShotOnceSent, RetryLater } from './background.ts';
import { compareClaims } from './match.ts';
import { FOLLOW_UP_BOTH, type DebitFollowUp } from '../wallet/index.ts';
import { normalisePerson, type PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import { settle, type Decision } from './settle.ts';
import { subjectOfRecord } from './subject.ts';
import * as repo from './verification.repository.ts';
import { verificationQuerySchema, type StoredQuery, type VerificationQuery, type VerificationRow } from './verification.schemas.ts';
import { VNIN_LOST_DETAIL } from './vnin.ts';

/** The authority as a shared resource: one breaker and one call rate for every worker process. */
export type AuthorityGuards = { breaker: SharedBreaker; spacer: CallSpacer };

/** What the lookup job needs; WorkerDeps provides it. */
export type LookupDeps = {
  db: DatabasePool;
  config: Config;
  identity: IdentityAuthority;
  metrics: Metrics;
  authority: AuthorityGuards;
  /** Background deadlines are read on it (a test's manual clock); the system clock without. */
  clock?: Clock;
  /** The workers' gate for background steps: a background lookup's settlement passes it. */
  lane?: Pick<BackgroundLane, 'run'>;
  /** Hands a face match's comparison to the face queue (without it, such a lookup fails `face_unavailable`). */
  producer?: Producer;
};

// An authority 429 without a Retry-After still pauses every caller this long.
const DEFAULT_RATE_LIMIT_PAUSE_MS = 1000;

type LookupResult = JobResult<'verification.lookup'>;

/**
 * What a lookup run tells its caller besides its result (which travels through Redis, so holds no
 * more than the answer): when this run's debit was recorded, what it must be followed by (alerts'
 * followDebit).
 */
export type LookupReport = { followUp: DebitFollowUp | null };

export const newLookupReport = (): LookupReport => ({ followUp: null });

function resultOf(row: VerificationRow | null): LookupResult {
  if (!row) return { outcome: 'failed', code: 'unknown_reference' };
  switch (row.status) {
    case 'found':
      return { outcome: 'found' };
    case 'not_found':
      return row.failure_code ? { outcome: 'not_found', code: row.failure_code } : { outcome: 'not_found' };
    case 'failed':
      return { outcome: 'failed', code: row.failure_code ?? 'upstream_unavailable' };
    case 'expired':
      return { outcome: 'failed', code: 'expired' };
    case 'pending':
      return { outcome: 'failed', code: 'still_pending' };
  }
}

function lookup(identity: IdentityAuthority, q: VerificationQuery): Promise<UpstreamOutcome> {
  switch (q.mode) {
    case 'nin':
      return identity.lookupNin({ nin: q.nin, reason: q.reason });
    case 'match':
    case 'face':
      // By NIN or by vNIN; a vNIN here gets the same one-attempt rule (askUpstream sees the token).
      return 'nin' in q ? identity.lookupNin({ nin: q.nin, reason: q.reason }) : identity.lookupVnin({ vnin: q.vnin, reason: q.reason });
    case 'vnin':
      return identity.lookupVnin({ vnin: q.vnin, reason: q.reason });
    case 'phone':
      return identity.lookupPhone({ phone: q.phone, reason: q.reason });
    case 'demography':
      return identity.lookupDemography({ firstName: q.firstName, lastName: q.lastName, dob: q.dob, gender: q.gender, reason: q.reason });
  }
}

/**
 * The upstream call with its retries. Never throws for an upstream fault: the fault becomes a
 * `failed` decision, with the number of attempts it took, for the settlement to record. A query
 * carrying a vNIN (use-once at the authority) is retried only when the call never reached the
 * authority; any fault after the call went out ends it as `upstream_unavailable`. Any mode that
 * looks a person up by vNIN comes through here and gets that rule.
 */
export async function askUpstream(
  deps: LookupDeps,
  q: VerificationQuery,
  referenceId: string,
  log: Logger,
  maxAttempts = deps.config.IDENTITY_MAX_ATTEMPTS,
): Promise<{ outcome: UpstreamOutcome | Extract<Decision, { kind: 'failed' }>; attempts: number; unsent?: boolean }> {
  const c = deps.config;
  const useOnce = 'vnin' in q;
  let attempts = 0;
  const hooks: UpstreamHooks = {
    attempted: (a) => {
      attempts = a.attempt;
      deps.metrics.upstreamDuration.observe({ dialect: c.IDENTITY_DIALECT, operation: a.operation, outcome: a.outcome }, a.seconds);
    },
    retrying: (r) => log.warn({ referenceId, upstreamAttempt: r.attempt, code: r.code, delayMs: Math.round(r.delayMs) }, 'upstream call failed; retrying'),
    // Every attempt, retries included, takes its turn under the shared calls-per-second limit.
    beforeAttempt: () => deps.authority.spacer.acquire(),
    rateLimited: async (retryAfterMs) => {
      deps.metrics.authorityRateLimited.inc();
      await deps.authority.spacer.pause(retryAfterMs ?? DEFAULT_RATE_LIMIT_PAUSE_MS);
    },
  };
  const identity = resilient(deps.identity, upstreamRetry({ maxAttempts, backoffMs: c.IDENTITY_BACKOFF_MS, useOnce }, hooks), hooks);
  try {
    // The breaker sees one outcome per lookup (its retries inside), so one faulty record is one failure.
    return { outcome: await deps.authority.breaker.execute(() => lookup(identity, q)), attempts };
  } catch (err) {
    const code = failureCode(err);
    // unsent: the call never reached the authority (refused connection), so even a vNIN may go again.
    const unsent = err instanceof UpstreamError && err.unsent;
    return { outcome: { kind: 'failed', code: useOnce && code === 'upstream_timeout' ? 'upstream_unavailable' : code, detail: err instanceof Error ? err.message : String(err) }, attempts, unsent };
  }
}

/**
 * A vNIN lookup for any mode (a vNIN verification, or another mode identifying the person by vNIN):
 * the authority's outcome (found with the raw record, a refusal, or a failed decision), asked once.
 */
export function lookupVnin(deps: LookupDeps, q: VninQuery, referenceId: string, log: Logger) {
  return askUpstream(deps, { mode: 'vnin', vnin: q.vnin, reason: q.reason }, referenceId, log);
}

/** A face match's part of a lookup job's payload: its sealed selfie, handed over with the found record (face-settle.ts). */
export function faceOfPayload(p: JobPayload<'verification.lookup'>): { face?: FaceOfLookup } {
  return p.selfie && p.orgId !== undefined ? { face: { selfie: p.selfie, orgId: p.orgId, requestId: p.requestId ?? p.referenceId, ...(p.liveness ? { liveness: p.liveness } : {}) } } : {};
}

/** A stored vNIN query keeps only the token's hash: the lookup can no longer run. */
function tokenGone(q: VerificationQuery | StoredQuery): boolean {
  return 'vninHash' in q && !('vnin' in q);
}

/**
 * The `verification.lookup` job. Safe to run any number of times for one reference: a settled row
 * is only read back, and settle() lets one run decide. Upstream faults end as a `failed` outcome
 * (returned, not thrown); only faults of our own (PostgreSQL, Redis) throw, for BullMQ to retry.
 */
export async function runLookup(
  deps: LookupDeps,
  referenceId: string,
  log: Logger,
  opts: {
    sealedQuery?: { keyId: string; data: string };
    firstRun?: boolean;
    useOnce?: boolean;
    background?: { acceptedAt: number; tries: number; delivery?: 'async' | 'batch' };
    /** A face match: the sealed selfie, handed with the found record to its comparison (face-settle.ts). */
    face?: FaceOfLookup;
    /** Told what the run leaves its caller to do: see LookupReport. */
    report?: LookupReport;
  } = {},
): Promise<LookupResult> {
  const ring = deps.config.encryptionKeys;
  const bg = opts.background;
  const deadline = bg ? deadlineOf(deps.config, bg.acceptedAt) : 0;
  // A background lookup past its deadline ends without another call (it may have been re-queued by
  // the sweep, or woken from its last delay).
  const nowMs = () => deps.clock?.now().getTime() ?? Date.now();
  // Decided by an earlier run of this job, which may have stopped between its debit's commit and
  // following that debit (alerts' followDebit): a found one is followed here, looking for both,
  // since that run's statement said what and nobody kept it. Reruns are rare; the reads are cheap.
  const decidedBefore = (row: VerificationRow | null): LookupResult => {
    if (row?.status === 'found' && opts.report) opts.report.followUp = FOLLOW_UP_BOTH;
    return resultOf(row);
  };
  if (bg && nowMs() >= deadline) return endAtDeadline(deps, referenceId, log, 'upstream_unavailable', bg.delivery === 'async');
  let sealedQuery: Sealed;
  if (opts.useOnce || (opts.face && !opts.firstRun)) {
    // A token is spent by the call: one primary-key read first, so a verification already decided
    // (the sweep gave up, the API recorded the queue as unreachable) never sends it to the authority.
    // So is a face match's rerun (a background one reads no row below): its comparison, handed over
    // by the run before, may have settled it already.
    const row = await repo.findVerification(deps.db, referenceId);
    if (!row || row.status !== 'pending') return decidedBefore(row);
  }
  if (opts.sealedQuery && (opts.firstRun || bg)) {
    // A job's first run follows the insert of its pending row: no need to read the row back. A rerun
    // (retry, stalled worker, sweep) reads it, so a settled verification is not looked up again. A
    // background lookup's next try carries its query again (a vNIN's only lives there); its row was
    // read above when it is use-once, and settle() guards every other case.
    sealedQuery = { keyId: opts.sealedQuery.keyId, data: Buffer.from(opts.sealedQuery.data, 'base64') };
  } else {
    const row = await repo.findVerification(deps.db, referenceId);
    if (!row || row.status !== 'pending' || !row.query_enc || !row.key_id) return decidedBefore(row);
    sealedQuery = { keyId: row.key_id, data: row.query_enc };
  }
  const opened = verificationQuerySchema.parse(openJson(keyRing(ring, sealedQuery.keyId), sealedQuery, referenceId)) as VerificationQuery | StoredQuery;

  // A face match's lookup run again after it handed its comparison over (a stalled worker, a crash
  // before the job's completion): the comparison settles it, so no second call to the authority (a
  // vNIN's token is gone by now anyway).
  if (opened.mode === 'face' && !opts.firstRun && deps.producer && (await comparisonQueued(deps.producer, referenceId))) return { outcome: 'found', compareHandedOver: true };
  let decision: Decision;
  // A vNIN job run again (a retry, a stalled worker): its first run erased the token and may have
  // used it at the authority, so it is never looked up twice. The unit goes back.
  const call: Awaited<ReturnType<typeof askUpstream>> = tokenGone(opened)
    ? { outcome: { kind: 'failed', code: 'lookup_abandoned', detail: VNIN_LOST_DETAIL }, attempts: 0 }
    : // A background lookup makes one call per try: its retries wait in the delayed set, not in a slot.
      await askUpstream(deps, opened as VerificationQuery, referenceId, log, bg ? 1 : deps.config.IDENTITY_MAX_ATTEMPTS);
  const query = opened;
  if (call.outcome.kind === 'found') {
    const record = normalisePerson(call.outcome.raw);
    // Some upstreams leave the NIN out of a NIN answer; it is the one that was asked for.
    if ((query.mode === 'nin' || query.mode === 'match' || query.mode === 'face') && 'nin' in query && record.nin === '') record.nin = query.nin;
    if (query.mode === 'face' && opts.face && deps.producer) {
      // A face match is settled by its comparison, in the face worker (face-settle.ts): handed over
      // here, and this job completes without waiting, its lookup slots given back; the unit stays
      // held on the pending row until the comparison's settlement captures or releases it.
      await handOver({ config: deps.config, producer: deps.producer }, referenceId, opts.face, record, { matchOnly: query.matchOnly === true, attempts: call.attempts, report: bg?.delivery === 'async' });
      return { outcome: 'found', compareHandedOver: true };
    }
    // A face lookup without its selfie (the job was lost and queued again by an older sweep) has
    // nothing to compare: never charged. (Without a queue to hand it to: not compared either.)
    decision =
      query.mode === 'face'
        ? opts.face
          ? { kind: 'failed', code: 'face_unavailable', detail: 'no face queue in this process' }
          : { kind: 'failed', code: 'lookup_abandoned', detail: FACE_LOST_DETAIL }
        : {
            kind: 'found',
            // A match-only verification keeps the comparison; the record is dropped here, in the worker.
            record: query.mode === 'match' ? compareClaims(query, record) : record,
            transactionId: record.transaction_id,
            // Whom it concerns: the returned record's NIN (a vNIN, phone or demography lookup learns it here).
            subjectHash: subjectOfRecord(deps.config.SUBJECT_HASH_KEY, record),
          };
  } else if (call.outcome.kind === 'not_found') {
    decision = call.outcome.refusal ? { kind: 'not_found', code: call.outcome.refusal } : { kind: 'not_found' };
  } else if (call.outcome.kind === 'failed' && bg && call.outcome.code !== 'lookup_abandoned') {
    const next = afterFailedTry({ code: call.outcome.code, tries: bg.tries, now: nowMs(), deadline, oneShot: oneShotOnceSent(query) && !call.unsent });
    if ('retryAt' in next) {
      // In milliseconds from now: the deadline is on the service clock, the delayed set on Redis's.
      await repo.countAttempts(deps.db, referenceId, call.attempts);
      throw new RetryLater(next.retryAt - nowMs(), call.outcome.code);
    }
    decision = next.endWith === call.outcome.code ? call.outcome : { kind: 'failed', code: next.endWith, detail: `no answer within ASYNC_MAX_WAIT_HOURS (last: ${call.outcome.code})` };
  } else {
    decision = call.outcome;
  }

  const settleIt = () => settle(deps.db, ring, { referenceId, keyId: sealedQuery.keyId, decision, attempts: call.attempts, report: bg?.delivery === 'async' });
  // A background lookup's settlement is a step of the background lane (it waits its turn while
  // interactive lookups are in flight); its call to the authority is not, so slots never wait on it.
  const settled = await (bg && deps.lane ? deps.lane.run(settleIt) : settleIt());
  if (!settled) return decidedBefore(await repo.findVerification(deps.db, referenceId));
  switch (decision.kind) {
    case 'found': {
      deps.metrics.unitsDebited.inc();
      if (opts.report && 'followUp' in settled) opts.report.followUp = settled.followUp;
      // The record as stored (a face match's: its comparison too, even with match_only's row).
      return { outcome: 'found', record: { keyId: settled.record!.keyId, data: settled.record!.data.toString('base64') } };
    }
    case 'failed':
      log.warn({ referenceId, code: decision.code, upstreamAttempts: call.attempts }, 'lookup failed; unit released');
      return { outcome: 'failed', code: decision.code };
    case 'not_found':
      return decision.code ? { outcome: 'not_found', code: decision.code } : { outcome: 'not_found' };
  }
}

async function endAtDeadline(deps: LookupDeps, referenceId: string, log: Logger, code: string, report: boolean): Promise<LookupResult> {
  const decision = { kind: 'failed' as const, code, detail: 'no answer within ASYNC_MAX_WAIT_HOURS' };
  const settled = await settle(deps.db, deps.config.encryptionKeys, { referenceId, keyId: null, decision, attempts: 0, report });
  if (!settled) return resultOf(await repo.findVerification(deps.db, referenceId));
  log.warn({ referenceId, code }, 'background lookup past its deadline; unit released');
  return { outcome: 'failed', code };
}

/**
 * A settled lookup (any outcome) gives its organisation's in-flight slot back; only lookups that
 * asked the authority feed the running mean of how long its slots stay busy. Best effort: a lost
 * slot goes stale by itself.
 */
export async function releaseLookupSlot(fairShare: FairShare, o: { orgId: number; referenceId: string; result: LookupResult; startedAt: number; background?: boolean }, log: Logger): Promise<void> {
  const { result } = o;
  const asked = result.outcome !== 'failed' || (result.code?.startsWith('upstream_') && result.code !== 'upstream_circuit_open');
  const finish = { orgId: o.orgId, referenceId: o.referenceId, ...(asked ? { durationMs: Date.now() - o.startedAt } : {}) };
  await (o.background ? fairShare.background.finish(finish) : fairShare.finish(finish))
    .catch((err: unknown) => log.warn({ err: describe(err), referenceId: o.referenceId }, 'in-flight slot not given back; it goes stale'));
}
