import { AppError, INSUFFICIENT_UNITS } from '../../lib/errors.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { checkSelfie, compareWithPhoto, faceClientDeps, sealedImage, selfieRefused } from '../face/index.ts';
import { judgeSession, livenessFailed, type LivenessCheck } from '../liveness/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { balanceOf } from '../wallet/index.ts';
import { answerOf } from './answer.ts';
import { faceAnswerOf, faceBody, livenessRequiredOf, sealedLivenessCheck, type FaceAnswer, type FaceKept } from './face-kept.ts';
import type { FaceToMatch } from './face-part.ts';
import type { FixtureOutcome } from './fixtures.ts';
import type { AfterLookup } from './live-run.ts';
import { newReferenceId, type Run, type VerifyDeps, type Who } from './run.ts';

/** Sealed for a lookup job (base64). */
type SealedForJob = { keyId: string; data: string };

/**
 * A face match as its lookup is handed (verify.ts, deliverLookup): the reference its face jobs
 * already used, the selfie (and a passed liveness check) sealed for a live lookup's job, a found
 * fixture's comparison, and what is done once the match is answered.
 */
export type FaceLookup = {
  ref: string;
  /** Live lookups only: the lookup job hands it with the found record to a face worker. */
  selfie?: SealedForJob;
  liveness?: SealedForJob;
  /** A found fixture's comparison, made here (no authority to spare): what its row keeps, and its 200 body. */
  compared?: { kept: FaceKept; body: ReturnType<typeof faceBody> };
  /** The match answered: its outcome counted (when known: not at an asynchronous acceptance) and its audit event. */
  matched(face: FaceAnswer | null): Promise<void>;
  /** A live match waited for: its answer, read from the row its comparison settled. */
  answered: AfterLookup;
};

/**
 * POST /verify-nin/face (and a link's face submission), after the request's checks and its
 * Idempotency-Key claim (entrance.ts; the face part decoded by face-part.ts): what is done before
 * the lookup. Order: the wallet (one comparison's units), the selfie (a face worker says whether it
 * shows one usable face: a refusal is a 422 with nothing looked up or charged); the lookup is then
 * delivered as a NIN or vNIN verification's is (fixtures free; live: the unit held), and the
 * comparison with the record's photo, which a live match's face worker settles: the unit captured,
 * the comparison stored with its extra units, in one transaction. With liveness, the judging job
 * checks the front frame as the selfie too. The selfie lives in this request's memory and, sealed,
 * in its face jobs (removed as they end); never stored.
 */
export async function faceBeforeLookup(
  deps: VerifyDeps,
  who: Who,
  m: { run: Run; face: FaceToMatch; fixture: FixtureOutcome | null; signal?: AbortSignal | undefined },
): Promise<FaceLookup> {
  const { fixture } = m;
  const { orgId, query } = m.run;
  const matchOnly = query.mode === 'face' && query.matchOnly;
  const liveness = m.face.kind === 'liveness';
  const units = deps.config.FACE_MATCH_UNITS + (liveness ? deps.config.LIVENESS_UNITS : 0);
  // A comparison costs FACE_MATCH_UNITS: refused at once when the wallet could not pay for one. (The
  // lookup then holds its own unit; the rest is debited with the comparison, see settleFaceOutcome.)
  if (!fixture) {
    const w = await balanceOf(deps.db, orgId);
    if (w.units - w.reserved < units) {
      deps.metrics.verifications.inc({ mode: 'face', outcome: 'insufficient_units' });
      throw new AppError('insufficient_units', INSUFFICIENT_UNITS);
    }
  }
  const ref = m.run.ref ?? newReferenceId();
  const faceDeps = faceClientDeps(deps.config, deps.producer);
  const requestId = m.run.requestId;
  // A liveness check is judged before anything is looked up: failed, a 422 with nothing charged
  // (the session `failed`); passed, its front frame is the selfie and the check is kept with the comparison.
  let selfie: Buffer;
  let check: LivenessCheck | undefined;
  const comparedAtOnce = fixture?.kind === 'found' && fixture.record.image !== '';
  if (m.face.kind === 'liveness') {
    const judged = await judgeSession(deps, orgId, m.face.sessionId, m.face.frames, requestId, m.signal);
    if (judged.status === 'failed') {
      deps.metrics.verifications.inc({ mode: 'face', outcome: 'liveness_failed' });
      throw livenessFailed(judged.result);
    }
    selfie = judged.selfie;
    check = judged.check;
    // The front frame was checked as the selfie in the judging job (one face trip before the lookup).
    if (judged.frontCheck?.outcome === 'refused') throw selfieRefused(judged.frontCheck.code ?? 'selfie_unreadable');
    if (!judged.frontCheck) await checkSelfie(faceDeps, orgId, ref, selfie, requestId, m.signal);
  } else {
    selfie = m.face.selfie;
    // A found fixture with a photo is compared at once, and that one face job checks the selfie too
    // (a refusal is the same 422, nothing charged): no authority to spare, so no trip before it.
    if (!comparedAtOnce) await checkSelfie(faceDeps, orgId, ref, selfie, requestId, m.signal);
  }

  const settings = await organisationSettings(deps.db, orgId);
  const threshold = settings.face_match_threshold;
  const matched = async (face: FaceAnswer | null) => {
    if (face) deps.metrics.verifications.inc({ mode: 'face', outcome: face.status });
    await recordAudit(deps.db, { ...auditContext(who), action: 'verification.face_matched', target: ref });
  };
  // Found: the record and comparison as settled (from the job's result, or the row it stored).
  const answered: AfterLookup = async (row) => {
    const answer = answerOf(deps, row, 'verify');
    const face = row.status === 'found' ? (answer.body as ReturnType<typeof faceBody>).face : null;
    if (face) await matched(face);
    return answer;
  };

  if (fixture) {
    if (fixture.kind !== 'found') return { ref, matched, answered };
    // A fixture is decided at once, asked asynchronously or not (its comparison too), and nothing is
    // charged for its comparison, so nothing to give back.
    const compared = faceAnswerOf(
      await compareWithPhoto(faceDeps, orgId, ref, selfie, fixture.record.image, requestId, m.signal, { alsoTheCheck: comparedAtOnce && !check }),
      threshold,
      check,
    );
    const kept: FaceKept = { ...(matchOnly ? {} : { record: fixture.record }), face: compared, ...livenessRequiredOf(settings) };
    return { ref, compared: { kept, body: faceBody(ref, kept) }, matched, answered };
  }

  // Live: the selfie (checked above) goes sealed into the lookup job, which hands it with the found
  // record to a face worker that compares and settles (face-settle.ts): the lookup's unit is
  // captured only with a comparison, and a comparison that cannot be made ends the verification
  // failed (503 `face_unavailable`, the unit released, nothing charged).
  const sealedCheck = check ? { liveness: sealedLivenessCheck(deps.config.encryptionKeys, ref, check) } : {};
  return { ref, selfie: sealedImage(deps.config.encryptionKeys, ref, selfie), ...sealedCheck, matched, answered };
}
