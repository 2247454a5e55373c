import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import { sealJson } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { compareWithPhoto, openedImage } from '../face/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { faceAnswerOf, type FaceKept } from './face-kept.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import type { Decision } from './settle.ts';
import * as repo from './verification.repository.ts';

/**
 * How an asynchronous face match ends, once its lookup found the record: the comparison to store in
 * the transaction that settles the verification (and records its webhook event), or why it failed.
 */
export type FaceSettlement =
  | { failed: Extract<Decision, { kind: 'failed' }> }
  | { store: (tx: CommonQueryMethods, stored: { keyId: string; orgId: number }) => Promise<void> };

/**
 * `Prefer: respond-async` on POST /verify-nin/face: the lookup job, having found the record, asks a
 * face worker to compare the selfie (sealed in the job's payload since the request; its check passed
 * then) with the record's photo. Faces in turn per organisation as in the synchronous call. A face
 * worker that does not answer within FACE_WAIT_MS fails the verification `face_unavailable` and its
 * unit goes back (nothing is charged; the integrator asks again); the selfie leaves Redis with the job.
 */
export async function compareForAsync(
  deps: { db: DatabasePool; config: Config; producer?: Producer },
  referenceId: string,
  face: { selfie: { keyId: string; data: string }; orgId: number; requestId: string },
  record: PersonRecord,
  matchOnly: boolean,
  log: Logger,
): Promise<FaceSettlement> {
  const ring = deps.config.encryptionKeys;
  if (!deps.producer) return { failed: { kind: 'failed', code: 'face_unavailable', detail: 'no face queue in this process' } };
  let comparison;
  try {
    const selfie = openedImage(ring, referenceId, face.selfie);
    comparison = await compareWithPhoto({ producer: deps.producer, ring, waitMs: deps.config.FACE_WAIT_MS, prefix: deps.config.REDIS_PREFIX }, face.orgId, referenceId, selfie, record.image, face.requestId);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const code = typeof err.extra?.code === 'string' && err.extra.code.startsWith('selfie_') ? err.extra.code : 'face_unavailable';
    log.warn({ referenceId, code }, 'asynchronous face match not compared; unit released');
    return { failed: { kind: 'failed', code, detail: err.detail } };
  }
  const answer = faceAnswerOf(comparison, (await organisationSettings(deps.db, face.orgId)).face_match_threshold);
  const kept: FaceKept = { ...(matchOnly ? {} : { record }), face: answer };
  const extra = answer.status === 'compared' ? deps.config.FACE_MATCH_UNITS - 1 : 0;
  return {
    async store(tx, stored) {
      const sealing = keyRing(ring, stored.keyId)[0]!;
      const ok = await repo.settleFaceOutcome(tx, { referenceId, orgId: stored.orgId, recordEnc: sealJson([sealing], kept, referenceId).data, keyId: sealing.id, units: extra });
      // As in the synchronous call: the lookup is charged, the comparison is not kept unpaid.
      if (!ok) log.warn({ referenceId }, 'asynchronous face match found but its comparison could not be paid; not kept');
    },
  };
}
