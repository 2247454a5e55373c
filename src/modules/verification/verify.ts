import { AppError, describe } from '../../lib/errors.ts';
import { acceptedAnswer, answerOf, type Answer } from './answer.ts';
import { runAsyncLive } from './async-run.ts';
import type { FaceLookup } from './face-run.ts';
import type { FixtureOutcome } from './fixtures.ts';
import { runFixture } from './fixture-run.ts';
import * as idem from './idempotency.ts';
import { runLive } from './live-run.ts';
import type { Run, VerifyDeps } from './run.ts';
import * as repo from './verification.repository.ts';
import { rowByVnin } from './vnin.ts';

export type { VerifyDeps } from './run.ts';

export const SUBSCRIPTION_REQUIRED = 'An active subscription is required for live verifications (fixture NINs work without one)';

/**
 * A query after its checks and its Idempotency-Key claim (a face match's: after its own, face-run.ts),
 * delivered as asked: waited for, or accepted at once (`async`: the key is linked to the verification
 * and its 202 is not kept). A fixture is decided on the spot either way. The one place each runner
 * is called from.
 */
export async function deliverLookup(deps: VerifyDeps, run: Run, fixture: FixtureOutcome | null, respondAsync: boolean, face?: FaceLookup): Promise<Answer> {
  // A face match's lookup is recorded under the reference its face jobs already used.
  const asked: Run = face ? { ...run, ref: face.ref } : run;
  if (fixture) return runFixture(deps, asked, fixture, respondAsync ? 'async' : 'sync', face);
  if (!respondAsync) return runLive(deps, asked, face ? { ...face, then: face.answered } : {});
  const answer = await runAsyncLive(deps, asked, face);
  // An asynchronous face match's event names who asked, at acceptance.
  if (face) await face.matched(null);
  return answer;
}

export async function afterFailure(deps: VerifyDeps, claim: idem.Claim, err: unknown, byVnin: boolean): Promise<void> {
  try {
    // An unexpected fault (PostgreSQL or Redis gone mid-request): the verification may exist.
    if (!(err instanceof AppError)) return idem.releaseKey(deps.db, claim, { unlinkedOnly: true });
    // Lost the key to a concurrent request: the claim is that request's, leave it alone.
    if (err.code === 'conflict') return;
    if (idem.isFinal(err.status)) return idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, idem.answerOfError(err));
    // A vNIN whose lookup may have reached the authority is spent: a retry with the key replays the
    // 502 rather than look the token up again (503s mean the call never left and stay retryable).
    if (byVnin && err.code === 'upstream_failed') return idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, idem.answerOfError(err));
    // A 504 keeps its claim: the claim is linked to a verification that may still be charged,
    // and a retry with the same key must resolve to that verification, not start a second one.
    if (err.code === 'timeout') return;
    return idem.releaseKey(deps.db, claim);
  } catch (storeErr) {
    deps.logger.warn({ err: describe(storeErr) }, 'idempotency key not updated');
  }
}

/** A retry of a request whose verification was started but whose answer was never stored. */
export async function resumeLinked(deps: VerifyDeps, claim: idem.Claim, referenceId: string): Promise<Answer> {
  const row = await repo.findVerification(deps.db, referenceId, claim.orgId);
  const replayed = { 'Idempotent-Replayed': 'true' };
  if (row?.status === 'pending' && row.delivery !== 'sync') return acceptedAnswer(referenceId, replayed);
  if (!row || row.status === 'pending') throw new AppError('conflict', idem.IN_PROGRESS, { extra: { reference_id: referenceId } });
  let answer: Answer;
  try {
    answer = answerOf(deps, row, 'verify');
  } catch (err) {
    // A vNIN lookup that may have reached the authority is spent, as in afterFailure: its 502 is kept.
    const spent = err instanceof AppError && err.code === 'upstream_failed' && rowByVnin(deps.config.encryptionKeys, row);
    if (!(err instanceof AppError) || (!idem.isFinal(err.status) && !spent)) {
      await idem.releaseKey(deps.db, claim);
      throw err;
    }
    answer = idem.answerOfError(err);
  }
  await idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, answer);
  return { ...answer, headers: replayed };
}
