import type { JobPayload, JobResult } from '../../jobs/catalog.ts';
import { open, type KeyRing } from '../../lib/crypto.ts';
import type { Assert, Same } from '../../openapi/common.ts';
import { judgeLiveness, type JudgeDeps, type JudgeRules } from './judge.ts';
import type { Challenge, LivenessResult, Step } from './liveness.schemas.ts';

// The job catalog (below the modules) spells the challenges and steps itself: they must be these.
type CatalogAgrees = [
  Assert<Same<JobPayload<'liveness.judge'>['challenges'][number], Challenge>>,
  Assert<Same<JobPayload<'liveness.judge'>['frames'][number]['step'], Step>>,
];

/** The associated data every sealed liveness frame carries: it opens for this session only. */
export const livenessAad = (sessionId: string) => `liveness:${sessionId}`;

/** A frame checked as a selfie is (the face module's `face.check`): accepted, or the refusal's code. */
export type FrontCheck = (image: Buffer) => Promise<{ outcome: 'accepted' } | { outcome: 'refused'; code: string }>;

/**
 * The `liveness.judge` job, run by a face worker (the one process with the model): opens the session's
 * sealed frames, judges them and returns the result only (no frame, landmark or descriptor leaves).
 * When the poses were measured from a front frame, that frame is also checked as the face match's
 * selfie (`checkFront`, the face.check's rule) in the same job: one face trip before the lookup.
 */
export async function runLivenessJudgement(
  deps: JudgeDeps & { ring: KeyRing; rules: JudgeRules; checkFront?: FrontCheck },
  p: JobPayload<'liveness.judge'>,
): Promise<LivenessResult & JobResult<'liveness.judge'>> {
  const frames = p.frames.map((f) => ({ step: f.step, captured_at_ms: f.captured_at_ms, image: open(deps.ring, { keyId: f.image.keyId, data: Buffer.from(f.image.data, 'base64') }, livenessAad(p.sessionId)) }));
  const judged = await judgeLiveness(deps, p.challenges, frames, deps.rules);
  // Checked only for a passed judgement: a failed one is a 422 whatever its front frame.
  if (judged.status !== 'passed' || judged.front === undefined || !deps.checkFront) return judged;
  return { ...judged, frontCheck: await deps.checkFront(frames[judged.front]!.image) };
}
