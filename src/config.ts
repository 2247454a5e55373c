import { isIP } from 'node:net';
import { z } from 'zod';
import { socketAwareDatabaseUrl } from './lib/database-url.ts';

// Value shapes of the environment.

export const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

// A local PostgreSQL may be named by its socket: postgres://postgres@/idverify?host=/var/run/postgresql
export const databaseUrl = z.string().transform(socketAwareDatabaseUrl).pipe(z.url());

export const csv = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean));

// express's `trust proxy` list: addresses, subnets (CIDR) or its names for reserved ranges.
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
export function isProxySpec(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) ? Number(bits) <= (family === 4 ? 32 : 128) : family === 4 && isIP(bits) === 4;
}


// Development values published in this repository: anyone can sign tokens, decrypt stored records
// or forge processor webhooks with them, so they are accepted only on a stack that talks to local
// simulators and is not production.
export const DEV_JWT_SECRET = 'dev-only-jwt-secret-change-me-0123456789abcdef';
export const DEV_ENCRYPTION_KEY_BYTES = Buffer.alloc(32, 7);
export const DEV_ENCRYPTION_KEY = 'dev1:' + DEV_ENCRYPTION_KEY_BYTES.toString('base64');
export const SANDBOX_PROCESSOR_KEY = 'sk_test_sandbox_secret';
export const DEV_VNIN_HASH_KEY = 'dev-only-vnin-hash-key-change-me-0123456789';
export const DEV_SUBJECT_HASH_KEY = 'dev-only-subject-hash-key-change-me-0123456789';

/** The token secrets in effect: JWT_SECRETS, else JWT_SECRET as a list of one, else the development secret. */
export function jwtSecretList(c: { JWT_SECRET?: string | undefined; JWT_SECRETS?: string[] | undefined }): string[] {
  return c.JWT_SECRETS ?? [c.JWT_SECRET ?? DEV_JWT_SECRET];
}

type SecretSettings = {
  NODE_ENV: string;
  JWT_SECRETS?: string[] | undefined;
  jwtSecrets: string[];
  ENCRYPTION_KEYS?: string | undefined;
  VNIN_HASH_KEY: string;
  PAYSTACK_SECRET_KEY: string;
  SUBJECT_HASH_KEY: string;
  PAYSTACK_SECRET_KEY_PREVIOUS?: string | undefined;
  IDENTITY_BASE_URL: string;
  PAYSTACK_BASE_URL: string;
};

/** 127.0.0.0/8, ::1 and localhost; an empty address means the built-in simulator, which is local too. */
export function isLoopbackUrl(url: string): boolean {
  if (!url) return true;
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
}

/** Why this configuration may talk to real money or real people; null when it is a local sandbox. */
export function realStackReason(c: SecretSettings): string | null {
  if (c.NODE_ENV === 'production') return 'NODE_ENV=production';
  if (c.PAYSTACK_SECRET_KEY.startsWith('sk_live_')) return 'a live PAYSTACK_SECRET_KEY (sk_live_) is configured';
  if (!isLoopbackUrl(c.IDENTITY_BASE_URL)) return 'IDENTITY_BASE_URL is not a loopback address';
  if (!isLoopbackUrl(c.PAYSTACK_BASE_URL)) return 'PAYSTACK_BASE_URL is not a loopback address';
  return null;
}

function usesDevEncryptionKey(spec: string | undefined): boolean {
  if (!spec) return true;
  return spec.split(',').some((part) => Buffer.from(part.trim().split(':')[1] ?? '', 'base64').equals(DEV_ENCRYPTION_KEY_BYTES));
}

