import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { DatabasePool } from 'slonik';
import type { z } from 'zod';
import { UpstreamError, type IdentityAuthority, type UpstreamOutcome } from '../../adapters/identity-authority/types.ts';
import type { Config } from '../../config.ts';
import { jobIds, QUEUES, type JobResult } from '../../jobs/catalog.ts';
import type { Producer, WaitOutcome } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { openJson, sealJson, type KeyRing, type Sealed } from '../../lib/crypto.ts';
import { AppError, INSUFFICIENT_UNITS, NIN_NOT_FOUND } from '../../lib/errors.ts';
import { describe } from '../../lib/http.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { Principal } from '../auth/auth.schemas.ts';
import { requireOrgMember } from '../auth/auth.service.ts';
import { requireKnownReason, type ReasonsDeps } from '../reasons/reasons.service.ts';
import { recordFixtureCall } from '../wallet/wallet.service.ts';
import { fixtureOutcome, type FixtureOutcome } from './fixtures.ts';
import * as idem from './idempotency.ts';
import { normalisePerson, type PersonRecord } from './person.ts';
import * as repo from './verification.repository.ts';
import {
  verificationQuerySchema,
  type demographyBody,
  type Mode,
  type ninBody,
  type phoneBody,
  type VerificationQuery,
  type VerificationRow,
} from './verification.schemas.ts';

export type Answer = idem.Answer;

export const RECORD_NOT_FOUND = 'Record not found';
export const UPSTREAM_FAILED = 'Identity authority unavailable, nothing was charged';
export const UPSTREAM_RATE_LIMITED = 'Identity authority is rate limiting requests, nothing was charged; retry later';
export const QUEUE_UNAVAILABLE = 'Service temporarily unavailable, nothing was charged; retry later';
export const STILL_PENDING = 'Verification still in progress; requery with the reference_id';
export const RECORD_EXPIRED = 'Record has expired and was erased under the retention policy';
export const UNKNOWN_REFERENCE = 'Unknown reference_id';
export const SUBSCRIPTION_REQUIRED = 'An active subscription is required for live verifications (fixture NINs work without one)';

/** What the HTTP side needs; AppContext provides it. */
export type VerifyDeps = ReasonsDeps & { db: DatabasePool; producer: Producer; clock: Clock; metrics: Metrics };

/** What the job side needs; WorkerDeps provides it. */
export type LookupDeps = {
  db: DatabasePool;
  config: Config;
  identity: IdentityAuthority;
  metrics: Metrics;
  clock: Clock;
  producer: Producer;
};

export type VerifyInput =
  | { mode: 'nin'; body: z.infer<typeof ninBody> }
  | { mode: 'phone'; body: z.infer<typeof phoneBody> }
  | { mode: 'demography'; body: z.infer<ReturnType<typeof demographyBody>> };

const REF_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** `REF-` and 12 characters from the CSPRNG; rejection sampling keeps every character equally likely. */
export function newReferenceId(): string {
  let out = '';
  while (out.length < 12) {
    for (const b of randomBytes(16)) {
      if (b < 252 && out.length < 12) out += REF_ALPHABET[b % 36];
    }
  }
  return `REF-${out}`;
}

function toQuery(input: VerifyInput): VerificationQuery {
  switch (input.mode) {
    case 'nin':
      return { mode: 'nin', nin: input.body.nin, reason: input.body.reason };
    case 'phone':
      return { mode: 'phone', phone: input.body.phone_no, reason: input.body.reason };
    case 'demography': {
      const b = input.body;
      return { mode: 'demography', firstName: b.first_name, lastName: b.last_name, dob: b.date_of_birth, gender: b.gender, reason: b.reason };
    }
  }
}

function expiresAt(config: Config, from: Date): Date {
  return new Date(from.getTime() + config.RECORD_RETENTION_DAYS * 24 * 3600 * 1000);
}

function keyRing(ring: KeyRing, keyId: string | null): KeyRing {
  const entry = ring.find((k) => k.id === keyId);
  if (!entry) throw new Error(`encryption key ${String(keyId)} is not configured`);
  return [entry];
}

// HTTP side --------------------------------------------------------------------------------

/**
 * POST /verify-nin, /verify-nin/phone, /verify-nin/demography. Returns the answer to send; every
 * refusal is thrown as an AppError. Order matters: nothing is written before the reason and the
 * subscription are checked, and the Idempotency-Key is claimed before anything is written.
 */
