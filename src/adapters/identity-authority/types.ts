/**
 * The one contract every identity-authority dialect implements. Business outcomes (found, not
 * found) are returned; faults are thrown as UpstreamError, flagged retryable or not, so a job
 * processor can rethrow retryable faults and fail permanent ones at once.
 */
export type UpstreamOutcome = { kind: 'found'; raw: Record<string, unknown> } | { kind: 'not_found'; refusal?: VninRefusal };

/**
 * Why the authority would not answer a vNIN: unknown, older than its 72 hours, made for another
 * verifier's enterprise code, or already used once. Each dialect says so in its not-found answer.
 */
export const VNIN_REFUSALS = ['vnin_not_found', 'vnin_expired', 'vnin_wrong_enterprise', 'vnin_used'] as const;
export type VninRefusal = (typeof VNIN_REFUSALS)[number];

export interface Reason {
  key: string;
  label: string;
  description: string;
}

export interface NinQuery {
  nin: string;
  reason: string;
}

/** A virtual NIN: 16 upper-case letters and digits, use-once at the authority. */
export interface VninQuery {
  vnin: string;
  reason: string;
}

export interface PhoneQuery {
  phone: string;
  reason: string;
}

export interface DemographyQuery {
  firstName: string;
  lastName: string;
  /** dd-mm-yyyy, as on our request side. */
  dob: string;
  gender: 'm' | 'f';
  reason: string;
}

export interface IdentityAuthority {
  lookupNin(q: NinQuery, signal?: AbortSignal): Promise<UpstreamOutcome>;
  lookupPhone(q: PhoneQuery, signal?: AbortSignal): Promise<UpstreamOutcome>;
  /** Never retried by the caller once the call went out: the authority uses the token up. */
  lookupVnin(q: VninQuery, signal?: AbortSignal): Promise<UpstreamOutcome>;
  lookupDemography(q: DemographyQuery, signal?: AbortSignal): Promise<UpstreamOutcome>;
  listReasons(signal?: AbortSignal): Promise<Reason[]>;
}

/**
 * A failed upstream call. The message never carries the query (NIN, phone, names): these errors
 * end up in logs and job records.
 */
export class UpstreamError extends Error {
  /** Network errors, timeouts, 5xx and 429: the same call may succeed later. */
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  /** The request never reached the authority (connection refused, no such host): nothing was used up. */
  readonly unsent: boolean;

  constructor(
    message: string,
    opts: { retryable: boolean; status?: number; retryAfterMs?: number; cause?: unknown; unsent?: boolean },
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'UpstreamError';
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    this.unsent = opts.unsent ?? false;
  }
}
