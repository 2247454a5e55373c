import { AppError, describe, INSUFFICIENT_UNITS } from '../../lib/errors.ts';
import { acceptedAnswer, type Answer } from './answer.ts';
import { enqueueBackgroundLookup } from './background.ts';
import * as idem from './idempotency.ts';
import { assertPendingWithinCap } from './pending.ts';
import { newReferenceId, pendingOf, type Run, type VerifyDeps } from './run.ts';
import * as repo from './verification.repository.ts';

/**
 * `Prefer: respond-async` on a live lookup: the unit is held and the row written, then the answer
 * is 202 at once. Neither the circuit nor admission is asked: the lookup waits in the queue's
 * background lane (below every synchronous lookup) until the authority answers or
 * ASYNC_MAX_WAIT_HOURS have passed. What can still refuse it: no spendable unit (402) and the
 * organisation's ORG_MAX_PENDING (429 `org_pending_cap`), both before anything stays written.
 * A face match (its selfie already checked) sends its sealed selfie along in the job: the lookup job
 * hands it with the found record to a face worker, which compares and settles (face-settle.ts).
 */
export async function runAsyncLive(deps: VerifyDeps, run: Run, face?: { ref: string; selfie?: { keyId: string; data: string }; liveness?: { keyId: string; data: string } }): Promise<Answer> {
  const { query } = run;
  const ref = face?.ref ?? run.ref ?? newReferenceId();
  const now = deps.clock.now();
  const built = pendingOf(deps, run, ref, now);
  const { jobQuery, useOnce } = built;
  const pending = { ...built.pending, delivery: 'async' as const };
  const claim = run.claim;
  // One transaction: the key bound to this reference, the row holding its unit (the trigger counts
  // it as pending), then the cap read under the counter's lock; a refusal rolls all of it back.
  await deps.db.transaction(async (tx) => {
    if (claim) await idem.linkKey(tx, claim, ref);
    if (!(await repo.insertPendingHoldingUnit(tx, pending))) {
      deps.metrics.verifications.inc({ mode: query.mode, outcome: 'insufficient_units' });
      throw new AppError('insufficient_units', INSUFFICIENT_UNITS);
    }
    await assertPendingWithinCap(tx, { orgId: run.orgId, cap: deps.config.ORG_MAX_PENDING, inserted: 1 }).catch((err: unknown) => {
      deps.metrics.verifications.inc({ mode: query.mode, outcome: 'refused_pending_cap' });
      throw err;
    });
  });
  try {
    const payload = {
      referenceId: ref,
      orgId: run.orgId,
      requestId: run.requestId,
      query: { keyId: jobQuery.keyId, data: jobQuery.data.toString('base64') },
      delivery: 'async' as const,
      acceptedAt: now.getTime(),
      ...(useOnce ? { useOnce: true as const } : {}),
      ...(face?.selfie ? { selfie: face.selfie } : {}),
      ...(face?.liveness ? { liveness: face.liveness } : {}),
    };
    // A face match's job holds its sealed selfie (and its result the record): gone as the job ends.
    await enqueueBackgroundLookup(deps, payload, { removeWhenDone: useOnce || !!face });
  } catch (err) {
    // The row is committed and holds its unit: the sweep finds a waiting row without a job and
    // queues it, so the acceptance stands (a vNIN's ends failed: its token was in that job only).
    deps.logger.warn({ err: describe(err), referenceId: ref }, 'asynchronous lookup not queued; the sweep queues it');
  }
  deps.metrics.verifications.inc({ mode: query.mode, outcome: 'accepted_async' });
  return acceptedAnswer(ref);
}