export async function verify(
  deps: VerifyDeps,
  req: { principal: Principal; input: VerifyInput; idempotencyKey: string | null; requestId: string },
): Promise<Answer> {
  const orgId = requireOrgMember(req.principal);
  const query = toQuery(req.input);
  await requireKnownReason(deps, query.reason);
  const fixture = query.mode === 'nin' ? fixtureOutcome(query.nin) : null;
  if (!fixture && !req.principal.subscriptionActive) {
    deps.metrics.verifications.inc({ mode: query.mode, outcome: 'subscription_inactive' });
    throw new AppError('forbidden', SUBSCRIPTION_REQUIRED);
  }

  let claim: idem.Claim | null = null;
  if (req.idempotencyKey !== null) {
    const c = await idem.claimKey(deps.db, deps.config.encryptionKeys, {
      orgId,
      key: req.idempotencyKey,
      endpoint: query.mode,
      body: query,
      now: deps.clock.now(),
    });
    if (c.kind === 'replay') {
      deps.metrics.verifications.inc({ mode: query.mode, outcome: 'replayed' });
      return c.answer;
    }
    if (c.kind === 'linked') return resumeLinked(deps, c.claim, c.referenceId);
    claim = c.claim;
  }

  const run = { orgId, userId: req.principal.userId, query, claim, requestId: req.requestId };
  try {
    const answer = fixture ? await runFixture(deps, run, fixture) : await runLive(deps, run);
    if (claim) await idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, answer);
    return answer;
  } catch (err) {
    if (claim) await afterFailure(deps, claim, err);
    throw err;
  }
}

type Run = { orgId: number; userId: number; query: VerificationQuery; claim: idem.Claim | null; requestId: string };

async function afterFailure(deps: VerifyDeps, claim: idem.Claim, err: unknown): Promise<void> {
  try {
    // An unexpected fault (PostgreSQL or Redis gone mid-request): the verification may exist.
    if (!(err instanceof AppError)) return idem.releaseKey(deps.db, claim, { unlinkedOnly: true });
    // Lost the key to a concurrent request: the claim is that request's, leave it alone.
    if (err.code === 'conflict') return;
    if (idem.isFinal(err.status)) return idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, idem.answerOfError(err));
    // A 504 keeps its claim: the claim is linked to a verification that may still be charged,
    // and a retry with the same key must resolve to that verification, not start a second one.
    if (err.code === 'timeout') return;
    return idem.releaseKey(deps.db, claim);
  } catch (storeErr) {
    deps.logger.warn({ err: describe(storeErr) }, 'idempotency key not updated');
  }
}

/** A retry of a request whose verification was started but whose answer was never stored. */
async function resumeLinked(deps: VerifyDeps, claim: idem.Claim, referenceId: string): Promise<Answer> {
  const row = await repo.findVerification(deps.db, referenceId, claim.orgId);
  if (!row || row.status === 'pending') throw new AppError('conflict', idem.IN_PROGRESS, { extra: { reference_id: referenceId } });
  const replayed = { 'Idempotent-Replayed': 'true' };
  let answer: Answer;
  try {
    answer = answerOf(deps, row, 'verify');
  } catch (err) {
    if (!(err instanceof AppError) || !idem.isFinal(err.status)) {
      await idem.releaseKey(deps.db, claim);
      throw err;
    }
    answer = idem.answerOfError(err);
  }
  await idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, answer);
  return { ...answer, headers: replayed };
}

/** Reserved test-mode NINs (SPEC 4.8): no upstream call, no debit, a zero ledger line. */
async function runFixture(deps: VerifyDeps, run: Run, fixture: FixtureOutcome): Promise<Answer> {
  const ref = newReferenceId();
  const now = deps.clock.now();
  const ring = deps.config.encryptionKeys;
  const queryEnc = sealJson(ring, run.query, ref);
  const recordEnc = fixture.kind === 'found' ? sealJson(ring, fixture.record, ref).data : null;
  const outcome = fixture.kind;
  await deps.db.transaction(async (tx) => {
    await repo.insertVerification(tx, {
      referenceId: ref,
      orgId: run.orgId,
      userId: run.userId,
      mode: 'nin',
      reason: run.query.reason,
      fixture: true,
      status: outcome,
      holdsUnit: false,
      queryEnc: queryEnc.data,
      recordEnc,
      keyId: queryEnc.keyId,
      requestId: run.requestId,
      createdAt: now,
      expiresAt: expiresAt(deps.config, now),
    });
    if (run.claim) await idem.linkKey(tx, run.claim, ref);
    await recordFixtureCall(tx, { orgId: run.orgId, reference: ref, details: { fixture: true, outcome, mode: 'nin', reason: run.query.reason } });
  });
  deps.metrics.verifications.inc({ mode: 'nin', outcome: `fixture_${outcome}` });
  if (fixture.kind === 'not_found') throw new AppError('not_found', NIN_NOT_FOUND);
  return { status: 200, body: { data: { ...fixture.record, reference_id: ref } } };
}