/** Each variable still holding a published development value, with the message naming why it is refused. */
export function publishedSecretIssues(c: SecretSettings): { variable: string; message: string }[] {
  const reason = realStackReason(c);
  if (!reason) return [];
  const generate = '`npm run admin -- secrets:generate` prints fresh values';
  const refused = (what: string, hint = generate) => `${what}, published in the source, is refused when ${reason} (${hint})`;
  const issues: { variable: string; message: string }[] = [];
  if (c.jwtSecrets.includes(DEV_JWT_SECRET)) issues.push({ variable: c.JWT_SECRETS ? 'JWT_SECRETS' : 'JWT_SECRET', message: refused('the development secret') });
  if (c.PAYSTACK_SECRET_KEY_PREVIOUS === SANDBOX_PROCESSOR_KEY) issues.push({ variable: 'PAYSTACK_SECRET_KEY_PREVIOUS', message: refused('the sandbox key', 'leave it empty') });
  if (usesDevEncryptionKey(c.ENCRYPTION_KEYS)) issues.push({ variable: 'ENCRYPTION_KEYS', message: refused(c.ENCRYPTION_KEYS ? 'the development key' : 'unset: the development key') });
  if (c.VNIN_HASH_KEY === DEV_VNIN_HASH_KEY) issues.push({ variable: 'VNIN_HASH_KEY', message: refused('the development key') });
  if (c.PAYSTACK_SECRET_KEY === SANDBOX_PROCESSOR_KEY) issues.push({ variable: 'PAYSTACK_SECRET_KEY', message: refused('the sandbox key', 'use your own key from the processor') });
  // With the published key, anyone holding a subject hash could test NINs against it.
  if (c.SUBJECT_HASH_KEY === DEV_SUBJECT_HASH_KEY) issues.push({ variable: 'SUBJECT_HASH_KEY', message: refused('the development key') });
  return issues;
}

/** The enterprise code the simulator issues vNINs for when NIMC_ENTERPRISE_CODE is unset. */
export const SANDBOX_ENTERPRISE_CODE = '000000';

const bonusTier = z.object({ min: z.number().int().positive(), max: z.number().int().positive().optional(), bonus: z.number().int().positive() });

