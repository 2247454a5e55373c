import { jobIds } from '../../jobs/catalog.ts';
import type { WaitOutcome } from '../../jobs/producer.ts';
import { waitForComparison } from './face-settle.ts';
import type { Sealed } from '../../lib/crypto.ts';
import { AppError, describe, INSUFFICIENT_UNITS } from '../../lib/errors.ts';
import { admitLive } from './admission.ts';
import { answerOf, QUEUE_UNAVAILABLE, UPSTREAM_CIRCUIT_OPEN, type Answer } from './answer.ts';
import * as idem from './idempotency.ts';
import { lookupWaitMs } from '../../jobs/budgets.ts';
import { newReferenceId, pendingOf, type Run, type VerifyDeps } from './run.ts';
import { settle } from './settle.ts';
import * as repo from './verification.repository.ts';
import type { VerificationRow } from './verification.schemas.ts';

/**
 * What is done with a decided verification: by default its answer. It gets the record sealed in the
 * job's result when the wait saw it (`fromJob`), else null.
 */
export type AfterLookup = (row: VerificationRow, fromJob: Sealed | null) => Promise<Answer>;

/**
 * A live lookup, waited for. `selfie` (a face match): sealed into the lookup job, which hands it with
 * the found record to the face queue; the face worker's comparison settles the verification
 * (face-settle.ts), and the wait covers that job too (FACE_WAIT_MS more).
 */
export async function runLive(deps: VerifyDeps, run: Run, opts: { ref?: string; then?: AfterLookup; selfie?: { keyId: string; data: string }; liveness?: { keyId: string; data: string } } = {}): Promise<Answer> {
  const { query } = run;
  const ref = opts.ref ?? run.ref ?? newReferenceId();
  const then: AfterLookup = opts.then ?? (async (row) => answerOf(deps, row, 'verify'));
  const now = deps.clock.now();
  // The circuit is asked first; admission then refuses (429, or 402 for a wallet that could not pay,
  // the circuit open or not) before anything is sealed, written or held.
  const circuitOpen = deps.circuit.shouldRefuse();
  const priority = await admitLive(deps, { orgId: run.orgId, referenceId: ref, cap: run.maxInFlight, mode: query.mode, circuitOpen });
  const { pending, queryEnc, jobQuery, useOnce } = pendingOf(deps, run, ref, now);
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

  const timeoutMs = lookupWaitMs(deps.config, opts.selfie !== undefined);
  // A face match ends with its comparison's job (the face worker settles it), which its lookup job
  // queues: waited for from here, before the lookup is queued, so that its end cannot pass unseen.
  const compareWait = opts.selfie ? deps.producer.waitForJob('face.compare', jobIds.faceCompare(ref), timeoutMs) : undefined;
  let waited: WaitOutcome<'verification.lookup'> | undefined;
  try {
    const payload = {
      referenceId: ref,
      orgId: run.orgId,
      requestId: run.requestId,
      query: { keyId: jobQuery.keyId, data: jobQuery.data.toString('base64') },
      ...(useOnce ? { useOnce: true as const } : {}),
      ...(opts.selfie ? { selfie: opts.selfie } : {}),
      ...(opts.liveness ? { liveness: opts.liveness } : {}),
    };
    // LOOKUP_INLINE (benchmarks only): the same job in this process, continuing below exactly as after a job.
    waited = deps.lookupInline
      ? await deps.lookupInline(payload, { timeoutMs, priority })
      : // A face match's job carries its sealed selfie: gone as the job ends.
        await deps.producer.enqueueAndWait('verification.lookup', payload, { jobId: jobIds.lookup(ref), timeoutMs, priority, removeWhenDone: useOnce || query.mode === 'face' });
  } catch (err) {
    compareWait?.stop();
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

  if (compareWait) await waitForComparison(deps, { ref, orgId: run.orgId, waited, compareWait });

  // A found or not-found job result is final (the row was settled before the job completed), so it
  // is answered as it stands; not a face match's hand-over (its comparison settled it). Anything else
  // reads the row, which is the truth whatever the wait said: a completion event may have been
  // missed, and a job that outlived the wait may have finished since.
  const result = waited?.status === 'completed' ? waited.result : undefined;
  if (result && !result.compareHandedOver && ((result.outcome === 'found' && result.record) || result.outcome === 'not_found')) {
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
      // A not-found vNIN's refusal (used, expired, ...) comes as the result's code.
      failure_code: result.outcome === 'not_found' ? (result.code ?? null) : null,
      created_at: now,
      expires_at: pending.expiresAt,
      delivery: 'sync',
    };
    return then(settled, result.record ? { keyId: result.record.keyId, data: Buffer.from(result.record.data, 'base64') } : null);
  }
  const row = await repo.findVerification(deps.db, ref);
  if (!row) throw new Error('verification row vanished');
  deps.metrics.verifications.inc({ mode: query.mode, outcome: row.status });
  return then(row, null);
}
