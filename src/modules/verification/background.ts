import type { Config } from '../../config.ts';
import { jobIds, type JobPayload } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { FairShare } from '../../context.ts';
import type { StoredQuery, VerificationQuery } from './verification.schemas.ts';

/**
 * Asynchronous and batch lookups ("background"): queued below every synchronous lookup, never
 * refused for the authority's state, and tried again while the authority is down until
 * ASYNC_MAX_WAIT_HOURS after they were accepted. A try that fails is not retried inside its job
 * (that would hold one of the authority's slots while it waits): the job is moved back to the
 * delayed set with its priority and comes back at most RETRY_MAX_DELAY_MS later.
 */
export const RETRY_MAX_DELAY_MS = 30_000;
const RETRY_FIRST_DELAY_MS = 1_000;

export { DELIVERIES, type Delivery } from './verification.schemas.ts';

// A failure the authority may get over: a 5xx, a timeout, a 429, an open circuit, a network error.
// A 4xx refusal (`upstream_rejected`) is an answer, and ends the lookup.
const WORTH_WAITING = new Set(['upstream_unavailable', 'upstream_timeout', 'upstream_rate_limited', 'upstream_circuit_open', 'upstream_error']);
// The authority never saw these calls: even a one-shot lookup may try again.
const NEVER_SENT = new Set(['upstream_circuit_open', 'upstream_rate_limited']);

/**
 * A lookup whose call must not be repeated once it reached the authority (one attempt only): any
 * query carrying a vNIN (a vNIN verification, a match by vNIN), since the authority spends the token.
 */
export function oneShotOnceSent(query: VerificationQuery | StoredQuery): boolean {
  return 'vnin' in query || 'vninHash' in query;
}

export function deadlineOf(config: Config, acceptedAt: number): number {
  return acceptedAt + config.ASYNC_MAX_WAIT_HOURS * 3600_000;
}

/** Thrown by the lookup job of a background lookup that should run again in `delayMs`. */
export class RetryLater extends Error {
  readonly delayMs: number;
  readonly code: string;
  constructor(delayMs: number, code: string) {
    super(`retry in ${Math.round(delayMs)} ms after ${code}`);
    this.name = 'RetryLater';
    this.delayMs = Math.max(0, delayMs);
    this.code = code;
  }
}

/**
 * What becomes of a background lookup whose try failed with `code`: tried again at `retryAt`, or
 * ended with the code to record. `tries` counts this one; the delay doubles from 1 s up to 30 s,
 * with jitter below the cap so that waiting lookups do not come back in step.
 */
export function afterFailedTry(o: { code: string; tries: number; now: number; deadline: number; oneShot: boolean }): { retryAt: number } | { endWith: string } {
  if (!WORTH_WAITING.has(o.code)) return { endWith: o.code };
  if (o.oneShot && !NEVER_SENT.has(o.code)) return { endWith: o.code };
  if (o.now >= o.deadline) return { endWith: 'upstream_unavailable' };
  const ceiling = Math.min(RETRY_MAX_DELAY_MS, RETRY_FIRST_DELAY_MS * 2 ** Math.min(10, Math.max(0, o.tries - 1)));
  const delay = ceiling * (0.5 + Math.random() / 2);
  return { retryAt: Math.min(o.deadline, o.now + delay) };
}

export type BackgroundPayload = JobPayload<'verification.lookup'> & { orgId: number; delivery: 'async' | 'batch'; acceptedAt: number };

/**
 * Queues a background lookup whose pending row (holding its unit) is committed: tagged in the
 * background lane of the fair share, so it runs after every synchronous lookup and in turn with
 * other organisations' background lookups. Idempotent per reference (the job id). A batch's rows
 * are queued with this too (start.ts).
 */
export async function enqueueBackgroundLookup(deps: { producer: Producer; fairShare: FairShare }, payload: BackgroundPayload, opts: { removeWhenDone?: boolean } = {}): Promise<void> {
  const priority = await deps.fairShare.background.admit({ orgId: payload.orgId, referenceId: payload.referenceId });
  // removeWhenDone: a vNIN's job leaves Redis when it ends (its payload held the sealed token).
  await deps.producer.enqueue('verification.lookup', payload, { jobId: jobIds.lookup(payload.referenceId), priority, ...(opts.removeWhenDone ? { removeOnComplete: true, removeOnFail: true } : {}) });
}
