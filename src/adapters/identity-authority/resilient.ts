import { DelegateBackoff, handleWhen, retry, type IPolicy, type IRetryBackoffContext, type IRetryContext, type RetryPolicy } from 'cockatiel';
import { SpacingBacklogError } from '../../lib/call-spacing.ts';
import { isBrokenCircuitError } from './breaker.ts';
import { UpstreamError, type IdentityAuthority, type Reason, type UpstreamOutcome } from './types.ts';

// A Retry-After longer than this is not waited for: the call fails at once (nothing is charged) and
// the caller retries later, instead of a worker slot sleeping for minutes.
const MAX_RETRY_AFTER_MS = 10_000;
const MAX_BACKOFF_MS = 5_000;

export type Operation = 'nin' | 'vnin' | 'phone' | 'demography' | 'reasons';

/** How the caller watches the calls; references only reach these, never the query. */
export type UpstreamHooks = {
  /** After every attempt, with its outcome kind (found, not_found) or failure code. */
  attempted?(a: { operation: Operation; attempt: number; outcome: string; seconds: number }): void;
  /** Before the wait that precedes another attempt; `attempt` is the one that just failed. */
  retrying?(r: { attempt: number; code: string; delayMs: number }): void;
  /** Before every attempt, first or retry: where a shared rate limit makes the caller wait its turn. */
  beforeAttempt?(): Promise<void>;
  /** The authority answered 429: slow everyone down for its Retry-After (or a default). */
  rateLimited?(retryAfterMs: number | undefined): Promise<void>;
};

/** The code a failed upstream call is recorded under, on its verification and in the metrics. */
export function failureCode(err: unknown): string {
  if (isBrokenCircuitError(err)) return 'upstream_circuit_open';
  if (err instanceof SpacingBacklogError) return 'upstream_rate_limited';
  if (!(err instanceof UpstreamError)) return 'upstream_error';
  if (err.status === 429) return 'upstream_rate_limited';
  const cause = err.cause as { name?: string } | undefined;
  if (err.status === 408 || err.status === 504 || cause?.name === 'TimeoutError' || /no answer within/.test(err.message)) return 'upstream_timeout';
  if (!err.retryable) return 'upstream_rejected';
  return 'upstream_unavailable';
}

// Only faults the same call may survive; a Retry-After past the cap ends the call, since no wait
// this policy would take can honour it.
const worthRetrying = handleWhen(
  (err) => err instanceof UpstreamError && err.retryable && !(err.retryAfterMs !== undefined && err.retryAfterMs > MAX_RETRY_AFTER_MS),
);

/**
 * A use-once token (vNIN) is spent by the first call that reaches the authority, so only faults that
 * prove the call never got there are retried: a refused connection or unknown host, and a 429 (the
 * authority turned the call away before looking the token up).
 */
export function neverReachedAuthority(err: unknown): boolean {
  return err instanceof UpstreamError && (err.unsent || err.status === 429);
}

const worthRetryingOnce = handleWhen(
  (err) => neverReachedAuthority(err) && !((err as UpstreamError).retryAfterMs !== undefined && (err as UpstreamError).retryAfterMs! > MAX_RETRY_AFTER_MS),
);

/**
 * Exponential backoff with full jitter (a random wait up to base * 2^(n-1), capped, after the n-th
 * attempt), and never shorter than the Retry-After the upstream asked for.
 */
function upstreamBackoff(baseMs: number): DelegateBackoff<IRetryBackoffContext<unknown>> {
  return new DelegateBackoff(({ attempt, result }) => {
    const jitter = Math.random() * Math.min(MAX_BACKOFF_MS, baseMs * 2 ** (attempt - 1));
    const err = 'error' in result ? result.error : undefined;
    const retryAfterMs = err instanceof UpstreamError ? err.retryAfterMs : undefined;
    return retryAfterMs !== undefined ? Math.max(retryAfterMs, jitter) : jitter;
  });
}

/**
 * The retry policy for upstream calls: `maxAttempts` calls in all, only retryable faults retried.
 * Further policies (a circuit breaker) compose with it through cockatiel's `wrap`.
 */
export function upstreamRetry(opts: { maxAttempts: number; backoffMs: number; useOnce?: boolean }, hooks: UpstreamHooks = {}): RetryPolicy {
  // cockatiel counts the retries after the first call.
  const policy = retry(opts.useOnce ? worthRetryingOnce : worthRetrying, { maxAttempts: Math.max(0, opts.maxAttempts - 1), backoff: upstreamBackoff(opts.backoffMs) });
  if (hooks.retrying) {
    const retrying = hooks.retrying;
    policy.onRetry((r) => retrying({ attempt: r.attempt, code: 'error' in r ? failureCode(r.error) : 'upstream_error', delayMs: r.delay }));
  }
  return policy;
}

/**
 * Any identity adapter, with every call run through `policy`. Faults still end as the adapter's
 * own UpstreamError (the last one), so the caller records what finally went wrong.
 */
export function resilient(identity: IdentityAuthority, policy: IPolicy<IRetryContext>, hooks: UpstreamHooks = {}): IdentityAuthority {
  const run = <T extends UpstreamOutcome | Reason[]>(operation: Operation, call: () => Promise<T>) =>
    policy.execute(async ({ attempt }) => {
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      await hooks.beforeAttempt?.();
      try {
        const value = await call();
        hooks.attempted?.({ operation, attempt: attempt + 1, outcome: Array.isArray(value) ? 'ok' : value.kind, seconds: seconds() });
        return value;
      } catch (err) {
        hooks.attempted?.({ operation, attempt: attempt + 1, outcome: failureCode(err), seconds: seconds() });
        if (err instanceof UpstreamError && err.status === 429) await hooks.rateLimited?.(err.retryAfterMs);
        throw err;
      }
    });

  // The caller's signal goes to every attempt as it is; each attempt has the adapter's own timeout.
  return {
    lookupNin: (q, signal) => run('nin', () => identity.lookupNin(q, signal)),
    lookupVnin: (q, signal) => run('vnin', () => identity.lookupVnin(q, signal)),
    lookupPhone: (q, signal) => run('phone', () => identity.lookupPhone(q, signal)),
    lookupDemography: (q, signal) => run('demography', () => identity.lookupDemography(q, signal)),
    listReasons: (signal) => run('reasons', () => identity.listReasons(signal)),
  };
}
