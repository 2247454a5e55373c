import type { CommonQueryMethods } from 'slonik';
import type { Config } from '../../config.ts';
import { AppError } from '../../lib/errors.ts';
import { lookupWaitMs } from '../../jobs/budgets.ts';
import { isVninRefusal, lookupOutcomes, startVerification, type Asker, type Consent, type FaceAnswer, type FacePart, type LinkMaker, type LivenessFrameInput, type PersonsOwnConsent, type VerificationStatus, type VerifyDeps, verdictOfLink, type VerdictFields } from '../verification/index.ts';

/**
 * A verification asked on a verification link's page: the person gave a vNIN (and a selfie) for the
 * link's organisation. It is recorded as its maker's, as their own call would be.
 */
export type LinkVerification = {
  orgId: number;
  maker: LinkMaker;
  subscriptionActive: boolean;
  maxInFlight: number | null;
  reason: string;
  vnin: string;
  /** base64 (a data: prefix allowed); null: a vNIN verification without a face, or one with `liveness`. */
  selfie: string | null;
  /** A liveness check's session and frames in place of the selfie (exactly one of the two for a face match). */
  liveness?: { sessionId: string; frames: LivenessFrameInput[] };
  consent: Consent & PersonsOwnConsent;
  requestId: string;
  /**
   * The reference to record it under, chosen by the caller before it runs: the submission is
   * recorded (pending) under it first, so that whatever happens next it can find its verification.
   */
  ref: string;
  /** Aborts when the person's page went away: its face jobs are dropped rather than run for nobody. */
  signal?: AbortSignal;
  /** The link asks for liveness (its `liveness` field): its verdict then needs `face.liveness: passed`. */
  livenessRequired?: boolean;
};

/** How a link's submission ended, as `verification.completed` says it. */
export type LinkStatus = 'found' | 'not_found' | 'failed' | 'refused';

/** Where a link's verification stands: ended (`found`, ...) or still `pending`, with its failure code. */
export type LinkEnd = { status: LinkStatus | 'pending'; code: string | null };

/** How a submission's verification ended; `error` is what the API call would have answered, if not a 200. */
export type LinkOutcome = LinkEnd & {
  referenceId: string;
  face: FaceAnswer | null;
  error: AppError | null;
  /** verdict.ts: verified, or not and why; null while pending. */
  verdict: VerdictFields;
};

/**
 * The one rule from a verification's row to its link submission's end, for the page's own
 * settlement and the links sweep alike. A found record was charged (its lookup at least, even when
 * its comparison could not run); a vNIN the authority refused is `refused`; anything else that ended
 * (failed, or erased past retention) charged nothing.
 */
function linkEndOf(row: { status: VerificationStatus; failure_code: string | null }): LinkEnd {
  const code = row.failure_code;
  switch (row.status) {
    case 'pending':
      return { status: 'pending', code: null };
    case 'found':
      return { status: 'found', code };
    case 'not_found':
      return { status: isVninRefusal(code) ? 'refused' : 'not_found', code };
    default:
      return { status: 'failed', code };
  }
}

/** Where these link verifications stand, by reference; a reference with no verification is absent. */
export async function linkEndsOf(deps: { db: CommonQueryMethods; config: Pick<Config, 'encryptionKeys'> }, refs: readonly string[]): Promise<Map<string, LinkEnd>> {
  const outcomes = await lookupOutcomes({ db: deps.db, ring: deps.config.encryptionKeys }, refs, { records: false });
  return new Map([...outcomes].map(([ref, o]) => [ref, linkEndOf({ status: o.status, failure_code: o.failureCode })]));
}

/**
 * The longest a link's verification runs while its page waits: the selfie's check (one face job),
 * then the lookup's wait with its comparison. Past it, no request is still on its way to recording
 * the verification.
 */
export function longestLinkRunMs(config: Pick<Config, 'VERIFY_WAIT_MS' | 'FACE_WAIT_MS'>): number {
  return config.FACE_WAIT_MS + lookupWaitMs(config, true);
}

/**
 * Runs exactly what `POST /verify-nin/face` (with a vnin) or `POST /verify-nin/vnin` runs, charged the
 * same, under the caller's reference, so that every outcome that recorded a verification can name it.
 * A refusal that recorded nothing (the selfie, the wallet, the subscription, the admission limits) is
 * thrown as the API call throws it.
 */
export async function verifyForLink(deps: VerifyDeps, v: LinkVerification): Promise<LinkOutcome> {
  const ref = v.ref;
  // The link asks, as an asker of its own kind: recorded as its maker's, for its organisation.
  const asker: Asker = { kind: 'link', orgId: v.orgId, maker: v.maker, subscriptionActive: v.subscriptionActive, maxInFlight: v.maxInFlight };
  const common = { delivery: 'link' as const, asker, idempotencyKey: null, requestId: v.requestId, ref };
  if (v.selfie !== null && v.liveness) throw new Error('a link verification takes a selfie or liveness frames, not both');
  const face: FacePart | null = v.liveness ? { kind: 'liveness', sessionId: v.liveness.sessionId, frames: v.liveness.frames } : v.selfie === null ? null : { kind: 'selfie', selfie: v.selfie };
  try {
    const answer =
      face === null
        ? await startVerification(deps, { ...common, query: { mode: 'vnin', body: { vnin: v.vnin, reason: v.reason, consent: v.consent } } })
        : await startVerification(deps, {
            ...common,
            query: { mode: 'face', body: { vnin: v.vnin, reason: v.reason, consent: v.consent, match_only: false } },
            face,
            ...(v.signal ? { signal: v.signal } : {}),
          });
    const found = (answer.body as { face?: FaceAnswer | null }).face ?? null;
    return { referenceId: ref, status: 'found', code: null, face: found, error: null, verdict: verdictOfLink({ status: 'found', code: null }, face === null ? undefined : found, v.livenessRequired === true) };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const row = (await lookupOutcomes({ db: deps.db, ring: deps.config.encryptionKeys }, [ref], { records: false })).get(ref);
    if (!row) throw err;
    const end = linkEndOf({ status: row.status, failure_code: row.failureCode });
    // Still pending when the wait ran out: its end comes later (the links sweep reads it).
    const code = end.status === 'pending' ? null : (end.code ?? (typeof err.extra?.code === 'string' ? err.extra.code : null));
    return { referenceId: ref, status: end.status, code, face: null, error: err, verdict: verdictOfLink({ status: end.status, code }, undefined) };
  }
}
