import { randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import type { z } from 'zod';
import type { Config } from '../../config.ts';
import { jobIds } from '../../jobs/catalog.ts';
import type { Producer, WaitOutcome } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { sealJson } from '../../lib/crypto.ts';
import { AppError, describe, INSUFFICIENT_UNITS, NIN_NOT_FOUND } from '../../lib/errors.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { requireOrgMember, type Principal } from '../auth/index.ts';
import { requireKnownReason, type ReasonsDeps } from '../reasons/index.ts';
import { admitLive, type CircuitView } from './admission.ts';
import { answerOf, QUEUE_UNAVAILABLE, UPSTREAM_CIRCUIT_OPEN, type Answer } from './answer.ts';
import type { FairShare } from '../../lib/fair-share.ts';
import { fixtureOutcome, type FixtureOutcome } from './fixtures.ts';
import type { InlineLookup } from './inline-lookup.ts';
import * as idem from './idempotency.ts';
import { settle } from './settle.ts';
import * as repo from './verification.repository.ts';
import type { demographyBody, ninBody, phoneBody, VerificationQuery, VerificationRow } from './verification.schemas.ts';

export const SUBSCRIPTION_REQUIRED = 'An active subscription is required for live verifications (fixture NINs work without one)';

/** What the HTTP side needs; AppContext provides it. */
export type VerifyDeps = ReasonsDeps & { db: DatabasePool; producer: Producer; clock: Clock; metrics: Metrics; fairShare: FairShare; circuit: CircuitView; lookupInline?: InlineLookup };

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

  const maxInFlight = req.principal.maxInFlight ?? deps.config.ORG_MAX_IN_FLIGHT;
  const run = { orgId, userId: req.principal.userId, apiClientId: req.principal.apiClientId, query, claim, requestId: req.requestId, maxInFlight };
  try {
    const answer = fixture ? await runFixture(deps, run, fixture) : await runLive(deps, run);
    if (claim) await idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, answer);
    return answer;
  } catch (err) {
    if (claim) await afterFailure(deps, claim, err);
    throw err;
  }
}

type Run = { orgId: number; userId: number | null; apiClientId: number | null; query: VerificationQuery; claim: idem.Claim | null; requestId: string; maxInFlight: number };

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

/** Reserved test-mode NINs: no upstream call, no debit, a zero ledger line. */
async function runFixture(deps: VerifyDeps, run: Run, fixture: FixtureOutcome): Promise<Answer> {
  const ref = newReferenceId();
  const now = deps.clock.now();
  const ring = deps.config.encryptionKeys;
  const queryEnc = sealJson(ring, run.query, ref);
  const recordEnc = fixture.kind === 'found' ? sealJson(ring, fixture.record, ref).data : null;
  const outcome = fixture.kind;
  const row = {
    referenceId: ref,
    orgId: run.orgId,
    userId: run.userId,
    apiClientId: run.apiClientId,
    mode: 'nin' as const,
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
  };
  const details = { fixture: true, outcome, mode: 'nin', reason: run.query.reason };
  // The row and its ledger line are one autocommit statement; an Idempotency-Key is bound to the
  // same reference in the same transaction.
  const claim = run.claim;
  if (claim) {
    await deps.db.transaction(async (tx) => {
      await repo.insertFixtureWithLedgerLine(tx, row, details);
      await idem.linkKey(tx, claim, ref);
    });
  } else {
    await repo.insertFixtureWithLedgerLine(deps.db, row, details);
  }
  deps.metrics.verifications.inc({ mode: 'nin', outcome: `fixture_${outcome}` });
  if (fixture.kind === 'not_found') throw new AppError('not_found', NIN_NOT_FOUND);
  return { status: 200, body: { data: { ...fixture.record, reference_id: ref } } };
}