async function runLive(deps: VerifyDeps, run: Run): Promise<Answer> {
  const { query } = run;
  const ref = newReferenceId();
  const now = deps.clock.now();
  const queryEnc = sealJson(deps.config.encryptionKeys, query, ref);
  const pending = {
    referenceId: ref,
    orgId: run.orgId,
    userId: run.userId,
    mode: query.mode,
    reason: query.reason,
    queryEnc: queryEnc.data,
    keyId: queryEnc.keyId,
    requestId: run.requestId,
    createdAt: now,
    expiresAt: expiresAt(deps.config, now),
  };
  const claim = run.claim;
  const noUnits = () => {
    deps.metrics.verifications.inc({ mode: query.mode, outcome: 'insufficient_units' });
    return new AppError('insufficient_units', INSUFFICIENT_UNITS);
  };
  // Without an Idempotency-Key the hold is one autocommit statement. With one, the key is bound to
  // this reference first and the hold is the transaction's last statement before COMMIT.
  const held = claim
    ? await deps.db.transaction(async (tx) => {
        await idem.linkKey(tx, claim, ref);
        if (!(await repo.insertPendingHoldingUnit(tx, pending))) throw noUnits();
        return true;
      })
    : await repo.insertPendingHoldingUnit(deps.db, pending);
  if (!held) throw noUnits();

  let waited: WaitOutcome<'verification.lookup'> | undefined;
  try {
    waited = await deps.producer.enqueueAndWait(
      'verification.lookup',
      { referenceId: ref, requestId: run.requestId, query: { keyId: queryEnc.keyId, data: queryEnc.data.toString('base64') } },
      { jobId: jobIds.lookup(ref), timeoutMs: deps.config.VERIFY_WAIT_MS },
    );
  } catch (err) {
    // Redis out of reach: give the unit back now rather than leave it held until the sweep runs.
    // If the job did get queued after all, whichever settles first wins (status guard).
    deps.logger.warn({ err: describe(err), referenceId: ref }, 'lookup could not be queued');
    if (await settle(deps.db, deps.config.encryptionKeys, { referenceId: ref, keyId: queryEnc.keyId, outcome: { kind: 'failed', code: 'queue_unavailable', detail: 'job queue unreachable' }, attempts: 0 })) {
      deps.metrics.verifications.inc({ mode: query.mode, outcome: 'failed' });
      throw new AppError('unavailable', QUEUE_UNAVAILABLE, { extra: { reference_id: ref, code: 'queue_unavailable' }, headers: { 'Retry-After': '5' } });
    }
  }

  // A found or not-found job result is final (the row was settled before the job completed), so it
  // is answered as it stands. Anything else reads the row, which is the truth whatever the wait said:
  // a completion event may have been missed, and a job that outlived the wait may have finished since.
  const result = waited?.status === 'completed' ? waited.result : undefined;
  if (result && ((result.outcome === 'found' && result.record) || result.outcome === 'not_found')) {
    deps.metrics.verifications.inc({ mode: query.mode, outcome: result.outcome });
    const settled: VerificationRow = {
      reference_id: ref,
      org_id: run.orgId,
      mode: query.mode,
      reason: query.reason,
      fixture: false,
      status: result.outcome,
      query_enc: null,
      record_enc: result.record ? Buffer.from(result.record.data, 'base64') : null,
      key_id: result.record?.keyId ?? queryEnc.keyId,
      failure_code: null,
      created_at: now,
      expires_at: pending.expiresAt,
    };
    return answerOf(deps, settled, 'verify');
  }
  const row = await repo.findVerification(deps.db, ref);
  if (!row) throw new Error('verification row vanished');
  deps.metrics.verifications.inc({ mode: query.mode, outcome: row.status });
  return answerOf(deps, row, 'verify');
}

