import { isIP } from 'node:net';
import { z } from 'zod';
import { bool, csv, databaseUrl, port } from './lib/env-values.ts';
import { sandboxSchema, type SandboxConfig } from './sandbox-config.ts';

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

/**
 * The production settings, read by every process. Each variable carries its description (`.describe`, or
 * `.meta` with a `documentedDefault` where the literal default would mislead a reader: a published
 * development secret, a value derived from another variable): `npm run docs` writes docs/configuration.md
 * from them, and a test fails when one has none. The sandbox's switches have a schema of their own
 * (sandbox-config.ts), read only where the sandbox runs.
 */
export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development').describe('`production` enables the refusals above'),
    PORT: port.default(8080).describe('the port the API listens on'),
    HOST: z.string().default('0.0.0.0').describe('the address the API listens on'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino level (`warn` for benchmarks)'),
    DATABASE_URL: databaseUrl.default('postgres://postgres@127.0.0.1:5432/idverify').describe('created on start if missing. When PostgreSQL runs on the same machine, name its Unix-domain socket directory instead of a TCP address: `postgres://postgres@/idverify?host=/var/run/postgresql` (libpq\'s form; the percent-encoded `postgres://postgres@%2Fvar%2Frun%2Fpostgresql/idverify` is the same). Every query then skips the loopback TCP stack, which on a small machine costs CPU in both processes; across machines use TCP'),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20).describe('per process. The statements of every request (the principals, the requery\'s rows, a fixture verification and its ledger line, the audit trail\'s append) are named prepared statements, parsed and planned once per connection: behind a connection pooler use session pooling, or a PgBouncer of 1.21 or later with `max_prepared_statements` set in transaction mode. A migration that changes the type of a column these statements return needs the API restarted after it (a kept plan answers `cached plan must not change result type`)'),
    REDIS_URL: z.url().default('redis://127.0.0.1:6379').describe('one Redis server; with `REDIS_CLUSTER_NODES` set, only its user, password and `rediss:` (TLS) are used. A Redis on the same machine with `unixsocket` set in its configuration: `unix:///run/redis/redis.sock` (the same reasoning as for `DATABASE_URL`; the service\'s user needs permission on the socket)'),
    REDIS_CLUSTER_NODES: csv.pipe(z.array(z.string().regex(/^[A-Za-z0-9.:[\]-]+:[0-9]{1,5}$/, 'each entry must be host:port'))).default([]).describe('seed nodes of a Redis Cluster, comma-separated `host:port` (e.g. `10.0.0.1:7000,10.0.0.2:7000`); set, every process talks to the cluster (discovering the other nodes by itself) with `REDIS_URL`\'s user, password and TLS, and `REDIS_URL`\'s own host and port are not used; empty: the one server `REDIS_URL` names'),
    REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default('idv').describe('start of every Redis key (queues, rate limits, caches, the authority\'s shared state), so environments and test runs can share one Redis or one cluster'),

    JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional().meta({ description: 'HS256 signing key, 32+ characters; required in production unless `JWT_SECRETS` is set. The same as `JWT_SECRETS` with one secret', documentedDefault: 'development value' }),
    JWT_SECRETS: csv.pipe(z.array(z.string().min(32, 'each secret must be at least 32 characters')).min(1, 'must name at least one secret')).optional().describe('comma-separated signing secrets (32+ characters each): the first signs new tokens, all verify (tokens carry the signing secret\'s `kid`); set, it wins over `JWT_SECRET` (see [Rotating keys](operations.md#rotating-keys))'),
    JWT_ISSUER: z.string().default('idverify').describe('the issuer (`iss`) of the tokens the API signs and accepts, also the issuer named in MFA authenticator apps'),
    JWT_TTL_SECONDS: z.coerce.number().int().positive().default(3600).describe('the token lifetime, fixed by the contract at 60 minutes; configurable only for tests of expiry'),

    ENCRYPTION_KEYS: z.string().optional().meta({ description: '`keyId:base64(32 bytes)[,keyId:...]`; the first encrypts, all decrypt; `crypto:reencrypt` moves stored data to the first (see [Rotating keys](operations.md#rotating-keys))', documentedDefault: 'development key' }),
    VNIN_HASH_KEY: z.string().min(32, 'must be at least 32 characters').default(DEV_VNIN_HASH_KEY).meta({ description: 'key (32+ characters) of the HMAC-SHA256 that stands in for a vNIN wherever one must be recognised (the stored query, the Idempotency-Key comparison; the token itself is never kept); a key of its own, not the JWT or encryption key; refused on a real stack while it holds the published value', documentedDefault: 'development value' }),
    NIMC_ENTERPRISE_CODE: z.string().regex(/^\d{4,10}$/, 'must be 4 to 10 digits').optional().meta({ description: 'our enterprise code at NIMC (4 to 10 digits), the one people make vNINs for (`GET /verify-nin/vnin/instructions`); required on a real stack (see above); the built-in simulator issues and accepts vNINs for it', documentedDefault: '`000000` (sandbox)' }),
    SUBJECT_HASH_KEY: z.string().min(32, 'must be at least 32 characters').default(DEV_SUBJECT_HASH_KEY).meta({ description: 'HMAC-SHA256 key of each verification\'s subject hash (32+ characters); a key of its own that is never rotated, since the hashes already stored would stop matching; the development value is refused on a real stack like the other published secrets', documentedDefault: 'development value' }),
    RECORD_RETENTION_DAYS: z.coerce.number().positive().default(30).describe('stored person records are erased after this'),

    CORS_ALLOWED_ORIGINS: csv.default([]).describe('comma-separated operator origins; every other `Origin` gets 403'),
    RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().positive().default(60).describe('the fixed window of the two request limits below, in seconds'),
    RATE_LIMIT_PER_TOKEN: z.coerce.number().int().positive().default(600).describe('requests per window per token'),
    RATE_LIMIT_PER_ORG: z.coerce.number().int().positive().default(3000).describe('requests per window per organisation'),
    LOGIN_MAX_FAILURES: z.coerce.number().int().positive().default(10).describe('consecutive failed sign-ins for one username from one client address before sign-in is locked (see `LOGIN_LOCK_SECONDS`)'),
    LOGIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().positive().optional().meta({ description: 'failed sign-ins from one client address for any username before sign-in is locked for that address', documentedDefault: '5 x `LOGIN_MAX_FAILURES`' }),
    LOGIN_LOCK_SECONDS: z.coerce.number().int().positive().default(900).describe('once either limit is reached, sign-in answers 429 until this long after the last counted failure'),
    TRUST_PROXY: csv.pipe(z.array(z.string().refine(isProxySpec, 'each entry must be an IP address, a CIDR subnet, loopback, linklocal or uniquelocal'))).default([]).describe('comma-separated reverse proxies in front of the API: IP addresses, CIDR subnets (`10.0.0.0/8`, `fd00::/8`), or `loopback`, `linklocal`, `uniquelocal`. The client address is then the first `X-Forwarded-For` hop that is not one of them. Empty: the socket\'s address, and `X-Forwarded-For` is ignored. The sign-in counters and API clients\' `allowed_ips` both use this address'),

    IDENTITY_DIALECT: z.enum(['sandbox', 'prembly', 'dojah']).default('sandbox').describe('the adapter: `sandbox` (our simulator\'s own API), `prembly` (IdentityPass), `dojah`'),
    IDENTITY_BASE_URL: z.string().default('').describe('empty: the built-in simulator on `IDENTITY_SIM_PORT`, whatever the dialect (it speaks all three at the providers\' paths, with their headers and bodies; `src/simulators/identity-authority/README.md`); refused in production and with a live (`sk_live_`) `PAYSTACK_SECRET_KEY`. For Prembly the host (`/identitypass` is added unless the URL already ends in it)'),
    IDENTITY_API_KEY: z.string().default('sandbox-identity-key').describe('our key at the identity authority; the built-in simulator is started with it as the key it checks'),
    IDENTITY_APP_ID: z.string().default('').describe('our app id at the authority (Dojah needs it); against the built-in simulator an empty app id becomes the simulator\'s own'),
    IDENTITY_TIMEOUT_MS: z.coerce.number().int().positive().default(8000).describe('per upstream call'),
    IDENTITY_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(4).describe('tries of one upstream call: network errors, timeouts, 5xx and 429 are retried (exponential backoff, full jitter), 4xx never; a vNIN lookup only after a refused connection, an unknown host or a 429 (the call never reached the authority)'),
    IDENTITY_BACKOFF_MS: z.coerce.number().int().min(1).default(250).describe('the backoff before the first retry, doubled for each later one (full jitter)'),
    VERIFY_WAIT_MS: z.coerce.number().int().positive().default(30000).describe('how long a verification request waits for its job (clients allow 45 s)'),
    LOOKUP_CONCURRENCY: z.coerce.number().int().positive().default(64).describe('lookup jobs one worker process runs at once (the global cap below still applies)'),
    IDENTITY_MAX_CONCURRENCY: z.coerce.number().int().positive().default(32).describe('calls in flight to the authority, all worker processes together (BullMQ global concurrency); retries count like first calls'),
    IDENTITY_MAX_RPS: z.coerce.number().min(0).default(0).describe('calls per second to the authority, all processes together, retries included; `0`: no limit. Set it to your key\'s limit'),
    ORG_MAX_IN_FLIGHT: z.coerce.number().int().positive().default(32).describe('live lookups one organisation may have in flight (per organisation: `org:limits`)'),
    ASYNC_MAX_WAIT_HOURS: z.coerce.number().positive().max(24 * 30).default(24).describe('how long an asynchronous (`Prefer: respond-async`) or batch lookup keeps waiting out authority failures after it was accepted, in hours (fractions allowed); then it ends `failed` with code `upstream_unavailable`, its unit released'),
    ORG_MAX_PENDING: z.coerce.number().int().positive().default(100_000).describe('asynchronous lookups and batch rows one organisation may have waiting (not yet ended) together; beyond, 429 `org_pending_cap`'),
    BATCH_QUEUE_DEPTH: z.coerce.number().int().min(1).max(10000).default(64).describe('rows of one batch queued for the authority (each holding its unit) at any moment; at least the authority\'s `IDENTITY_MAX_CONCURRENCY` so that a batch alone keeps every slot busy'),
    BACKGROUND_STEPS_WHILE_INTERACTIVE: z.coerce.number().int().min(1).max(1000).default(1).describe('background steps (a batch row taken, a background lookup settled, a batch lookup\'s end noted) one worker process runs at once while any synchronous lookup is in flight; no limit while none is (at least 1, so batches always progress)'),
    BATCH_ROWS_PER_SECOND_WHILE_INTERACTIVE: z.coerce.number().positive().max(100_000).default(100).describe('while synchronous lookups come and go (one in flight, or one admitted or settled less than `INTERACTIVE_QUIET_MS` ago), a batch keeps only as many rows queued as make about this many rows a second at the mean lookup time (rows queued = rate x mean lookup time): the lookups already queued run whatever the step gate says and take the CPU interactive calls need, and that CPU grows with rows a second, not with lookups waiting on a slow authority. Against an authority answering at once that is the floor below; against one taking 1.2 s, the whole `BATCH_QUEUE_DEPTH`'),
    BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE: z.coerce.number().int().min(1).max(10000).default(2).describe('the least a batch keeps queued while synchronous lookups come and go (at least 1, so batches always progress)'),
    INTERACTIVE_QUIET_MS: z.coerce.number().int().min(0).max(600_000).default(2000).describe('how long after the last synchronous lookup event a worker still treats interactive traffic as present (0: only while one is in flight); a scheduling hint only, nothing correct depends on it'),
    BATCH_FEED_CRON: z.string().default('*/10 * * * * *').describe('the periodic pass over open batches (cron with seconds): resumes paused batches after any credit and re-queues a batch row whose job was lost'),
    IDENTITY_BREAKER_MIN_CALLS: z.coerce.number().int().positive().default(20).describe('the circuit breaker opens when at least half of at least this many lookups within `IDENTITY_BREAKER_WINDOW_MS` failed with a 5xx, a timeout or a network error'),
    IDENTITY_BREAKER_WINDOW_MS: z.coerce.number().int().positive().default(10000).describe('the circuit breaker\'s window (see `IDENTITY_BREAKER_MIN_CALLS`)'),
    IDENTITY_BREAKER_COOLDOWN_MS: z.coerce.number().int().positive().default(5000).describe('how long the circuit stays open before it lets probes through'),
    IDENTITY_BREAKER_PROBES: z.coerce.number().int().positive().default(3).describe('how many successful probes close the circuit again'),
    WORKER_LOCK_MS: z.coerce.number().int().min(1000).default(30000).describe('a job whose worker died is given to another worker once its lock has expired, this long after the dead worker last renewed it'),
    WORKER_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(15000).describe('how often workers look for jobs whose lock has expired; shorter means faster recovery and more Redis load'),
    REASONS_CACHE_SECONDS: z.coerce.number().int().positive().default(300).describe('reasons list cache'),

    PAYSTACK_BASE_URL: z.string().default('').describe('`https://api.paystack.co` in production; empty: the simulator on `PAYSTACK_SIM_PORT` (refused in production and with a live `sk_live_` key)'),
    PAYSTACK_SECRET_KEY: z.string().default(SANDBOX_PROCESSOR_KEY).describe('API key and webhook signing secret'),
    PAYSTACK_SECRET_KEY_PREVIOUS: z.string().default('').describe('during a change of processor key: the key being replaced; webhooks signed with it are still accepted'),
    PAYSTACK_TIMEOUT_MS: z.coerce.number().int().positive().default(10000).describe('per call to the processor'),
    PAYSTACK_CALLBACK_URL: z.string().default('').describe('where the hosted page sends the payer afterwards'),
    PUBLIC_BASE_URL: z.string().default('').meta({ description: 'this service\'s public address: the links of e-mails and verification links, and the absolute `servers` of the OpenAPI documents (`PUBLIC_BASE_URL/v1`); set it in production', documentedDefault: '`http://localhost:$PORT`' }),
    TOPUP_WAIT_MS: z.coerce.number().int().positive().default(20000).describe('how long `POST /topup/verify` waits for its credit job'),
    CREDIT_CONCURRENCY: z.coerce.number().int().positive().default(8).describe('credit jobs per worker process'),
    RECONCILE_CRON: z.string().default('*/1 * * * *').describe('the reconciliation sweeps: top-ups verified with the processor, verifications stuck pending, receipts not sent, verification-link submissions left pending'),
    TOPUP_SWEEP_MIN_AGE_SECONDS: z.coerce.number().int().min(0).default(120).describe('the sweep leaves a pending top-up younger than this to the processor\'s webhook'),
    TOPUP_SWEEP_MAX_AGE_HOURS: z.coerce.number().positive().default(48).describe('a pending top-up older than this is given up by the sweep'),
    TOPUP_SWEEP_BATCH: z.coerce.number().int().positive().default(100).describe('pending top-ups one sweep run checks with the processor'),
    TOPUP_RECHECK_CRON: z.string().default('40 3 * * *').describe('schedule of the re-check of abandoned top-ups (job `topup.recheck`)'),
    TOPUP_RECHECK_DAYS: z.coerce.number().int().positive().default(30).describe('how long after its creation an abandoned top-up is still re-checked'),
    LEDGER_AUDIT_CRON: z.string().default('*/10 * * * *').describe('ledger audit'),
    RETENTION_CRON: z.string().default('17 * * * *').describe('erasure of expired person records and idempotency keys; the webhook deliveries log\'s retention (job `webhooks.prune`)'),
    STATEMENT_MAIL_CRON: z.string().default('0 7 * * *').describe('the monthly e-mail to finance officers linking the statement of the Lagos month that ended (job `statements.mail`): checked daily, sent once per officer and month (the first run of a month; a missed day is caught up)'),

    DEFAULT_UNIT_COST_KOBO: z.coerce.number().int().positive().default(10000).describe('price of one unit (NGN 100) for new organisations'),
    DEFAULT_MIN_TOPUP_UNITS: z.coerce.number().int().positive().multipleOf(100).default(100).describe('plan minimum top-up for new organisations'),
    VAT_BPS: z.coerce.number().int().min(0).default(750).describe('VAT, basis points (7.5%)'),
    INVOICE_SELLER_NAME: z.string().min(1).default('idverify (sandbox seller)').describe('the seller printed on every VAT invoice (the operator of the service)'),
    INVOICE_SELLER_ADDRESS: z.string().default('').describe('the seller\'s address on invoices, one line; empty: not printed'),
    INVOICE_SELLER_TIN: z.string().default('').describe('the seller\'s tax identification number on invoices; empty: `TIN: not on file`'),
    PROCESSOR_FEE_BPS: z.coerce.number().int().min(0).default(150).describe('Paystack\'s local fee, its percentage part in basis points (1.5%)'),
    PROCESSOR_FEE_FLAT_KOBO: z.coerce.number().int().min(0).default(10000).describe('Paystack\'s local fee, its flat part (NGN 100)'),
    PROCESSOR_FEE_FLAT_WAIVED_UNDER_KOBO: z.coerce.number().int().min(0).default(250000).describe('the flat part of the fee is waived for payments under this (NGN 2,500)'),
    PROCESSOR_FEE_CAP_KOBO: z.coerce.number().int().min(0).default(200000).describe('the fee\'s cap (NGN 2,000)'),
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
      })
      .describe('bonus units for hosted affiliate tenants, up to `BONUS_END_DATE`: a JSON array of `{min, max?, bonus}` (units bought, bonus units given)'),
    BONUS_END_DATE: z.iso.date().default('2026-06-15').describe('last day (Africa/Lagos) the bonus applies'),

    SMTP_URL: z.string().default('').describe('receipts and password-reset e-mails; empty keeps them in the outbox log (sandbox), and `npm start` in the sandbox points it at its mail sink'),
    MAIL_FROM: z.string().default('Identity Verification <billing@idverify.local>').describe('the sender of every e-mail'),
    MAIL_FALLBACK_TO: z.string().default('billing@idverify.local').describe('the recipient when an organisation has no billing or admin e-mail'),
    PASSWORD_RESET_URL: z
      .string()
      .default('')
      .refine((v) => v === '' || (v.includes('{token}') && /^https?:\/\//.test(v)), 'must be an http(s) address containing {token}')
      .describe('the operator\'s page that takes a reset token, an http(s) address containing `{token}` (e.g. `https://app.example.com/reset?token={token}`); when set, reset e-mails carry this link as well as the token; empty: the token alone, for `POST /reset-password`. A value without `{token}` stops the process at start'),
    INVITATION_URL: z
      .string()
      .default('')
      .refine((v) => v === '' || (v.includes('{token}') && /^https?:\/\//.test(v)), 'must be an http(s) address containing {token}')
      .describe('the page an invitation e-mail links to, an http(s) address containing `{token}` (e.g. `https://app.example.com/join#token={token}`); empty: the portal\'s, `PUBLIC_BASE_URL/portal/accept-invitation#token=...` (a fragment: never in a server\'s log)'),
    INVITATION_TTL_HOURS: z.coerce.number().int().min(1).max(720).default(72).describe('how long an invitation\'s link may be used (1 to 720)'),

    CSV_EXPORTS_PER_PROCESS: z.coerce.number().int().min(1).max(64).default(4).describe('CSV exports at once per API process (each holds an export connection while its client reads; see CSV export limits)'),
    CSV_EXPORTS_PER_ORG: z.coerce.number().int().min(1).max(64).default(2).describe('CSV exports at once per organisation, across all processes'),
    CSV_EXPORT_MIN_BYTES: z.coerce.number().int().min(0).default(16384).describe('a CSV export whose reader takes fewer bytes than this in the last `CSV_EXPORT_MIN_WINDOW_MS` (sliding) is ended'),
    CSV_EXPORT_MIN_WINDOW_MS: z.coerce.number().int().min(50).default(30000).describe('the sliding window of `CSV_EXPORT_MIN_BYTES`'),
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60000).default(10000).describe('how long a webhook receiver has to answer 2xx; a later or other answer is a failed try'),
    WEBHOOK_RETRY_FIRST_MS: z.coerce.number().int().min(0).max(30000).default(15000).describe('the wait before a failed webhook\'s first retry (at most 30 s), four times longer for each later one'),
    WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(0).default(6 * 3600 * 1000).describe('the longest wait between two tries of a webhook (6 h)'),
    WEBHOOK_RETRY_WINDOW_MS: z.coerce.number().int().min(0).default(72 * 3600 * 1000).describe('how long a webhook event is tried (3 days); an endpoint whose every try failed for this long is disabled and its administrators e-mailed'),
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(512).default(32).describe('webhook deliveries in flight per worker process (at most 4 per endpoint across all processes)'),
    WEBHOOK_MAX_IN_FLIGHT_PER_ORG: z.coerce.number().int().min(1).max(512).default(8).describe('webhook deliveries in flight per organisation, all its endpoints together, across all worker processes; keep it below `WEBHOOK_CONCURRENCY` so an organisation whose receivers all hang leaves sockets free for everyone else'),
    WEBHOOK_MAX_ENDPOINTS: z.coerce.number().int().min(1).max(1000).default(20).describe('webhook endpoints one organisation may have (switched off ones count, deleted ones do not); registering one more answers 409 with a detail. Each endpoint gets its own delivery of every event, so this bounds what one event costs'),
    WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60000).default(1000).describe('how often a worker looks for due webhook deliveries when no commit notified it (LISTEN/NOTIFY wakes it at once otherwise)'),
    WEBHOOK_PINGS_PER_HOUR: z.coerce.number().int().min(1).max(100000).default(10).describe('test pings (`POST /webhook-endpoints/{id}/test`) one endpoint may be sent within an hour; beyond, 429 `ping_limit` with `Retry-After`. A ping makes us send on an organisation\'s word, as a redelivery does (capped at 5 an hour)'),
    WEBHOOK_PUBLIC_ONLY: bool.default(false).describe('`true`: webhook URLs must be https on public addresses even in the sandbox (which otherwise allows http and loopback; a real stack always refuses them)'),
    WEBHOOK_RETENTION_DAYS: z.coerce.number().min(4, 'must be at least 4 (the retry window is 3 days)').default(30).describe('days a webhook event and its deliveries stay in the deliveries log once none is pending and none was redelivered inside the window; at least 4 (the retry window is 3 days); removed hourly on `RETENTION_CRON`, at most 50,000 events a run'),
    LINK_SUBMISSIONS_PER_LINK: z.coerce.number().int().min(1).max(100000).default(30).describe('submissions a verification link\'s page takes per window for one link; beyond, the page says to wait (429) ([links.md](links.md)). Each may be a charged lookup and a face match: a link that leaked must not empty a wallet at the speed of a script'),
    LINK_SUBMISSIONS_PER_ADDRESS: z.coerce.number().int().min(1).max(100000).default(10).describe('submissions a verification link\'s page takes per window from one address (an IPv6 /64 counts as one address), over every link'),
    LINK_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86400).default(600).describe('the window of those two limits'),
    METRICS_TOKEN: z.string().default('').describe('bearer token for `/metrics`; empty: `/metrics` answers 404'),
    WORKER_METRICS_PORT: port.default(9464).describe('the worker process\'s metrics server (only when `METRICS_TOKEN` is set)'),
    SHUTDOWN_GRACE_MS: z.coerce.number().int().positive().default(10000).describe('on SIGTERM, how long the API lets requests in flight finish (a worker lets its jobs finish: at least this, and as long as its longest job may run, the larger of `VERIFY_WAIT_MS` + `FACE_WAIT_MS`, `WEBHOOK_TIMEOUT_MS` and twice `PAYSTACK_TIMEOUT_MS`: 50 s by default); a process still stopping 5 s after that (a close waiting on Redis or PostgreSQL that is down) logs `shutdown did not finish in time` and exits 1 by itself, and `npm start` kills it 2 s later; a job cut short runs again from its queue'),
    WEB_PROCESSES: z.coerce.number().int().min(1).max(16).default(1).describe('API processes `npm start` runs; several share `PORT` (SO_REUSEPORT: the kernel spreads connections). The Procfile scales `web:` itself'),
    FACE_METRICS_PORT: port.default(9480).describe('the face worker process\'s metrics server (only when `METRICS_TOKEN` is set): units its comparisons debited; `npm start`\'s face worker n serves on `FACE_METRICS_PORT` + n - 1, a range that must not overlap the workers\' (`WORKER_METRICS_PORT` and the next `WORKER_PROCESSES` - 1)'),
    WORKER_PROCESSES: z.coerce.number().int().min(1).max(16).default(1).describe('worker processes `npm start` runs, each with its own metrics port (`WORKER_METRICS_PORT` + n). The Procfile scales `worker:` itself'),
    FACE_PROCESSES: z.coerce.number().int().min(0).max(16).default(1).describe('face worker processes `npm start` runs (Procfile `face:`); each loads the face model once (about 500 MB resident)'),
    FACE_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1).describe('face jobs one face worker process runs at once (the WASM backend computes on one core per process, so more than 1 only overlaps image decoding with inference). A face worker settles the face matches it compares: its PostgreSQL pool is this plus 2 connections (at most DATABASE_POOL_SIZE)'),
    FACE_NICE: z.coerce.number().int().min(0).max(19).default(10).describe('added to the nice value (CPU priority) of every thread of a face worker at start, so inference (and V8\'s compilation and garbage collection for it) yields the cores to the API and the lookup workers (a face match waits a little longer; a bystander verification does not); `0` leaves it as it is'),
    FACE_MATCH_UNITS: z.coerce.number().int().min(1).max(100).default(2).describe('units a compared face match costs, the lookup\'s unit included; a found record with no usable photo costs 1'),
    FACE_WAIT_MS: z.coerce.number().int().positive().default(20000).describe('how long the API waits for each face job (selfie check, then comparison) before answering 503'),
    FACE_INTAKE_PER_PROCESS: z.coerce.number().int().min(1).max(64).default(2).describe('face match bodies (a selfie, or a liveness check\'s frames; POST /verify-nin/face and a link\'s submission) one API process decodes, checks and queues at once, once their body is read; the others wait for a slot, and nothing is refused for it. A burst of selfies is spaced out so that every other request keeps its turns'),
    FACE_ORG_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(1000).default(8).describe('face matches one organisation may have queued or running on the face workers; a selfie check beyond it answers 429 `face_in_flight_cap` (nothing charged). One organisation\'s slow images hold at most this many turns, and the others\' jobs are queued ahead of its later ones'),
    LIVENESS_SESSION_TTL_SECONDS: z.coerce.number().int().min(30).max(3600).default(120).describe('how long a liveness session (`POST /v1/liveness/sessions`) can be judged; its frames must also have been taken within this span'),
    LIVENESS_OPEN_SESSIONS_PER_ORG: z.coerce.number().int().min(1).max(100000).default(200).describe('liveness sessions one organisation may hold open (neither judged nor expired) at once; one more answers 429 `liveness_session_cap`. Sessions are free: this bounds what a leaked token can pile up'),
    LIVENESS_MIN_YAW_DEGREES: z.coerce.number().min(5).max(60).default(20).describe('how far (degrees) the head must turn left or right from the person\'s own front frame for a turn to count ([liveness.md](liveness.md))'),
    LIVENESS_MIN_PITCH_DEGREES: z.coerce.number().min(3).max(45).default(12).describe('how far (degrees) the chin must come up from the person\'s own front frame for `look_up` to count'),
    LIVENESS_FRAME_HASH_DAYS: z.coerce.number().int().min(1).max(3650).default(30).describe('days the keyed hash (HMAC-SHA-256) of each judged liveness frame is kept, so a frame sent again is refused as `frames_reused`; the frames themselves are never kept'),
    LIVENESS_UNITS: z.coerce.number().int().min(0).max(100).default(1).describe('units a face match with a passed liveness check costs on top of the face match\'s own, charged whenever those are (a compared face match); a failed check costs nothing'),
  })
  .superRefine((c, ctx) => {
    for (const issue of publishedSecretIssues({ ...c, jwtSecrets: jwtSecretList(c) })) ctx.addIssue({ code: 'custom', path: [issue.variable], message: issue.message });
    const real = realStackReason({ ...c, jwtSecrets: jwtSecretList(c) });
    if (real && !c.NIMC_ENTERPRISE_CODE) ctx.addIssue({ code: 'custom', path: ['NIMC_ENTERPRISE_CODE'], message: `is required when ${real} (the sandbox code ${SANDBOX_ENTERPRISE_CODE} is for the simulator only)` });
    // Outside production, an empty base URL starts a built-in simulator that answers made-up people and
    // payments: with a live Paystack key (NODE_ENV forgotten on a real deployment) both must be named.
    const live = c.NODE_ENV !== 'production' && c.PAYSTACK_SECRET_KEY.startsWith('sk_live_');
    if (live && !c.IDENTITY_BASE_URL) ctx.addIssue({ code: 'custom', path: ['IDENTITY_BASE_URL'], message: 'is required with a live PAYSTACK_SECRET_KEY (empty starts the identity simulator)' });
    if (live && !c.PAYSTACK_BASE_URL) ctx.addIssue({ code: 'custom', path: ['PAYSTACK_BASE_URL'], message: 'is required with a live PAYSTACK_SECRET_KEY (empty starts the payment simulator)' });
    // npm start gives worker n WORKER_METRICS_PORT + n - 1 and face worker n FACE_METRICS_PORT + n - 1:
    // overlapping ranges would stop the whole tree at start with one port taken twice.
    const workers = [c.WORKER_METRICS_PORT, c.WORKER_METRICS_PORT + c.WORKER_PROCESSES - 1];
    const faces = [c.FACE_METRICS_PORT, c.FACE_METRICS_PORT + c.FACE_PROCESSES - 1];
    if (c.METRICS_TOKEN && c.FACE_PROCESSES > 0 && faces[0]! <= workers[1]! && workers[0]! <= faces[1]!)
      ctx.addIssue({ code: 'custom', path: ['FACE_METRICS_PORT'], message: `must not overlap the workers' metrics ports (${workers[0]}-${workers[1]}): the face workers would take ${faces[0]}-${faces[1]}` });
    if (c.NODE_ENV !== 'production') return;
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
  /**
   * The sandbox's switches (sandbox-config.ts), read only where the sandbox runs: a built-in simulator
   * stands in for an upstream, or the stack is not a real one (the tests' and benchmarks' local
   * simulators). null on a real stack, production included.
   */
  sandboxSwitches: SandboxConfig | null;
  /** Deprecated variables that were read; entry points print each once at start. */
  warnings: string[];
};

/** Old name -> new name. The old one is still honoured when the new one is unset. */
export const RENAMED = { TOPUP_SWEEP_CRON: 'RECONCILE_CRON' } as const;

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
  const c = parsedOrThrow(configSchema, source);
  const jwtSecrets = jwtSecretList(c);
  const sandboxSwitches = readSandboxSwitches(c, source);
  return {
    ...c,
    ...{ JWT_SECRET: jwtSecrets[0]!, jwtSecrets },
    LOGIN_MAX_FAILURES_PER_ADDRESS: c.LOGIN_MAX_FAILURES_PER_ADDRESS ?? c.LOGIN_MAX_FAILURES * 5,
    encryptionKeys: parseKeys(c.ENCRYPTION_KEYS ?? DEV_ENCRYPTION_KEY),
    sandbox: {
      identity: !c.IDENTITY_BASE_URL,
      processor: !c.PAYSTACK_BASE_URL,
    },
    // An empty base URL always comes with the switches: a simulator standing in is where the sandbox runs.
    identityBaseUrl: c.IDENTITY_BASE_URL || `http://127.0.0.1:${sandboxSwitches!.IDENTITY_SIM_PORT}`,
    identityAppId: c.IDENTITY_APP_ID || (c.IDENTITY_BASE_URL ? '' : SANDBOX_IDENTITY_APP_ID),
    paystackBaseUrl: c.PAYSTACK_BASE_URL || `http://127.0.0.1:${sandboxSwitches!.PAYSTACK_SIM_PORT}`,
    nimcEnterpriseCode: c.NIMC_ENTERPRISE_CODE ?? SANDBOX_ENTERPRISE_CODE,
    publicBaseUrl: (c.PUBLIC_BASE_URL || `http://localhost:${c.PORT}`).replace(/\/$/, ''),
    sandboxSwitches,
    warnings,
  };
}

