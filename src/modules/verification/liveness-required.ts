import type { CommonQueryMethods } from 'slonik';
import { AppError } from '../../lib/errors.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { organisationSettings } from '../organisations/index.ts';

export const LIVENESS_REQUIRED =
  'Your organisation requires a liveness check with every face match: send `liveness` (a session from POST /v1/liveness/sessions and its frames) in place of `selfie`';

/**
 * An organisation's `require_liveness` (PATCH /me/organisation): a face match that comes with a plain
 * selfie is refused, 422 `liveness_required`, among the request's own checks (entrance.ts), so that
 * nothing is looked up, held or charged. Fixtures too: a sandbox integration meets the same rule.
 * A face part of another kind (liveness frames) passes; so does a verification without a face.
 */
export async function refuseSelfieWhenLivenessRequired(
  deps: { db: CommonQueryMethods; metrics: Pick<Metrics, 'verifications'> },
  orgId: number,
  face: { kind: string } | undefined,
): Promise<void> {
  if (face?.kind !== 'selfie') return;
  if (!(await organisationSettings(deps.db, orgId)).require_liveness) return;
  deps.metrics.verifications.inc({ mode: 'face', outcome: 'liveness_required' });
  throw new AppError('validation', LIVENESS_REQUIRED, { extra: { code: 'liveness_required' } });
}