export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    HOST: z.string().default('0.0.0.0'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    DATABASE_URL: databaseUrl.default('postgres://postgres@127.0.0.1:5432/idverify'), // or libpq's socket form (databaseUrl above)
    // Pool per process; the API holds no transaction across an await on anything but PostgreSQL.
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20),
    REDIS_URL: z.url().default('redis://127.0.0.1:6379'), // redis://, rediss://, or unix:///path/to/redis.sock
    // Seed nodes of a Redis Cluster, comma-separated `host:port`. Set: every process talks to the
    // cluster (discovering the other nodes by itself) with REDIS_URL's user, password and TLS
    // (`rediss:`), and REDIS_URL's own host and port are not used. Empty: the one server REDIS_URL names.
    REDIS_CLUSTER_NODES: csv.pipe(z.array(z.string().regex(/^[A-Za-z0-9.:[\]-]+:[0-9]{1,5}$/, 'each entry must be host:port'))).default([]),
    // Every Redis key this service writes (queues, rate limits, caches) starts with this prefix, so
    // several environments or test runs can share one Redis (or one Redis Cluster).
    REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default('idv'),

    JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(), // a list of one; JWT_SECRETS wins (rotation)
    JWT_SECRETS: csv.pipe(z.array(z.string().min(32, 'each secret must be at least 32 characters')).min(1, 'must name at least one secret')).optional(),
    JWT_ISSUER: z.string().default('idverify'),
    // The contract fixes the token lifetime at 60 minutes; kept configurable only for tests of expiry.
    JWT_TTL_SECONDS: z.coerce.number().int().positive().default(3600),

    // Comma-separated `keyId:base64(32 bytes)` list; the first is used for new data, all decrypt.
    ENCRYPTION_KEYS: z.string().optional(),
    // Key of the HMAC-SHA256 that stands in for a vNIN wherever one must be recognised (the row's
    // stored query, the Idempotency-Key comparison): the token itself is never kept. Its own key, not
    // the JWT or encryption key.
    VNIN_HASH_KEY: z.string().min(32, 'must be at least 32 characters').default(DEV_VNIN_HASH_KEY),
    // Our enterprise code at NIMC: people make a vNIN for it (USSD *346*3*<NIN>*<code>#).
    NIMC_ENTERPRISE_CODE: z.string().regex(/^\d{4,10}$/, 'must be 4 to 10 digits').optional(),
    // HMAC-SHA256 key of the subject hash every verification keeps (the NIN it concerns, never the NIN
    // itself), by which subject:export and subject:erase find one person's verifications. A key of its
    // own: it never rotates (the hashes already stored would stop matching), unlike the others.
    SUBJECT_HASH_KEY: z.string().min(32, 'must be at least 32 characters').default(DEV_SUBJECT_HASH_KEY),
    // Days a stored person record is kept before the retention job erases it.
    RECORD_RETENTION_DAYS: z.coerce.number().positive().default(30),

    // Browser origins allowed to call the API (operator domains). Empty: every Origin is refused.
    CORS_ALLOWED_ORIGINS: csv.default([]),
    RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().positive().default(60),
    RATE_LIMIT_PER_TOKEN: z.coerce.number().int().positive().default(600),
    RATE_LIMIT_PER_ORG: z.coerce.number().int().positive().default(3000),
    // Consecutive failed sign-ins allowed per username from one client address, and failed sign-ins
    // per client address for any username (default: five times LOGIN_MAX_FAILURES), in LOGIN_LOCK_SECONDS.
    LOGIN_MAX_FAILURES: z.coerce.number().int().positive().default(10),
    LOGIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().positive().optional(),
    LOGIN_LOCK_SECONDS: z.coerce.number().int().positive().default(900),
    // The reverse proxies in front of the API (addresses, CIDR subnets, loopback/linklocal/uniquelocal):
    // the client address is then the first X-Forwarded-For hop that is not one of them. Empty: the
    // socket's address, and X-Forwarded-For is ignored (anyone could write it).
    TRUST_PROXY: csv.pipe(z.array(z.string().refine(isProxySpec, 'each entry must be an IP address, a CIDR subnet, loopback, linklocal or uniquelocal'))).default([]),

    // Identity authority. Empty IDENTITY_BASE_URL starts the built-in simulator, whichever the dialect:
    // it speaks all three, so each adapter can be run against it (refused in production).
    IDENTITY_DIALECT: z.enum(['sandbox', 'prembly', 'dojah']).default('sandbox'),
    IDENTITY_BASE_URL: z.string().default(''),
    IDENTITY_API_KEY: z.string().default('sandbox-identity-key'),
    IDENTITY_APP_ID: z.string().default(''),
    IDENTITY_TIMEOUT_MS: z.coerce.number().int().positive().default(8000),
    IDENTITY_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(4),
    IDENTITY_BACKOFF_MS: z.coerce.number().int().min(1).default(250),
    IDENTITY_SIM_LATENCY_MS: z.coerce.number().int().min(0).default(0),
    // The built-in simulator as the real authority behaves (0: off): a seeded lognormal latency per
    // lookup (median and p95 together), lookups per second and in flight per API key.
    IDENTITY_SIM_LATENCY_MEDIAN_MS: z.coerce.number().int().min(0).default(0),
    IDENTITY_SIM_LATENCY_P95_MS: z.coerce.number().int().min(0).default(0),
    IDENTITY_SIM_RATE_LIMIT: z.coerce.number().int().min(0).default(0),
    IDENTITY_SIM_MAX_CONCURRENCY: z.coerce.number().int().min(0).default(0),
    // Where `npm start` runs the sandbox simulators (and where web/worker processes look for them).
    IDENTITY_SIM_PORT: z.coerce.number().int().min(0).max(65535).default(4010),
    PAYSTACK_SIM_PORT: z.coerce.number().int().min(0).max(65535).default(4020),
    // How long a verification request waits for its job. Integrators allow 45 s, so this ends well before.
    VERIFY_WAIT_MS: z.coerce.number().int().positive().default(30000),
    // Lookup jobs one worker process runs at once; IDENTITY_MAX_CONCURRENCY caps all processes together.
    LOOKUP_CONCURRENCY: z.coerce.number().int().positive().default(64),
    // The benchmark's yardstick only: run each lookup inside the API process instead of through the
    // queue (same admission, limits, hold and capture). One API process, no worker; refused in production.
    LOOKUP_INLINE: bool.default(false),
    // Limits of our key at the authority, held across every worker process (in Redis): calls in flight,
    // and calls per second (0: no per-second limit). Retries count like first calls.
    IDENTITY_MAX_CONCURRENCY: z.coerce.number().int().positive().default(32),
    IDENTITY_MAX_RPS: z.coerce.number().min(0).default(0),
    // Live lookups one organisation may have in flight (per-organisation override: org:limits).
    ORG_MAX_IN_FLIGHT: z.coerce.number().int().positive().default(32),
    // Asynchronous (Prefer: respond-async) and batch lookups: how long one may wait out authority
    // outages after it was accepted (hours, fractions allowed), and how many may wait per organisation.
    ASYNC_MAX_WAIT_HOURS: z.coerce.number().positive().max(24 * 30).default(24),
    ORG_MAX_PENDING: z.coerce.number().int().positive().default(100_000),
    // Lookups of one batch queued for the authority (each holding its unit) at any moment: enough to
    // keep every authority slot busy when nobody else calls, few enough that a batch never stands
    // in front of a later batch or holds much of a wallet at once.
    BATCH_QUEUE_DEPTH: z.coerce.number().int().min(1).max(10000).default(64),
    // Background steps (a batch row taken, a background lookup settled, a batch lookup's end noted)
    // one worker process runs at once while any synchronous lookup is in flight (none: no limit).
    // The CPU is shared with interactive calls; at least one, so that batches always progress.
    BACKGROUND_STEPS_WHILE_INTERACTIVE: z.coerce.number().int().min(1).max(1000).default(1),
    // While synchronous lookups come and go (one in flight, or one heard of less than
    // INTERACTIVE_QUIET_MS ago), a batch keeps only as many lookups queued as take about
    // BATCH_ROWS_PER_SECOND_WHILE_INTERACTIVE rows a second at the mean lookup time (Little's law),
    // at least BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE, at most BATCH_QUEUE_DEPTH: queued lookups run
    // ungated and their CPU grows with the rows a second, not with the lookups waiting on a slow authority.
    BATCH_ROWS_PER_SECOND_WHILE_INTERACTIVE: z.coerce.number().positive().max(100_000).default(100),
    BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE: z.coerce.number().int().min(1).max(10000).default(2),
    INTERACTIVE_QUIET_MS: z.coerce.number().int().min(0).max(600_000).default(2000),
    // The periodic feed of open batches (BullMQ cron with seconds): resumes paused batches once their
    // wallet is credited by any path, and re-queues a batch lookup whose job was lost.
    BATCH_FEED_CRON: z.string().default('*/10 * * * * *'),
    // Circuit breaker: opens when at least half of at least IDENTITY_BREAKER_MIN_CALLS lookups in
    // IDENTITY_BREAKER_WINDOW_MS failed with 5xx or a timeout; probes again after the cool-down.
    IDENTITY_BREAKER_MIN_CALLS: z.coerce.number().int().positive().default(20),
    IDENTITY_BREAKER_WINDOW_MS: z.coerce.number().int().positive().default(10000),
    IDENTITY_BREAKER_COOLDOWN_MS: z.coerce.number().int().positive().default(5000),
    IDENTITY_BREAKER_PROBES: z.coerce.number().int().positive().default(3),
    // A job whose worker died is given to another worker once its lock (WORKER_LOCK_MS) has expired,
    // found by a check every WORKER_STALLED_INTERVAL_MS. Shorter means faster recovery, more Redis load.
    WORKER_LOCK_MS: z.coerce.number().int().min(1000).default(30000),
    WORKER_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(15000),
    REASONS_CACHE_SECONDS: z.coerce.number().int().positive().default(300),

    // Payment processor (Paystack dialect). Empty PAYSTACK_BASE_URL starts the built-in simulator.
    PAYSTACK_BASE_URL: z.string().default(''),
    PAYSTACK_SECRET_KEY: z.string().default(SANDBOX_PROCESSOR_KEY),
    PAYSTACK_SECRET_KEY_PREVIOUS: z.string().default(''), // during a key change: webhooks signed with it still count
    PAYSTACK_TIMEOUT_MS: z.coerce.number().int().positive().default(10000),
    PAYSTACK_CALLBACK_URL: z.string().default(''),
    // Public address of this service, used to tell the sandbox processor where to send webhooks.
    PUBLIC_BASE_URL: z.string().default(''),
    TOPUP_WAIT_MS: z.coerce.number().int().positive().default(20000),
    CREDIT_CONCURRENCY: z.coerce.number().int().positive().default(8),
    // One schedule for the reconciliation sweeps: top-ups with the processor, verifications stuck
    // pending, receipts not yet sent, verification-link submissions left pending. (Read from
    // TOPUP_SWEEP_CRON, its old name, with a warning.)
    RECONCILE_CRON: z.string().default('*/1 * * * *'),
    // Sweep window: a pending top-up younger than MIN_AGE is left to the webhook; older than MAX_AGE it is given up.
    TOPUP_SWEEP_MIN_AGE_SECONDS: z.coerce.number().int().min(0).default(120),
    TOPUP_SWEEP_MAX_AGE_HOURS: z.coerce.number().positive().default(48),
    TOPUP_SWEEP_BATCH: z.coerce.number().int().positive().default(100),
    // The slower re-check of abandoned top-ups (a late payment whose webhook was lost): once a day,
    // for TOPUP_RECHECK_DAYS after the top-up was created.
    TOPUP_RECHECK_CRON: z.string().default('40 3 * * *'),
    TOPUP_RECHECK_DAYS: z.coerce.number().int().positive().default(30),
    LEDGER_AUDIT_CRON: z.string().default('*/10 * * * *'),
    RETENTION_CRON: z.string().default('17 * * * *'),
    // The monthly statement e-mail to finance officers: checked daily (07:00 UTC, 08:00 in Lagos); the
    // first run of a month sends the month that ended, later runs find it sent and catch up a missed day.
    STATEMENT_MAIL_CRON: z.string().default('0 7 * * *'),

    DEFAULT_UNIT_COST_KOBO: z.coerce.number().int().positive().default(10000),
    DEFAULT_MIN_TOPUP_UNITS: z.coerce.number().int().positive().multipleOf(100).default(100),
    VAT_BPS: z.coerce.number().int().min(0).default(750),
    // The seller on every VAT invoice (GET /topups/{reference}/invoice): the operator of this service.
    INVOICE_SELLER_NAME: z.string().min(1).default('idverify (sandbox seller)'),
    INVOICE_SELLER_ADDRESS: z.string().default(''), // one line; empty: not printed
    INVOICE_SELLER_TIN: z.string().default(''), // empty: printed as not on file
    PROCESSOR_FEE_BPS: z.coerce.number().int().min(0).default(150),
    PROCESSOR_FEE_FLAT_KOBO: z.coerce.number().int().min(0).default(10000),
    PROCESSOR_FEE_FLAT_WAIVED_UNDER_KOBO: z.coerce.number().int().min(0).default(250000),
    PROCESSOR_FEE_CAP_KOBO: z.coerce.number().int().min(0).default(200000),
    // JSON list of {min, max?, bonus}; applies to hosted affiliate tenants up to BONUS_END_DATE (Lagos time).
    BONUS_TIERS: z
      .string()
      .default('[{"min":5000,"max":6999,"bonus":30},{"min":7000,"max":9999,"bonus":50},{"min":10000,"bonus":100}]')
      .transform((v, ctx) => {
        try {
          return z.array(bonusTier).parse(JSON.parse(v));
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be a JSON array of {min, max?, bonus}' });
          return z.NEVER;
        }
      }),
    BONUS_END_DATE: z.iso.date().default('2026-06-15'),

    // Receipts. Empty SMTP_URL keeps e-mails in the outbox log (sandbox); production needs a real server.
    SMTP_URL: z.string().default(''),
    // `npm start` in the sandbox with SMTP_URL empty: its mail sink's port (0: a free one).
    SANDBOX_SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(4025),
    MAIL_FROM: z.string().default('Identity Verification <billing@idverify.local>'),
    MAIL_FALLBACK_TO: z.string().default('billing@idverify.local'),
    // The operator's page that takes a password-reset token, e.g. https://app.example.com/reset?token={token}.
    // Empty: the reset e-mail carries the token alone, for POST /reset-password.
    PASSWORD_RESET_URL: z
      .string()
      .default('')
      .refine((v) => v === '' || (v.includes('{token}') && /^https?:\/\//.test(v)), 'must be an http(s) address containing {token}'),
    // The page an invitation e-mail links to, e.g. https://app.example.com/join#token={token}. Empty: the
    // portal's, PUBLIC_BASE_URL/portal/accept-invitation#token=... (a fragment: never in a server's log).
    INVITATION_URL: z
      .string()
      .default('')
      .refine((v) => v === '' || (v.includes('{token}') && /^https?:\/\//.test(v)), 'must be an http(s) address containing {token}'),
    INVITATION_TTL_HOURS: z.coerce.number().int().min(1).max(720).default(72),

    // CSV exports hold an export connection while their client reads: caps, and the slowest reader kept.
    CSV_EXPORTS_PER_PROCESS: z.coerce.number().int().min(1).max(64).default(4),
    CSV_EXPORTS_PER_ORG: z.coerce.number().int().min(1).max(64).default(2),
    CSV_EXPORT_MIN_BYTES: z.coerce.number().int().min(0).default(16384),
    CSV_EXPORT_MIN_WINDOW_MS: z.coerce.number().int().min(50).default(30000),
    // Signed webhooks (issue 32). A receiver has this long to answer 2xx; otherwise it is tried again
    // after WEBHOOK_RETRY_FIRST_MS, four times longer each time up to WEBHOOK_RETRY_MAX_MS, until
    // WEBHOOK_RETRY_WINDOW_MS after the event (3 days); an endpoint failing every try for the window is disabled.
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60000).default(10000),
    WEBHOOK_RETRY_FIRST_MS: z.coerce.number().int().min(0).max(30000).default(15000),
    WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(0).default(6 * 3600 * 1000),
    WEBHOOK_RETRY_WINDOW_MS: z.coerce.number().int().min(0).default(72 * 3600 * 1000),
    // Deliveries in flight per worker process (at most 4 per endpoint across all of them), and how often
    // a worker looks for due deliveries when no commit notified it (the safety net of LISTEN/NOTIFY).
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(512).default(32),
    // Deliveries in flight per organisation across every worker process (all its endpoints together).
    // Kept below WEBHOOK_CONCURRENCY, so an organisation whose receivers all hang holds at most this many
    // of a process's sockets and the rest stay free for everyone else.
    WEBHOOK_MAX_IN_FLIGHT_PER_ORG: z.coerce.number().int().min(1).max(512).default(8),
    // Endpoints one organisation may have (switched off ones count, deleted ones do not); beyond it 409.
    // Each endpoint gets its own delivery of every event, so this bounds what one event costs.
    WEBHOOK_MAX_ENDPOINTS: z.coerce.number().int().min(1).max(1000).default(20),
    WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60000).default(1000),
    // true: webhook receivers must be https on public addresses even in the sandbox, which otherwise
    // allows http and loopback (a real stack always refuses them).
    WEBHOOK_PUBLIC_ONLY: bool.default(false),
    // Days a webhook event and its deliveries stay in the deliveries log once none is pending (the
    // retention job, on RETENTION_CRON). Longer than the 3-day retry window, so nothing still tried goes.
    WEBHOOK_RETENTION_DAYS: z.coerce.number().min(4, 'must be at least 4 (the retry window is 3 days)').default(30),
    // Submissions of a verification link's page (docs/links.md): per link, and per address over every
    // link, in fixed windows of LINK_RATE_WINDOW_SECONDS. Each submission may be a charged lookup and a
    // face match: a link that leaked must not empty a wallet at the speed of a script.
    LINK_SUBMISSIONS_PER_LINK: z.coerce.number().int().min(1).max(100000).default(30),
    LINK_SUBMISSIONS_PER_ADDRESS: z.coerce.number().int().min(1).max(100000).default(10),
    LINK_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86400).default(600),
    // Bearer token for GET /metrics. Empty: /metrics answers 404.
    METRICS_TOKEN: z.string().default(''),
    // The worker process serves its own registry (jobs, upstream calls, credits) here, same token.
    WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
    // Create the demo organisation and users on first start (sandbox only).
    SANDBOX_SEED: bool.default(true),
    SHUTDOWN_GRACE_MS: z.coerce.number().int().positive().default(10000),
    // How many API and worker processes `npm start` runs (the Procfile scales them separately).
    WEB_PROCESSES: z.coerce.number().int().min(1).max(16).default(1),
    WORKER_PROCESSES: z.coerce.number().int().min(1).max(16).default(1),
    // Face match (POST /verify-nin/face): face worker processes `npm start` runs (each loads the model
    // once, about 500 MB), and face jobs each runs at once (the WASM backend uses one core per process,
    // so more than 1 only overlaps image decoding with inference).
    FACE_PROCESSES: z.coerce.number().int().min(0).max(16).default(1),
    FACE_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1),
    // Added to a face worker's nice value at start: inference yields the CPU to the API and the lookup
    // workers (a face match waits a little longer; a bystander verification does not).
    FACE_NICE: z.coerce.number().int().min(0).max(19).default(10),
    // Units a compared face match costs (1 of them is the lookup's own unit); a found record without a
    // usable photo costs 1, anything else nothing.
    FACE_MATCH_UNITS: z.coerce.number().int().min(1).max(100).default(2),
    // How long the API waits for each face job (selfie check, comparison) before answering 503.
    FACE_WAIT_MS: z.coerce.number().int().positive().default(20000),
    // Face matches one organisation may have queued or running on the face workers (selfie checks
    // beyond it answer 429 face_in_flight_cap): one organisation's slow images hold at most this many
    // turns, and the others' jobs are queued ahead of its later ones (face.client.ts).
    FACE_ORG_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(1000).default(8),
  })
  .superRefine((c, ctx) => {
    const median = c.IDENTITY_SIM_LATENCY_MEDIAN_MS;
    const p95 = c.IDENTITY_SIM_LATENCY_P95_MS;
    if ((median === 0) !== (p95 === 0) || p95 < median) ctx.addIssue({ code: 'custom', path: ['IDENTITY_SIM_LATENCY_P95_MS'], message: 'set together with IDENTITY_SIM_LATENCY_MEDIAN_MS, and not below it' });
    for (const issue of publishedSecretIssues({ ...c, jwtSecrets: jwtSecretList(c) })) ctx.addIssue({ code: 'custom', path: [issue.variable], message: issue.message });
    const real = realStackReason({ ...c, jwtSecrets: jwtSecretList(c) });
    if (real && !c.NIMC_ENTERPRISE_CODE) ctx.addIssue({ code: 'custom', path: ['NIMC_ENTERPRISE_CODE'], message: `is required when ${real} (the sandbox code ${SANDBOX_ENTERPRISE_CODE} is for the simulator only)` });
    // Outside production, an empty base URL starts a built-in simulator that answers made-up people and
    // payments: with a live Paystack key (NODE_ENV forgotten on a real deployment) both must be named.
    const live = c.NODE_ENV !== 'production' && c.PAYSTACK_SECRET_KEY.startsWith('sk_live_');
    if (live && !c.IDENTITY_BASE_URL) ctx.addIssue({ code: 'custom', path: ['IDENTITY_BASE_URL'], message: 'is required with a live PAYSTACK_SECRET_KEY (empty starts the identity simulator)' });
    if (live && !c.PAYSTACK_BASE_URL) ctx.addIssue({ code: 'custom', path: ['PAYSTACK_BASE_URL'], message: 'is required with a live PAYSTACK_SECRET_KEY (empty starts the payment simulator)' });
    if (c.NODE_ENV !== 'production') return;
    if (c.LOOKUP_INLINE) ctx.addIssue({ code: 'custom', path: ['LOOKUP_INLINE'], message: 'is for benchmarks only and refused in production' });
    if (!c.IDENTITY_BASE_URL) ctx.addIssue({ code: 'custom', path: ['IDENTITY_BASE_URL'], message: 'is required in production (the sandbox simulator is refused)' });
    if (!c.PAYSTACK_BASE_URL) ctx.addIssue({ code: 'custom', path: ['PAYSTACK_BASE_URL'], message: 'is required in production (the sandbox simulator is refused)' });
    if (c.IDENTITY_DIALECT === 'sandbox') ctx.addIssue({ code: 'custom', path: ['IDENTITY_DIALECT'], message: 'sandbox is refused in production' });
    if (!c.SMTP_URL) ctx.addIssue({ code: 'custom', path: ['SMTP_URL'], message: 'is required in production' });
  });