/** The schema's output, or a ConfigError naming the first variable that is wrong. */
function parsedOrThrow<S extends z.ZodType>(schema: S, source: NodeJS.ProcessEnv): z.output<S> {
  const parsed = schema.safeParse(source);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new ConfigError(`invalid configuration: ${issue.path.join('.') || 'environment'}: ${issue.message}`);
}

/**
 * The sandbox's switches where the sandbox runs, else null without reading them. A real stack refuses
 * only the benchmark's inline lookup, which would change how its lookups run.
 */
function readSandboxSwitches(c: RawConfig, source: NodeJS.ProcessEnv): SandboxConfig | null {
  const real = realStackReason({ ...c, jwtSecrets: jwtSecretList(c) });
  const simulatorStandsIn = !c.IDENTITY_BASE_URL || !c.PAYSTACK_BASE_URL;
  const switches = simulatorStandsIn || !real ? parsedOrThrow(sandboxSchema, source) : null;
  const inline = switches ? switches.LOOKUP_INLINE : bool.safeParse(source.LOOKUP_INLINE).data === true;
  if (real && inline) {
    throw new ConfigError(`invalid configuration: LOOKUP_INLINE: is for benchmarks only and refused ${c.NODE_ENV === 'production' ? 'in production' : `when ${real}`}`);
  }
  return switches;
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
