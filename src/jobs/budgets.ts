import type { Config } from '../config.ts';

// How long the catalog's jobs may rightly run, beside the catalog that defines them: the API waits a
// synchronous lookup this long, and a stopping worker lets its jobs finish within it.

type Budgets = Pick<Config, 'VERIFY_WAIT_MS' | 'FACE_WAIT_MS' | 'WEBHOOK_TIMEOUT_MS' | 'PAYSTACK_TIMEOUT_MS'>;

/**
 * How long a synchronous lookup is waited for: VERIFY_WAIT_MS, and for a face match FACE_WAIT_MS more
 * for its comparison, which its lookup job hands to the face queue and the face worker settles (the
 * API waits for the lookup job, then the comparison job, within this one budget from the start).
 */
export function lookupWaitMs(config: Pick<Config, 'VERIFY_WAIT_MS' | 'FACE_WAIT_MS'>, withSelfie: boolean): number {
  return config.VERIFY_WAIT_MS + (withSelfie ? config.FACE_WAIT_MS : 0);
}

/**
 * The longest a worker's job may rightly run, which a stopping worker (a face worker too) lets finish:
 * what the API waits for a face match's lookup and comparison together (no job waits for another
 * any more: the bound of either), a webhook delivery, or an automatic top-up's charge and the verify
 * after it.
 */
export function longestJobMs(config: Budgets): number {
  return Math.max(lookupWaitMs(config, true), config.WEBHOOK_TIMEOUT_MS, 2 * config.PAYSTACK_TIMEOUT_MS);
}

export type ProcessKind = 'api' | 'worker';

/**
 * How long a process may take to stop before it exits by itself (the launcher's SIGKILL is the
 * backstop): what it has in flight may finish (an API's requests, SHUTDOWN_GRACE_MS; a worker's
 * jobs, the longest a job may rightly run), then 5 s for the closes after them.
 */
export function shutdownDeadlineMs(config: Budgets & Pick<Config, 'SHUTDOWN_GRACE_MS'>, kind: ProcessKind): number {
  const drain = kind === 'api' ? config.SHUTDOWN_GRACE_MS : Math.max(config.SHUTDOWN_GRACE_MS, longestJobMs(config));
  return drain + 5000;
}
