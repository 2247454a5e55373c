import type { Job } from 'bullmq';
import type { Request, RequestHandler } from 'express';
import type { DatabasePool, FragmentSqlToken } from 'slonik';
import type { SharedBreaker } from './adapters/identity-authority/breaker.ts';
import type { IdentityAuthority } from './adapters/identity-authority/types.ts';
import type { PaystackClient } from './adapters/payment-processor/paystack.ts';
import type { Config } from './config.ts';
import type { JobName, JobPayload, JobResult } from './jobs/catalog.ts';
import type { Producer, WaitOutcome } from './jobs/producer.ts';
import type { CallSpacer } from './lib/call-spacing.ts';
import type { Clock } from './lib/clock.ts';
import type { Logger } from './lib/logger.ts';
import type { Metrics } from './lib/metrics.ts';
import type { RedisClient } from './lib/redis.ts';
import type { CsvExportSlots } from './lib/csv-export.ts';

// What each process kind hands its modules: the API's routes receive an AppContext, the workers'
// processors a WorkerDeps. Built in src/wiring.ts (the shared wiring) and the start-up files.

/** What the HTTP layer is built from; createApp receives it whole, tests build their own. */
export type AppDeps = {
  config: Config;
  db: DatabasePool;
  /**
   * A few connections whose statements may run for minutes: streamed exports, which read while
   * their client downloads. Kept apart so the main pool's statement timeout still guards the rest.
   */
  exportDb: DatabasePool;
  logger: Logger;
  producer: Producer;
  clock: Clock;
  identity: IdentityAuthority;
  processor: PaystackClient;
  metrics: Metrics;
  /** Per-organisation lookups in flight and the authority's pace, shared with the workers. */
  fairShare: FairShare;
  /** The authority's circuit breaker as this process sees it. */
  circuit: { shouldRefuse(): boolean; unusedProbe(): void };
  /** LOOKUP_INLINE only (benchmarks): runs the lookup job in this process instead of through the queue. */
  lookupInline?: (payload: JobPayload<'verification.lookup'>, opts: { timeoutMs: number; priority?: number }) => Promise<WaitOutcome<'verification.lookup'>>;
};

export type AppContext = AppDeps & {
  redis: RedisClient;
  authenticate: RequestHandler;
  /** For GET /me, POST /change-password and POST /logout only: also admits a first-login token. */
  authenticateDuringPasswordChange: RequestHandler;
  /** For two-factor enrolment only: also admits an administrator who must enrol before anything else. */
  authenticateForMfaEnrolment: RequestHandler;
  /** As authenticate, for a route outside the rate limits (the queue board). */
  authenticateUnlimited: RequestHandler;
  /** Hot reads only: the token now; the principal with the route's row, then the deny-list (alongReader). */
  authenticateClaims: RequestHandler;
  /**
   * Hot reads only: the deny-list and the rate-limit counts taken before the read, and the limits
   * applied (true); false when the route must count and apply them after its read, as usual (a
   * Redis Cluster, the call failed, or the request is over a limit: its counts are then given back,
   * so a request whose principal is refused never keeps one).
   */
  countBeforeRead: (req: Request) => Promise<boolean>;
  /**
   * Hot reads only: the principal and the route's row in one statement; with `recording`, the same
   * statement records the read's audit event when it serves the row (see auth/along.ts).
   */
  alongReader: (
    name: string,
    alongside: (key: FragmentSqlToken, org: FragmentSqlToken) => FragmentSqlToken,
    recording?: { served: (now: FragmentSqlToken) => FragmentSqlToken } | null,
  ) => (req: Request, key: string, record?: { action: 'verification.requeried'; target: string } | null) => Promise<{ row: Record<string, unknown>; recorded: boolean; at: Date | null }>;
  /** Logged-out tokens, by jti, until their exp (declared here, not imported: the auth module imports this file). */
  revocations: { revoke(jti: string, expiresAt: number): Promise<void>; isRevoked(jti: string): Promise<boolean> };
  /** Per-token and per-organisation limits, applied after authentication. */
  rateLimit: RequestHandler;
  /** The same check, for a route that authenticates inside its handler (alongReader). */
  enforceRateLimit: (req: Request) => Promise<void>;
  /** The CSV exports running in this process, shared by every list that exports. */
  csvExports: CsvExportSlots;
  /** Face match bodies taken in FACE_INTAKE_PER_PROCESS at a time, by every route that takes one (lib/intake.ts). */
  faceIntake: RequestHandler;
};

