import type { DatabasePool } from 'slonik';
import { failureCode, resilient, upstreamRetry, type UpstreamHooks } from '../../adapters/identity-authority/resilient.ts';
import type { SharedBreaker } from '../../adapters/identity-authority/breaker.ts';
import type { IdentityAuthority, UpstreamOutcome } from '../../adapters/identity-authority/types.ts';
import type { CallSpacer } from '../../lib/call-spacing.ts';
import type { Config } from '../../config.ts';
import type { JobResult } from '../../jobs/catalog.ts';
import { openJson, type Sealed } from '../../lib/crypto.ts';
import { describe } from '../../lib/errors.ts';
import type { FairShare } from '../../lib/fair-share.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { normalisePerson } from './person.ts';
import { keyRing } from './sealing.ts';
import { settle, type Decision } from './settle.ts';
import * as repo from './verification.repository.ts';
import { verificationQuerySchema, type VerificationQuery, type VerificationRow } from './verification.schemas.ts';

/** The authority as a shared resource: one breaker and one call rate for every worker process. */
export type AuthorityGuards = { breaker: SharedBreaker; spacer: CallSpacer };

/** What the lookup job needs; WorkerDeps provides it. */
export type LookupDeps = {
  db: DatabasePool;
  config: Config;
  identity: IdentityAuthority;
  metrics: Metrics;
  authority: AuthorityGuards;
};

// An authority 429 without a Retry-After still pauses every caller this long.
const DEFAULT_RATE_LIMIT_PAUSE_MS = 1000;

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
 * The upstream call with its retries. Never throws for an upstream fault: the fault becomes a
 * `failed` decision, with the number of attempts it took, for the settlement to record.
 */
async function askUpstream(deps: LookupDeps, q: VerificationQuery, referenceId: string, log: Logger): Promise<{ outcome: UpstreamOutcome | Extract<Decision, { kind: 'failed' }>; attempts: number }> {
  const c = deps.config;
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
  const identity = resilient(deps.identity, upstreamRetry({ maxAttempts: c.IDENTITY_MAX_ATTEMPTS, backoffMs: c.IDENTITY_BACKOFF_MS }, hooks), hooks);
  try {
    // The breaker sees one outcome per lookup (its retries inside), so one faulty record is one failure.
    return { outcome: await deps.authority.breaker.execute(() => lookup(identity, q)), attempts };
  } catch (err) {
    return { outcome: { kind: 'failed', code: failureCode(err), detail: err instanceof Error ? err.message : String(err) }, attempts };
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

  const call = await askUpstream(deps, query, referenceId, log);
  let decision: Decision;
  if (call.outcome.kind === 'found') {
    const record = normalisePerson(call.outcome.raw);
    // Some upstreams leave the NIN out of a NIN answer; it is the one that was asked for.
    if (query.mode === 'nin' && record.nin === '') record.nin = query.nin;
    decision = { kind: 'found', record };
  } else {
    decision = call.outcome;
  }

  const settled = await settle(deps.db, ring, { referenceId, keyId: sealedQuery.keyId, decision, attempts: call.attempts });
  if (!settled) return resultOf(await repo.findVerification(deps.db, referenceId));
  switch (decision.kind) {
    case 'found':
      deps.metrics.unitsDebited.inc();
      return { outcome: 'found', record: { keyId: settled.record!.keyId, data: settled.record!.data.toString('base64') } };
    case 'failed':
      log.warn({ referenceId, code: decision.code, upstreamAttempts: call.attempts }, 'lookup failed; unit released');
      return { outcome: 'failed', code: decision.code };
    case 'not_found':
      return { outcome: 'not_found' };
  }
}

/**
 * A settled lookup (any outcome) gives its organisation's in-flight slot back; only lookups that
 * asked the authority feed the running mean of how long its slots stay busy. Best effort: a lost
 * slot goes stale by itself.
 */
export async function releaseLookupSlot(fairShare: FairShare, o: { orgId: number; referenceId: string; result: LookupResult; startedAt: number }, log: Logger): Promise<void> {
  const { result } = o;
  const asked = result.outcome !== 'failed' || (result.code?.startsWith('upstream_') && result.code !== 'upstream_circuit_open');
  await fairShare
    .finish({ orgId: o.orgId, referenceId: o.referenceId, ...(asked ? { durationMs: Date.now() - o.startedAt } : {}) })
    .catch((err: unknown) => log.warn({ err: describe(err), referenceId: o.referenceId }, 'in-flight slot not given back; it goes stale'));
}
