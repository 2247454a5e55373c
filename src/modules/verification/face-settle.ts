import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import { sealJson } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { compareWithPhoto, faceClientDeps, openedImage } from '../face/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { faceAnswerOf, livenessRequiredOf, openedLivenessCheck, type FaceKept } from './face-kept.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import type { Decision } from './settle.ts';
import * as repo from './verification.repository.ts';

/** Why a face match whose job was lost ends failed: its selfie lived only in that job. */
export const FACE_LOST_DETAIL = 'the selfie was lost with its job; send the face match again';

/**
 * How a face match ends, once its lookup found the record: the kept value (record and comparison)
 * to settle with, and the step that debits the comparison's extra units in the settlement's own
 * transaction; or why it failed.
 */
export type FaceSettlement =
  | { failed: Extract<Decision, { kind: 'failed' }> }
  | { kept: FaceKept; store: (tx: CommonQueryMethods, stored: { keyId: string; orgId: number }) => Promise<void> };

/**
 * Every live face match, synchronous or `Prefer: respond-async`: the lookup job, having found the
 * record, asks a face worker to compare the selfie (sealed in the job's payload since the request;
 * its check passed then) with the record's photo, BEFORE it settles. So the lookup's unit is still
 * only held while the comparison runs: a comparison that cannot be made (a face worker failing, or
 * not answering within FACE_WAIT_MS) settles the verification failed `face_unavailable`, which
 * releases the unit through the wallet's one release statement, once (settle's status guard), and
 * nothing is charged. Faces take turns per organisation; the selfie leaves Redis with the jobs.
 */
export async function compareBeforeSettling(
  deps: { db: DatabasePool; config: Config; producer?: Producer },
  referenceId: string,
  face: { selfie: { keyId: string; data: string }; orgId: number; requestId: string; liveness?: { keyId: string; data: string } },
  record: PersonRecord,
  matchOnly: boolean,
  log: Logger,
): Promise<FaceSettlement> {
  const ring = deps.config.encryptionKeys;
  if (!deps.producer) return { failed: { kind: 'failed', code: 'face_unavailable', detail: 'no face queue in this process' } };
  let comparison;
  try {
    const selfie = openedImage(ring, referenceId, face.selfie);
    comparison = await compareWithPhoto(faceClientDeps(deps.config, deps.producer), face.orgId, referenceId, selfie, record.image, face.requestId);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const code = typeof err.extra?.code === 'string' && err.extra.code.startsWith('selfie_') ? err.extra.code : 'face_unavailable';
    log.warn({ referenceId, code }, 'face match not compared; unit released');
    return { failed: { kind: 'failed', code, detail: err.detail } };
  }
  const settings = await organisationSettings(deps.db, face.orgId);
  // A selfie that was a passed liveness check's front frame: the check is kept with the comparison.
  const check = face.liveness ? openedLivenessCheck(ring, referenceId, face.liveness) : undefined;
  const answer = faceAnswerOf(comparison, settings.face_match_threshold, check);
  const kept: FaceKept = { ...(matchOnly ? {} : { record }), face: answer, ...livenessRequiredOf(settings) };
  // The liveness check's units come on top of the comparison's, charged with them (never without).
  const extra = answer.status === 'compared' ? deps.config.FACE_MATCH_UNITS - 1 + (check ? deps.config.LIVENESS_UNITS : 0) : 0;
  return {
    kept,
    async store(tx, stored) {
      if (extra === 0) return;
      const sealing = keyRing(ring, stored.keyId)[0]!;
      const paid = await repo.settleFaceOutcome(tx, { referenceId, orgId: stored.orgId, recordEnc: sealJson([sealing], kept, referenceId).data, keyId: sealing.id, units: extra });
      // The wallet was drained since the request's check (concurrent calls took the units): the
      // lookup is charged and the comparison is the answer (settled with it above), so its extra
      // units are waived rather than a 402 that would read as "nothing charged". The ledger shows
      // the lookup's unit alone; a race only.
      if (!paid) log.warn({ referenceId }, 'face match compared but its extra units could not be paid; waived');
    },
  };
}
