import { AppError, INSUFFICIENT_UNITS } from '../../lib/errors.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { checkSelfie, compareWithPhoto, faceClientDeps, isAcceptedImage, sealedImage, selfieRefused } from '../face/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { balanceOf } from '../wallet/index.ts';
import { answerOf, type Answer } from './answer.ts';
import { faceAnswerOf, faceBody, livenessRequiredOf, type FaceAnswer, type FaceKept } from './face-kept.ts';
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

/**
 * POST /verify-nin/face (and a link's face submission), after the request's checks and its
 * Idempotency-Key claim (entrance.ts). Order: the wallet (one comparison's units), the selfie (a face
 * worker says whether it shows one usable face: a refusal is a 422 with nothing looked up or charged),
 * then the lookup as a NIN or vNIN verification does it (fixtures free; live: the unit held, captured
 * when found), then the comparison with the record's photo, stored with its extra units in one
 * statement. The selfie lives in this request's memory and, sealed, in its face jobs (removed as they
 * end); never stored.
 */
export async function matchFace(
  deps: VerifyDeps,
  who: Who,
  m: { run: Run; selfie: Buffer; fixture: FixtureOutcome | null; respondAsync: boolean; signal?: AbortSignal | undefined },
): Promise<Answer> {
  const { selfie, fixture } = m;
  const { orgId, query } = m.run;
  const matchOnly = query.mode === 'face' && query.matchOnly;
  const units = deps.config.FACE_MATCH_UNITS;
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
  await checkSelfie(faceDeps, orgId, ref, selfie, requestId, m.signal);

  const settings = await organisationSettings(deps.db, orgId);
  const threshold = settings.face_match_threshold;
  // A fixture's comparison is made here (nothing is charged for it, so nothing to give back).
  const compare = async (record: PersonRecord): Promise<FaceAnswer> => faceAnswerOf(await compareWithPhoto(faceDeps, orgId, ref, selfie, record.image, requestId, m.signal), threshold);
  const keep = (record: PersonRecord, face: FaceAnswer): FaceKept => ({ ...(matchOnly ? {} : { record }), face, ...livenessRequiredOf(settings) });
  const done = async (face: FaceAnswer) => {
    deps.metrics.verifications.inc({ mode: 'face', outcome: face.status });
    await recordAudit(deps.db, { ...auditContext(who), action: 'verification.face_matched', target: ref });
  };
  const run: Run = { ...m.run, ref };

  if (fixture) {
    if (fixture.kind !== 'found') return m.respondAsync ? runFixtureAsync(deps, run, fixture) : runFixture(deps, run, fixture);
    // A fixture is decided at once, asked asynchronously or not (its comparison too): 202, then the requery.
    const kept = keep(fixture.record, await compare(fixture.record));
    await recordFixture(deps, run, fixture, m.respondAsync ? 'async' : 'sync', { ref, kept });
    await done(kept.face!);
    return m.respondAsync ? acceptedAnswer(ref) : { status: 200, body: faceBody(ref, kept) };
  }

  if (m.respondAsync) {
    // The selfie (checked above) goes sealed into the lookup job, which compares it with the found
    // record's photo and settles both at once; the event names who asked, at acceptance.
    const answer = await runAsyncLive(deps, run, { ref, selfie: sealedImage(deps.config.encryptionKeys, ref, selfie) });
    await recordAudit(deps.db, { ...auditContext(who), action: 'verification.face_matched', target: ref });
    return answer;
  }

  // The selfie (checked above) goes sealed into the lookup job, which compares it with the found
  // record's photo before it settles (face-settle.ts): the lookup's unit is captured only with a
  // comparison, and a comparison that cannot be made ends the verification failed (503
  // `face_unavailable`, the unit released, nothing charged).
  return runLive(deps, run, {
    ref,
    selfie: sealedImage(deps.config.encryptionKeys, ref, selfie),
    then: async (row) => {
      // Found: the record and comparison as settled (from the job's result, or the row it stored).
      const answer = answerOf(deps, row, 'verify');
      const face = row.status === 'found' ? (answer.body as ReturnType<typeof faceBody>).face : null;
      if (face) await done(face);
      return answer;
    },
  });
}
