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

/**
 * The `liveness.judge` job, run by a face worker (the one process with the model): opens the session's
 * sealed frames, judges them and returns the result only (no frame, landmark or descriptor leaves).
 */
export async function runLivenessJudgement(deps: JudgeDeps & { ring: KeyRing; rules: JudgeRules }, p: JobPayload<'liveness.judge'>): Promise<LivenessResult & JobResult<'liveness.judge'>> {
  const frames = p.frames.map((f) => ({ step: f.step, captured_at_ms: f.captured_at_ms, image: open(deps.ring, { keyId: f.image.keyId, data: Buffer.from(f.image.data, 'base64') }, livenessAad(p.sessionId)) }));
  return judgeLiveness(deps, p.challenges, frames, deps.rules);
}