/** How a stored verification is answered, by the verification call itself or by a requery. */
function answerOf(deps: { config: Config; clock: Clock }, row: VerificationRow, style: 'verify' | 'requery'): Answer {
  const ref = row.reference_id;
  if (row.status === 'expired' || row.expires_at.getTime() <= deps.clock.now().getTime()) {
    throw new AppError('not_found', RECORD_EXPIRED);
  }
  switch (row.status) {
    case 'found': {
      if (!row.record_enc) throw new AppError('not_found', RECORD_EXPIRED);
      const record = openJson<PersonRecord>(keyRing(deps.config.encryptionKeys, row.key_id), { keyId: row.key_id!, data: row.record_enc }, ref);
      const data = { ...record, reference_id: ref };
      return style === 'verify'
        ? { status: 200, body: { data } }
        : { status: 200, body: { status: 'success', message: 'Record retrieved successfully', data } };
    }
    case 'not_found':
      throw new AppError('not_found', row.mode === 'nin' ? NIN_NOT_FOUND : RECORD_NOT_FOUND);
    case 'failed':
      if (row.failure_code === 'queue_unavailable') {
        throw new AppError('unavailable', QUEUE_UNAVAILABLE, { extra: { reference_id: ref, code: row.failure_code } });
      }
      if (row.failure_code === 'upstream_rate_limited') {
        throw new AppError('unavailable', UPSTREAM_RATE_LIMITED, { extra: { reference_id: ref, code: row.failure_code } });
      }
      throw new AppError('upstream_failed', UPSTREAM_FAILED, { extra: { reference_id: ref, code: row.failure_code ?? 'upstream_unavailable' } });
    case 'pending':
      if (style === 'requery') return { status: 202, body: { status: 'pending', message: 'Verification still in progress', reference_id: ref } };
      throw new AppError('timeout', STILL_PENDING, { extra: { reference_id: ref } });
  }
}

/** POST /verify-nin/requery: free, idempotent, scoped to the caller's organisation. */
export async function requery(deps: { db: DatabasePool; config: Config; clock: Clock }, principal: Principal, referenceId: string): Promise<Answer> {
  const orgId = requireOrgMember(principal);
  const row = await repo.findVerification(deps.db, referenceId, orgId);
  // Another organisation's reference reads exactly like an unknown one.
  if (!row) throw new AppError('not_found', UNKNOWN_REFERENCE);
  return answerOf(deps, row, 'requery');
}

// Job side ---------------------------------------------------------------------------------

type Settlement =
  | { kind: 'found'; record: PersonRecord }
  | { kind: 'not_found' }
  | { kind: 'failed'; code: string; detail: string };

/**
 * Decides a pending verification in one transaction: the guarded status change, then the wallet
 * (capture the held unit on success, release it otherwise). False when it was already decided.
 */
export async function settle(
  db: DatabasePool,
  ring: KeyRing,
  s: { referenceId: string; keyId: string | null; outcome: Settlement; attempts: number },
): Promise<boolean> {
  const o = s.outcome;
  if (o.kind === 'found') {
    // Encryption before the statement: nothing slow while the wallet row is locked.
    const recordEnc = sealJson(keyRing(ring, s.keyId), o.record, s.referenceId).data;
    return repo.settleFoundCapturingUnit(db, { referenceId: s.referenceId, recordEnc, attempts: s.attempts, upstreamTransactionId: o.record.transaction_id });
  }
  return repo.settleReleasingUnit(db, {
    referenceId: s.referenceId,
    status: o.kind,
    failureCode: o.kind === 'failed' ? o.code : null,
    failureDetail: o.kind === 'failed' ? o.detail.slice(0, 300) : null,
    attempts: s.attempts,
  });
}

type LookupResult = JobResult<'verification.lookup'>;

function resultOf(row: VerificationRow | null): LookupResult {
  if (!row) return { outcome: 'failed', code: 'unknown_reference' };
  switch (row.status) {
    case 'found':
    case 'not_found':
      return { outcome: row.status };
    case 'failed':
      return { outcome: 'failed', code: row.failure_code ?? 'upstream_unavailable' };
    case 'expired':
      return { outcome: 'failed', code: 'expired' };
    case 'pending':
      return { outcome: 'failed', code: 'still_pending' };
  }
}

// A Retry-After longer than this is not waited for inside a job: the lookup is failed (nothing is
// charged) and the caller retries later, instead of a worker slot sleeping for minutes.
const MAX_RETRY_AFTER_MS = 10_000;
const MAX_BACKOFF_MS = 5_000;