/** What a worker process hands its processors (workers/main.ts builds it). */
export type WorkerDeps = {
  config: Config;
  db: DatabasePool;
  logger: Logger;
  identity: IdentityAuthority;
  processor: PaystackClient;
  producer: Producer;
  metrics: Metrics;
  clock: Clock;
  /** The authority's shared breaker and call rate. */
  authority: { breaker: SharedBreaker; spacer: CallSpacer };
  fairShare: FairShare;
  /** The gate background steps pass, narrowed while interactive lookups are in flight. */
  lane: BackgroundLane;
};

/** `token` is the worker's lock on the job (to move it back to the delayed set from inside). */
export type Processor<N extends JobName> = (payload: JobPayload<N>, job: Job, deps: WorkerDeps, log: Logger, token?: string) => Promise<JobResult<N>>;

export type ProcessorMap = { [N in JobName]?: Processor<N> };

// The capacity the processes share, as the modules see it; src/modules/capacity implements it
// (fair-share.ts says how turns are given, background-lane.ts when background steps may run).

/** What the fair share answers a synchronous lookup asking to start. */
export type Admission =
  | { admitted: true; priority: number; ahead: number; meanLookupMs: number }
  | { admitted: false; reason: 'cap'; inFlight: number; meanLookupMs: number };

export type FairShare = {
  admit(o: { orgId: number; referenceId: string; cap: number }): Promise<Admission>;
  /** A lookup with this tag (its queue priority) starts: the virtual time moves up to it. */
  started(tag: number): Promise<void>;
  /**
   * The lookup settled (any outcome) or was never queued; its duration feeds the running mean. A
   * lookup refused after admission passes its tag as `unusedTag`, so its organisation's tags stay
   * one after another.
   */
  finish(o: { orgId: number; referenceId: string; durationMs?: number; unusedTag?: number }): Promise<void>;
  /** Lookups in flight per organisation id (for tests, metrics and the benchmark). */
  snapshot(): Promise<Map<number, number>>;
  /** The references of an organisation's synchronous lookups in flight (let in, not yet settled). */
  inFlight(orgId: number): Promise<string[]>;
  /**
   * Synchronous (interactive) lookups in flight across every process, stale ones dropped. Every
   * change is also published on `interactiveChannel(prefix)` as `a:<count>` (one admitted) or
   * `f:<count>` (one settled), for the background lane (background-lane.ts).
   */
  interactiveInFlight(): Promise<number>;
  /** The running mean of lookup durations (every lane's), or the default before any was measured. */
  meanLookupMs(): Promise<number>;
  /**
   * Asynchronous and batch lookups: the same fair queuing in a lane of its own whose priorities
   * all sort after every synchronous one, so they only use the authority's spare capacity. Never
   * refused (no cap); a lookup counts until it ends, however many times it waits out an outage.
   */
  background: {
    /** Tags the lookup; resolves to its queue priority. */
    admit(o: { orgId: number; referenceId: string }): Promise<number>;
    finish(o: { orgId: number; referenceId: string; durationMs?: number }): Promise<void>;
  };
};

/** The gate a worker process's background steps pass (background-lane.ts). */
export type BackgroundLane = {
  /** Runs one background step when the gate lets it through. */
  run<T>(step: () => Promise<T>): Promise<T>;
  /** Interactive lookups in flight, as this process last heard. */
  readonly interactive: number;
  /** Interactive lookups in flight, or one heard of less than `quietMs` ago. */
  readonly busy: boolean;
  /** Steps waiting at the gate. */
  readonly waiting: number;
  /** Reads the count again (after a reconnect, or from the periodic feed). */
  refresh(): Promise<void>;
  close(): Promise<void>;
};

/** This attempt is the job's last one: what it leaves undone stays undone. */
export const isFinalAttempt = (job: Pick<Job, 'attemptsMade' | 'opts'>): boolean => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