export type RawConfig = z.infer<typeof configSchema>;

export type Config = Omit<RawConfig, 'JWT_SECRET' | 'JWT_SECRETS'> & {
  /** jwtSecrets: every secret a token may be signed with; JWT_SECRET: the first, which signs. */
  JWT_SECRET: string; jwtSecrets: string[];
  LOGIN_MAX_FAILURES_PER_ADDRESS: number;
  encryptionKeys: { id: string; key: Buffer }[];
  sandbox: { identity: boolean; processor: boolean };
  /** Effective upstream addresses: the configured ones, or the sandbox simulators'. */
  identityBaseUrl: string;
  /** IDENTITY_APP_ID, or the built-in simulator's own when it stands in and none is set. */
  identityAppId: string;
  paystackBaseUrl: string;
  publicBaseUrl: string;
  /** NIMC_ENTERPRISE_CODE, or the sandbox's `000000` when no live authority is configured. */
  nimcEnterpriseCode: string;
  /** Deprecated variables that were read; entry points print each once at start. */
  warnings: string[];
};

/** Old name -> new name. The old one is still honoured when the new one is unset. */
const RENAMED = { TOPUP_SWEEP_CRON: 'RECONCILE_CRON' } as const;

export class ConfigError extends Error {}

/** The app id the built-in simulator checks (Prembly `app-id`, Dojah `AppId`) when none is configured. */
export const SANDBOX_IDENTITY_APP_ID = 'sandbox-identity-app';