function failureCode(err: unknown): string {
  if (!(err instanceof UpstreamError)) return 'upstream_error';
  if (err.status === 429) return 'upstream_rate_limited';
  const cause = err.cause as { name?: string } | undefined;
  if (err.status === 408 || err.status === 504 || cause?.name === 'TimeoutError' || /no answer within/.test(err.message)) return 'upstream_timeout';
  if (!err.retryable) return 'upstream_rejected';
  return 'upstream_unavailable';
}

function lookup(identity: IdentityAuthority, q: VerificationQuery): Promise<UpstreamOutcome> {
  switch (q.mode) {
    case 'nin':
      return identity.lookupNin({ nin: q.nin, reason: q.reason });
    case 'phone':
      return identity.lookupPhone({ phone: q.phone, reason: q.reason });
    case 'demography':
      return identity.lookupDemography({ firstName: q.firstName, lastName: q.lastName, dob: q.dob, gender: q.gender, reason: q.reason });
  }
}

/**
 * The upstream call with its retries: exponential backoff with full jitter, Retry-After honoured,
 * only retryable faults retried. Never throws for an upstream fault: the caller settles the outcome.
 */
async function callWithRetries(deps: LookupDeps, q: VerificationQuery, referenceId: string, log: Logger) {
  const c = deps.config;
  for (let attempt = 1; ; attempt++) {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const outcome = await lookup(deps.identity, q);
      deps.metrics.upstreamDuration.observe({ dialect: c.IDENTITY_DIALECT, operation: q.mode, outcome: outcome.kind }, seconds());
      return { outcome, attempts: attempt };
    } catch (err) {
      const code = failureCode(err);
      deps.metrics.upstreamDuration.observe({ dialect: c.IDENTITY_DIALECT, operation: q.mode, outcome: code }, seconds());
      const failed = { outcome: { kind: 'failed' as const, code, detail: err instanceof Error ? err.message : String(err) }, attempts: attempt };
      if (!(err instanceof UpstreamError) || !err.retryable || attempt >= c.IDENTITY_MAX_ATTEMPTS) return failed;
      const jitter = Math.random() * Math.min(MAX_BACKOFF_MS, c.IDENTITY_BACKOFF_MS * 2 ** (attempt - 1));
      const delay = err.retryAfterMs !== undefined ? Math.max(err.retryAfterMs, jitter) : jitter;
      if (delay > MAX_RETRY_AFTER_MS) return failed;
      log.warn({ referenceId, upstreamAttempt: attempt, code, delayMs: Math.round(delay) }, 'upstream call failed; retrying');
      await sleep(delay);
    }
  }
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
  opts: { sealedQuery?: { keyId: string; data: string }; firstRun?: boolean } = {},
): Promise<LookupResult> {
  const ring = deps.config.encryptionKeys;
  let sealedQuery: Sealed;
  if (opts.sealedQuery && opts.firstRun) {
    // A job's first run follows the insert of its pending row: no need to read the row back. A rerun
    // (retry, stalled worker, sweep) reads it, so a settled verification is not looked up again.
    sealedQuery = { keyId: opts.sealedQuery.keyId, data: Buffer.from(opts.sealedQuery.data, 'base64') };
  } else {
    const row = await repo.findVerification(deps.db, referenceId);
    if (!row || row.status !== 'pending' || !row.query_enc || !row.key_id) return resultOf(row);
    sealedQuery = { keyId: row.key_id, data: row.query_enc };
  }
  const query = verificationQuerySchema.parse(openJson(keyRing(ring, sealedQuery.keyId), sealedQuery, referenceId));

  const call = await callWithRetries(deps, query, referenceId, log);
  if (call.outcome.kind === 'found') {
    const record = normalisePerson(call.outcome.raw);
    // Some upstreams leave the NIN out of a NIN answer; it is the one that was asked for.
    if (query.mode === 'nin' && record.nin === '') record.nin = query.nin;
    // Encryption before the statement: nothing slow while the wallet row is locked.
    const recordEnc = sealJson(keyRing(ring, sealedQuery.keyId), record, referenceId).data;
    const settled = await repo.settleFoundCapturingUnit(deps.db, { referenceId, recordEnc, attempts: call.attempts, upstreamTransactionId: record.transaction_id });
    if (!settled) return resultOf(await repo.findVerification(deps.db, referenceId));
    deps.metrics.unitsDebited.inc();
    return { outcome: 'found', record: { keyId: sealedQuery.keyId, data: recordEnc.toString('base64') } };
  }

  const outcome = call.outcome;
  const settled = await settle(deps.db, ring, { referenceId, keyId: sealedQuery.keyId, outcome, attempts: call.attempts });
  if (!settled) return resultOf(await repo.findVerification(deps.db, referenceId));
  if (outcome.kind === 'failed') {
    log.warn({ referenceId, code: outcome.code, upstreamAttempts: call.attempts }, 'lookup failed; unit released');
    return { outcome: 'failed', code: outcome.code };
  }
  return { outcome: outcome.kind };
}

