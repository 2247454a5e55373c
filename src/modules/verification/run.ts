import { randomBytes } from 'node:crypto';
import { sealJson } from '../../lib/crypto.ts';
import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import type { FairShare } from '../../context.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { ReasonsDeps } from '../reasons/index.ts';
import type { CircuitView } from './admission.ts';
import type { Consent } from './consent.ts';
import type * as idem from './idempotency.ts';
import type { InlineLookup } from './inline-lookup.ts';
import { subjectOfQuery } from './subject.ts';
import type { StoredQuery, VerificationQuery } from './verification.schemas.ts';
import { carriesVnin, storedQueryOf } from './vnin.ts';

/** What the HTTP side needs; AppContext provides it. */
export type VerifyDeps = ReasonsDeps & { db: DatabasePool; producer: Producer; clock: Clock; metrics: Metrics; fairShare: FairShare; circuit: CircuitView; lookupInline?: InlineLookup };

/**
 * One verification request after its checks: who asks, what (and what may be kept of it, `stored`:
 * made once, at the entrance), and the Idempotency-Key claim if any.
 * `ref`: the reference to record it under, when the caller chose it (a verification link's submission
 * must know it whatever the outcome); otherwise a new one.
 */
export type Run = { orgId: number; userId: number | null; apiClientId: number | null; query: VerificationQuery; stored: StoredQuery; consent: Consent | null; claim: idem.Claim | null; requestId: string; maxInFlight: number; ref?: string };

/** What the steps need of the asker (entrance.ts): whose verification it is, and what their organisation may do. */
export type Who = { orgId: number; userId: number | null; apiClientId: number | null; clientId: string | null; subscriptionActive: boolean; maxInFlight: number | null };

/** Who asks for a verification, as its row records them, and what they stated with it. */
export type AskedBy = Pick<Run, 'orgId' | 'userId' | 'apiClientId' | 'consent'> & { requestId: string | null };

const REF_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** `REF-` and 12 characters from the CSPRNG; rejection sampling keeps every character equally likely. */
export function newReferenceId(): string {
  let out = '';
  while (out.length < 12) {
    for (const b of randomBytes(16)) {
      if (b < 252 && out.length < 12) out += REF_ALPHABET[b % 36];
    }
  }
  return `REF-${out}`;
}

export function expiresAt(config: Config, from: Date): Date {
  return new Date(from.getTime() + config.RECORD_RETENTION_DAYS * 24 * 3600 * 1000);
}

/**
 * A live verification's pending row and its lookup job's sealed query, built once for the synchronous,
 * the asynchronous and the batch path (start.ts). The row keeps what may be kept of the query (a vNIN as its keyed hash);
 * the job carries the query itself, sealed, and a vNIN's job is use-once (erased as its lookup starts).
 */
export function pendingOf(deps: Pick<VerifyDeps, 'config'>, run: AskedBy & { query: VerificationQuery }, ref: string, now: Date) {
  const { query } = run;
  const queryEnc = sealJson(deps.config.encryptionKeys, storedQueryOf(deps.config, query), ref);
  const useOnce = carriesVnin(query);
  const jobQuery = useOnce ? sealJson(deps.config.encryptionKeys, query, ref) : queryEnc;
  const pending = {
    referenceId: ref,
    orgId: run.orgId,
    userId: run.userId,
    apiClientId: run.apiClientId,
    mode: query.mode,
    reason: query.reason,
    queryEnc: queryEnc.data,
    consent: run.consent,
    subjectHash: subjectOfQuery(deps.config.SUBJECT_HASH_KEY, query),
    keyId: queryEnc.keyId,
    requestId: run.requestId,
    createdAt: now,
    expiresAt: expiresAt(deps.config, now),
  };
  return { pending, queryEnc, jobQuery, useOnce };
}