async function runLive(deps: VerifyDeps, run: Run): Promise<Answer> {
  const { query } = run;
  const ref = newReferenceId();
  const now = deps.clock.now();
  // The circuit is asked first; a lookup it lets through must still pass admission, which refuses
  // before anything is sealed, written or held.
  const circuitOpen = deps.circuit.shouldRefuse();
  let priority = 0;
  if (!circuitOpen) {
    try {
      priority = await admitLive(deps, { orgId: run.orgId, referenceId: ref, cap: run.maxInFlight, mode: query.mode });
    } catch (err) {
      deps.circuit.unusedProbe();
      throw err;
    }
  }
  const queryEnc = sealJson(deps.config.encryptionKeys, query, ref);
  const pending = {
    referenceId: ref,
    orgId: run.orgId,
    userId: run.userId,
    apiClientId: run.apiClientId,
    mode: query.mode,
    reason: query.reason,
    queryEnc: queryEnc.data,
    keyId: queryEnc.keyId,
    requestId: run.requestId,
    createdAt: now,
    expiresAt: expiresAt(deps.config, now),
  };
  const claim = run.claim;
  // The authority is known to be down: say so at once, record why, hold nothing.
  if (circuitOpen) {
    const failed = { ...pending, fixture: false, status: 'failed' as const, holdsUnit: false, recordEnc: null, failureCode: 'upstream_circuit_open' };
    // One autocommit INSERT unless an Idempotency-Key must be bound to the same reference with it.
    if (claim) {
      await deps.db.transaction(async (tx) => {
        await repo.insertVerification(tx, failed);
        await idem.linkKey(tx, claim, ref);
      });
    } else {
      await repo.insertVerification(deps.db, failed);
    }
    deps.metrics.verifications.inc({ mode: query.mode, outcome: 'circuit_open' });
    throw new AppError('unavailable', UPSTREAM_CIRCUIT_OPEN, { extra: { reference_id: ref, code: 'upstream_circuit_open' }, headers: { 'Retry-After': String(Math.ceil(deps.config.IDENTITY_BREAKER_COOLDOWN_MS / 1000)) } });
  }
  const giveBackSlot = () =>
    deps.fairShare.finish({ orgId: run.orgId, referenceId: ref, unusedTag: priority }).catch((err: unknown) => deps.logger.warn({ err: describe(err), referenceId: ref }, 'in-flight slot not given back; it goes stale'));
  const noUnits = () => {
    deps.metrics.verifications.inc({ mode: query.mode, outcome: 'insufficient_units' });
    return new AppError('insufficient_units', INSUFFICIENT_UNITS);
  };
  // Without an Idempotency-Key the hold is one autocommit statement. With one, the key is bound to
  // this reference first and the hold is the transaction's last statement before COMMIT.
  let held: boolean;
  try {
    held = claim
      ? await deps.db.transaction(async (tx) => {
          await idem.linkKey(tx, claim, ref);
          if (!(await repo.insertPendingHoldingUnit(tx, pending))) throw noUnits();
          return true;
        })
      : await repo.insertPendingHoldingUnit(deps.db, pending);
  } catch (err) {
    deps.circuit.unusedProbe();
    await giveBackSlot();
    throw err;
  }
  if (!held) {
    deps.circuit.unusedProbe();
    await giveBackSlot();
    throw noUnits();
  }

  let waited: WaitOutcome<'verification.lookup'> | undefined;
  try {
    const payload = { referenceId: ref, orgId: run.orgId, requestId: run.requestId, query: { keyId: queryEnc.keyId, data: queryEnc.data.toString('base64') } };
    // LOOKUP_INLINE (benchmarks only): the same job in this process, continuing below exactly as after a job.
    waited = deps.lookupInline
      ? await deps.lookupInline(payload, { timeoutMs: deps.config.VERIFY_WAIT_MS, priority })
      : await deps.producer.enqueueAndWait('verification.lookup', payload, { jobId: jobIds.lookup(ref), timeoutMs: deps.config.VERIFY_WAIT_MS, priority });
  } catch (err) {
    // Redis out of reach: give the unit back now rather than leave it held until the sweep runs.
    // If the job did get queued after all, whichever settles first wins (status guard).
    deps.logger.warn({ err: describe(err), referenceId: ref }, 'lookup could not be queued');
    const decision = { kind: 'failed' as const, code: 'queue_unavailable', detail: 'job queue unreachable' };
    await giveBackSlot();
    if (await settle(deps.db, deps.config.encryptionKeys, { referenceId: ref, keyId: queryEnc.keyId, decision, attempts: 0 })) {
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