// A pending row younger than this still belongs to its API request and its job (the request waits
// VERIFY_WAIT_MS; the job's own retries fit well inside), so the sweep never touches it.
const SWEEP_MIN_AGE_FACTOR = 4;
// Past this, the lookup is given up: the unit goes back and the requery answers "failed".
const SWEEP_GIVE_UP_MS = 3600 * 1000;
const SWEEP_BATCH = 100;

/**
 * `verification.sweep`: pending rows whose job was lost (Redis flushed, failed past its attempts)
 * are queued again under the same job id; rows pending for over an hour are failed and released.
 * It cannot race the normal path into a double debit: re-adding an existing job id is a no-op, and
 * every outcome goes through settle()'s status guard and the one-debit unique index.
 */
export async function sweepPending(deps: LookupDeps, log: Logger): Promise<JobResult<'verification.sweep'>> {
  const now = deps.clock.now().getTime();
  const rows = await repo.findStalePending(deps.db, new Date(now - deps.config.VERIFY_WAIT_MS * SWEEP_MIN_AGE_FACTOR), SWEEP_BATCH);
  const queue = deps.producer.queue(QUEUES.lookups);
  let requeued = 0;
  let released = 0;
  for (const row of rows) {
    const ref = row.reference_id;
    if (row.created_at.getTime() < now - SWEEP_GIVE_UP_MS) {
      const outcome = { kind: 'failed' as const, code: 'lookup_abandoned', detail: 'no outcome within one hour' };
      if (await settle(deps.db, deps.config.encryptionKeys, { referenceId: ref, keyId: null, outcome, attempts: 0 })) released++;
      continue;
    }
    const jobId = jobIds.lookup(ref);
    const job = await queue.getJob(jobId);
    const state = job ? await job.getState() : 'missing';
    if (state !== 'missing' && state !== 'failed' && state !== 'completed' && state !== 'unknown') continue;
    try {
      if (job) await job.remove();
      await deps.producer.enqueue('verification.lookup', { referenceId: ref }, { jobId });
      requeued++;
    } catch (err) {
      log.warn({ err: describe(err), referenceId: ref }, 'lookup not re-queued; next sweep retries');
    }
  }
  if (requeued > 0 || released > 0) log.info({ requeued, released }, 'verification sweep');
  return { requeued, released };
}

const ERASE_BATCH = 500;
const ERASE_MAX_BATCHES = 40;

/** `retention.erase`: personal data past its retention date, and idempotency keys past 24 h. */
export async function eraseExpired(deps: { db: DatabasePool; clock: Clock; config?: Config; redis?: Redis }): Promise<JobResult<'retention.erase'>> {
  const now = deps.clock.now();
  if (deps.redis && deps.config) {
    // Completed lookups carry the sealed record in their result, which BullMQ also copies into the
    // queue's event stream. Stream ids are timestamps: drop every entry older than the retention
    // period, so no ciphertext of a record outlives the record itself.
    const minId = now.getTime() - deps.config.RECORD_RETENTION_DAYS * 24 * 3600 * 1000;
    await deps.redis.xtrim(`${deps.config.REDIS_PREFIX}:${QUEUES.lookups}:events`, 'MINID', minId);
  }
  let erased = 0;
  for (let i = 0; i < ERASE_MAX_BATCHES; i++) {
    const n = await repo.eraseExpiredBatch(deps.db, now, ERASE_BATCH);
    erased += n;
    if (n < ERASE_BATCH) break;
  }
  let idempotencyKeysDeleted = 0;
  const cutoff = new Date(now.getTime() - idem.REPLAY_WINDOW_MS);
  for (let i = 0; i < ERASE_MAX_BATCHES; i++) {
    const n = await repo.deleteIdempotencyKeysBatch(deps.db, cutoff, ERASE_BATCH);
    idempotencyKeysDeleted += n;
    if (n < ERASE_BATCH) break;
  }
  return { erased, idempotencyKeysDeleted };
}

export type { Mode };
