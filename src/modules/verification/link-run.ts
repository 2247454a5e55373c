import type { CommonQueryMethods } from 'slonik';
import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import { openJson } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { failing } from '../../lib/rule.ts';
import { ORG_MEMBER } from '../../lib/roles.ts';
import type { Principal } from '../auth/index.ts';
import type { Consent, PersonsOwnConsent } from './consent.ts';
import type { FaceAnswer, FaceKept } from './face-kept.ts';
import { verifyFace } from './face-run.ts';
import { newReferenceId, type VerifyDeps } from './run.ts';
import { keyRing } from './sealing.ts';
import { SERVED, servedFields } from './served.ts';
import * as repo from './verification.repository.ts';
import { verify } from './verify.ts';
import { isVninRefusal } from './vnin.ts';

/**
 * A verification asked on a verification link's page: the person gave a vNIN (and a selfie) for the
 * link's organisation. It is recorded as its maker's, as their own call would be.
 */
export type LinkVerification = {
  orgId: number;
  maker: { userId: number | null; apiClientId: number | null; clientId: string | null };
  subscriptionActive: boolean;
  maxInFlight: number | null;
  reason: string;
  vnin: string;
  /** base64 (a data: prefix allowed); null: a vNIN verification without a face. */
  selfie: string | null;
  consent: Consent & PersonsOwnConsent;
  requestId: string;
};

/** How a submission's verification ended; `error` is what the API call would have answered, if not a 200. */
export type LinkOutcome = {
  referenceId: string;
  status: 'found' | 'not_found' | 'failed' | 'refused';
  code: string | null;
  face: FaceAnswer | null;
  error: AppError | null;
};

/**
 * Runs exactly what `POST /verify-nin/face` (with a vnin) or `POST /verify-nin/vnin` runs, charged the
 * same, under a reference chosen here so that every outcome that recorded a verification can name it.
 * A refusal that recorded nothing (the selfie, the wallet, the subscription, the admission limits) is
 * thrown as the API call throws it.
 */
export async function verifyForLink(deps: VerifyDeps, v: LinkVerification): Promise<LinkOutcome> {
  const principal: Principal = {
    userId: v.maker.userId,
    apiClientId: v.maker.apiClientId,
    clientId: v.maker.clientId,
    orgId: v.orgId,
    username: 'verification link',
    // Only the organisation and the maker count here: no route, scope or capability is asked.
    role: ORG_MEMBER,
    subscriptionActive: v.subscriptionActive,
    maxInFlight: v.maxInFlight,
    mustChangePassword: false,
    scopes: null,
    allowedIps: null,
    mfaEnrolmentRequired: false,
    tokenId: `link:${v.requestId}`,
    tokenExpiresAt: 0,
  };
  const ref = newReferenceId();
  const common = { principal, idempotencyKey: null, requestId: v.requestId, ref };
  try {
    const answer =
      v.selfie === null
        ? await verify(deps, { ...common, input: { mode: 'vnin', body: { vnin: v.vnin, reason: v.reason, consent: v.consent } } })
        : await verifyFace(deps, { ...common, body: { vnin: v.vnin, selfie: v.selfie, reason: v.reason, consent: v.consent, match_only: false } });
    const face = (answer.body as { face?: FaceAnswer | null }).face ?? null;
    return { referenceId: ref, status: 'found', code: null, face, error: null };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const row = await repo.findVerification(deps.db, ref, v.orgId);
    if (!row) throw err;
    const code = row.failure_code ?? (typeof err.extra?.code === 'string' ? err.extra.code : null);
    // A found record whose comparison could not run (face workers away) was charged its lookup.
    if (row.status === 'found') return { referenceId: ref, status: 'found', code, face: null, error: err };
    if (row.status === 'not_found') return { referenceId: ref, status: isVninRefusal(row.failure_code) ? 'refused' : 'not_found', code, face: null, error: err };
    // Failed, or still pending when the wait ran out (its requery gives the end).
    return { referenceId: ref, status: 'failed', code: row.status === 'pending' ? 'verification_pending' : code, face: null, error: err };
  }
}

/**
 * The face results of an organisation's face verifications, by reference: read from the sealed
 * verification each time (never copied), so the retention period and subject erasure end them too. A
 * verification no longer served (erased, expired) or without a comparison has none.
 */
export async function faceResultsOf(deps: { db: CommonQueryMethods; config: Config; clock: Clock }, orgId: number, refs: readonly string[]): Promise<Map<string, FaceAnswer>> {
  const out = new Map<string, FaceAnswer>();
  if (refs.length === 0) return out;
  const rows = await repo.faceVerificationsOf(deps.db, orgId, refs);
  const now = deps.clock.now();
  const keyIds = deps.config.encryptionKeys.map((k) => k.id);
  for (const row of rows) {
    if (failing(SERVED, servedFields(row, now, keyIds)) !== null) continue;
    const kept = openJson<FaceKept>(keyRing(deps.config.encryptionKeys, row.key_id), { keyId: row.key_id!, data: row.record_enc! }, row.reference_id);
    if (kept.face) out.set(row.reference_id, kept.face);
  }
  return out;
}
