import { AppError, INSUFFICIENT_UNITS } from '../../lib/errors.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { checkSelfie, compareWithPhoto, faceClientDeps, sealedImage, selfieRefused } from '../face/index.ts';
import { judgeSession, livenessFailed, type LivenessCheck } from '../liveness/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { balanceOf } from '../wallet/index.ts';
import { answerOf, type Answer } from './answer.ts';
import { faceAnswerOf, faceBody, livenessRequiredOf, sealedLivenessCheck, type FaceAnswer, type FaceKept } from './face-kept.ts';
import { acceptedAnswer, runAsyncLive, runFixtureAsync } from './async-run.ts';
import { recordFixture, runFixture } from './fixture-run.ts';
import type { FaceToMatch } from './face-part.ts';
import type { FixtureOutcome } from './fixtures.ts';
import { runLive } from './live-run.ts';
import type { PersonRecord } from './person.ts';
import { newReferenceId, type Run, type VerifyDeps, type Who } from './run.ts';

/**
 * POST /verify-nin/face (and a link's face submission), after the request's checks and its
 * Idempotency-Key claim (entrance.ts; the face part decoded by face-part.ts). Order: the wallet (one comparison's units), the selfie (a face
 * worker says whether it shows one usable face: a refusal is a 422 with nothing looked up or charged),
 * then the lookup as a NIN or vNIN verification does it (fixtures free; live: the unit held), then the
 * comparison with the record's photo, which a live match's face worker settles: the unit captured,
 * the comparison stored with its extra units, in one transaction. With liveness, the judging job
 * checks the front frame as the selfie too. The selfie lives in this request's memory and, sealed, in its face jobs (removed as they
 * end); never stored.
 */
export async function matchFace(
  deps: VerifyDeps,
  who: Who,
  m: { run: Run; face: FaceToMatch; fixture: FixtureOutcome | null; respondAsync: boolean; signal?: AbortSignal | undefined },
): Promise<Answer> {
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
  // A fixture's comparison is made here (nothing is charged for it, so nothing to give back).
  const compare = async (record: PersonRecord): Promise<FaceAnswer> =>
    faceAnswerOf(await compareWithPhoto(faceDeps, orgId, ref, selfie, record.image, requestId, m.signal, { alsoTheCheck: comparedAtOnce && !check }), threshold, check);
  const keep = (record: PersonRecord, face: FaceAnswer): FaceKept => ({ ...(matchOnly ? {} : { record }), face, ...livenessRequiredOf(settings) });
  const done = async (face: FaceAnswer) => {
    deps.metrics.verifications.inc({ mode: 'face', outcome: face.status });
    await recordAudit(deps.db, { ...auditContext(who), action: 'verification.face_matched', target: ref });
  };
  const run: Run = { ...m.run, ref };
  const sealedCheck = check ? { liveness: sealedLivenessCheck(deps.config.encryptionKeys, ref, check) } : {};

  if (fixture) {
    if (fixture.kind !== 'found') return m.respondAsync ? runFixtureAsync(deps, run, fixture) : runFixture(deps, run, fixture);
    // A fixture is decided at once, asked asynchronously or not (its comparison too): 202, then the requery.
    const kept = keep(fixture.record, await compare(fixture.record));
    await recordFixture(deps, run, fixture, m.respondAsync ? 'async' : 'sync', { ref, kept });
    await done(kept.face!);
    return m.respondAsync ? acceptedAnswer(ref) : { status: 200, body: faceBody(ref, kept) };
  }

  if (m.respondAsync) {
    // The selfie (checked above) goes sealed into the lookup job, which hands it with the found
    // record to a face worker that compares and settles both at once; the event names who asked, at acceptance.
    const answer = await runAsyncLive(deps, run, { ref, selfie: sealedImage(deps.config.encryptionKeys, ref, selfie), ...sealedCheck });
    await recordAudit(deps.db, { ...auditContext(who), action: 'verification.face_matched', target: ref });
    return answer;
  }

  // The selfie (checked above) goes sealed into the lookup job, which hands it with the found record
  // to a face worker that compares and settles (face-settle.ts): the lookup's unit is captured only
  // with a comparison, and a comparison that cannot be made ends the verification failed (503
  // `face_unavailable`, the unit released, nothing charged). The answer is read from the settled row.
  return runLive(deps, run, {
    ref,
    selfie: sealedImage(deps.config.encryptionKeys, ref, selfie),
    ...sealedCheck,
    then: async (row) => {
      // Found: the record and comparison as settled (from the job's result, or the row it stored).
      const answer = answerOf(deps, row, 'verify');
      const face = row.status === 'found' ? (answer.body as ReturnType<typeof faceBody>).face : null;
      if (face) await done(face);
      return answer;
    },
  });
}