function parseKeys(spec: string): { id: string; key: Buffer }[] {
  return spec.split(',').map((part) => {
    const [id, b64] = part.trim().split(':');
    const key = Buffer.from(b64 ?? '', 'base64');
    if (!id || !/^[A-Za-z0-9_-]{1,32}$/.test(id) || key.length !== 32) {
      throw new ConfigError('ENCRYPTION_KEYS: each entry must be keyId:base64 of 32 bytes');
    }
    return { id, key };
  });
}

/** Parses the environment once; throws a ConfigError whose message names the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const warnings: string[] = [];
  const source: NodeJS.ProcessEnv = { ...env };
  for (const [old, current] of Object.entries(RENAMED)) {
    if (source[old] === undefined) continue;
    warnings.push(`${old} is deprecated; use ${current}${source[current] === undefined ? '' : ' (both are set: ' + current + ' wins)'}`);
    source[current] ??= source[old];
  }
  const parsed = configSchema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`invalid configuration: ${issue.path.join('.') || 'environment'}: ${issue.message}`);
  }
  const c = parsed.data;
  const jwtSecrets = jwtSecretList(c);
  return {
    ...c,
    ...{ JWT_SECRET: jwtSecrets[0]!, jwtSecrets },
    LOGIN_MAX_FAILURES_PER_ADDRESS: c.LOGIN_MAX_FAILURES_PER_ADDRESS ?? c.LOGIN_MAX_FAILURES * 5,
    encryptionKeys: parseKeys(c.ENCRYPTION_KEYS ?? DEV_ENCRYPTION_KEY),
    sandbox: {
      identity: !c.IDENTITY_BASE_URL,
      processor: !c.PAYSTACK_BASE_URL,
    },
    identityBaseUrl: c.IDENTITY_BASE_URL || `http://127.0.0.1:${c.IDENTITY_SIM_PORT}`,
    identityAppId: c.IDENTITY_APP_ID || (c.IDENTITY_BASE_URL ? '' : SANDBOX_IDENTITY_APP_ID),
    paystackBaseUrl: c.PAYSTACK_BASE_URL || `http://127.0.0.1:${c.PAYSTACK_SIM_PORT}`,
    nimcEnterpriseCode: c.NIMC_ENTERPRISE_CODE ?? SANDBOX_ENTERPRISE_CODE,
    publicBaseUrl: (c.PUBLIC_BASE_URL || `http://localhost:${c.PORT}`).replace(/\/$/, ''),
    warnings,
  };
}

/** Entry points call this: one line naming the variable, then exit. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    const config = loadConfig(env);
    for (const w of config.warnings) process.stderr.write(`warning: ${w}\n`);
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}
