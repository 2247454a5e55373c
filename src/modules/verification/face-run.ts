import { AppError, INSUFFICIENT_UNITS } from '../../lib/errors.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { checkSelfie, compareWithPhoto, faceClientDeps, isAcceptedImage, sealedImage, selfieRefused } from '../face/index.ts';
import { judgeSession, livenessFailed, STEPS, type DecodedFrame, type LivenessCheck, type LivenessFrameInput } from '../liveness/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { balanceOf } from '../wallet/index.ts';
import { answerOf, type Answer } from './answer.ts';
import { faceAnswerOf, faceBody, livenessRequiredOf, sealedLivenessCheck, type FaceAnswer, type FaceKept } from './face-kept.ts';
import { acceptedAnswer, runAsyncLive, runFixtureAsync } from './async-run.ts';
import { recordFixture, runFixture } from './fixture-run.ts';
import type { FixtureOutcome } from './fixtures.ts';
import { runLive } from './live-run.ts';
import type { PersonRecord } from './person.ts';
import { newReferenceId, type Run, type VerifyDeps, type Who } from './run.ts';

/** At most this many bytes of selfie, decoded (413 beyond). */
export const MAX_SELFIE_BYTES = 2 * 1024 * 1024;

export const SELFIE_TOO_LARGE = `selfie is larger than ${MAX_SELFIE_BYTES} bytes once decoded`;
export const SELFIE_NOT_BASE64 = 'selfie must be base64 (a data: prefix is allowed)';
export const SELFIE_OR_LIVENESS = 'Send exactly one of selfie and liveness';
export const FACE_CONSENT_REQUIRED = 'consent is required for a face match (a face is biometric data)';

/** The selfie's bytes: base64, an optional `data:<type>;base64,` prefix, whitespace ignored. */
export function decodeSelfie(text: string): Buffer {
  const body = text.replace(/^data:[a-z0-9.+/-]*;base64,/i, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length === 0) throw new AppError('bad_request', SELFIE_NOT_BASE64);
  // Checked on the text first, so an oversized selfie is never decoded.
  if (Math.floor((body.length * 3) / 4) - (body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0) > MAX_SELFIE_BYTES) throw new AppError('payload_too_large', SELFIE_TOO_LARGE);
  const bytes = Buffer.from(body, 'base64');
  // Told by its first bytes, before anything is claimed, held or queued: no decoder sees another format.
  if (!isAcceptedImage(bytes)) throw selfieRefused('selfie_unreadable');
  return bytes;
}

/** At most this many liveness frames in one request, and this many of one step. */
export const MAX_LIVENESS_FRAMES = 12;
export const MAX_FRAMES_PER_STEP = 3;

/**
 * A liveness check's frames, told before anything is claimed, held or queued: the shape (every step
 * sent, 1 to 3 frames each, at most 12; a non-negative integer `captured_at_ms`) and each image by the
 * selfie's rules (base64 400, over 2 MiB decoded 413, not a JPEG, PNG or WebP by its first bytes 422
 * `selfie_unreadable`), the error naming the frame. The line with a judged failure (422
 * `liveness_failed`): what is wrong whatever the session is refused here; what depends on the session
 * or the frames' content (their order, their times, their faces and poses) is judged.
 */
export function decodeFrames(frames: readonly LivenessFrameInput[]): DecodedFrame[] {
  if (frames.length === 0 || frames.length > MAX_LIVENESS_FRAMES) throw new AppError('bad_request', `liveness.frames must hold 1 to ${MAX_LIVENESS_FRAMES} frames`);
  for (const step of STEPS) {
    const n = frames.filter((f) => f.step === step).length;
    if (n < 1 || n > MAX_FRAMES_PER_STEP) throw new AppError('bad_request', `liveness.frames must hold 1 to ${MAX_FRAMES_PER_STEP} frames of each step (front, turn_left, turn_right, look_up); ${step} has ${n}`);
  }
  return frames.map((f, i) => {
    if (!(STEPS as readonly string[]).includes(f.step)) throw new AppError('bad_request', `liveness.frames[${i}].step must be one of ${STEPS.join(', ')}`);
    if (!Number.isSafeInteger(f.captured_at_ms) || f.captured_at_ms < 0) throw new AppError('bad_request', `liveness.frames[${i}].captured_at_ms must be a non-negative integer (milliseconds of one clock of the device)`);
    try {
      return { step: f.step, captured_at_ms: f.captured_at_ms, image: decodeSelfie(f.image) };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      throw new AppError(err.code, `liveness.frames[${i}].image: ${err.detail.replace(/^selfie /, 'the image ')}`, { ...(err.extra ? { extra: err.extra } : {}) });
    }
  });
}

/** The face a face match compares: a selfie, or a liveness session's frames (judged first). */
export type FaceToMatch = { kind: 'selfie'; selfie: Buffer } | { kind: 'liveness'; sessionId: string; frames: DecodedFrame[] };

/**
 * POST /verify-nin/face (and a link's face submission), after the request's checks and its
 * Idempotency-Key claim (entrance.ts). Order: the wallet (one comparison's units), the selfie (a face
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
