import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { shutdownDeadlineMs, type ProcessKind } from './jobs/budgets.ts';
import { loadConfigOrExit } from './config.ts';
import { startProcess } from './lib/process.ts';
import { createDb, ensureDatabase } from './lib/db.ts';
import { EX_CONFIG, ListenFailure, listenAs } from './lib/listen.ts';
import { migrate } from './lib/migrate.ts';
import { seedSandbox } from './modules/organisations/index.ts';
import { startIdentitySimulator } from './simulators/identity-authority/server.ts';
import { startPaymentSimulator } from './simulators/payment-processor/server.ts';
import { startMailSink, type MailSink } from './simulators/mail-sink/sink.ts';

/**
 * `npm start`: prepares the database, starts the sandbox simulators when no real upstream is
 * configured, then runs WEB_PROCESSES API, WORKER_PROCESSES worker and FACE_PROCESSES face worker child processes (the same
 * entry points the Procfile scales separately), restarting any that dies. SIGTERM or SIGINT (the
 * package.json script `exec`s this file, so npm's forwarded signal lands here, not on a shell) is
 * passed on to the children; once they have stopped, the simulators close and the process exits.
 * A port that cannot be opened (here or in a child, which exits 78 saying which) stops everything
 * the same way, and the launcher exits 78: restarting would only meet the same taken port.
 */
const { config, logger } = startProcess('launcher', loadConfigOrExit);

type Child = { name: string; kind: ProcessKind; entry: string; env: NodeJS.ProcessEnv; proc?: ChildProcess; restarts: number[] };
const children: Child[] = [];
const closers: (() => Promise<void>)[] = [];
let stopping = false;
// From the first moment: a signal during migration or start-up still closes what was opened.
process.once('SIGTERM', () => void shutdown(0));
process.once('SIGINT', () => void shutdown(0));

await ensureDatabase(config.DATABASE_URL);
const applied = await migrate(config.DATABASE_URL, logger);
logger.info({ applied }, 'database ready');

/** A simulator's listener: a port it cannot open is one line naming `variable`, then everything stops (exit 78). */
async function opened<T>(variable: string, port: number, open: () => Promise<T>): Promise<T> {
  try {
    return await listenAs(variable, '127.0.0.1', port, open);
  } catch (err) {
    if (err instanceof ListenFailure) {
      process.stderr.write(`${err.message}\n`);
      await shutdown(EX_CONFIG);
    }
    throw err;
  }
}

// The sandbox's own switches (src/sandbox-config.ts): read whenever a simulator stands in, so present
// in each branch below; a real stack has none and starts no simulator.
const switches = config.sandboxSwitches;
let mailSink: MailSink | null = null;
if (switches && config.sandbox.identity && !config.SMTP_URL) {
  mailSink = await opened('SANDBOX_SMTP_PORT', switches.SANDBOX_SMTP_PORT, () => startMailSink({ host: '127.0.0.1', port: switches.SANDBOX_SMTP_PORT }));
  const sink = mailSink;
  closers.push(() => sink.close());
  // The API and worker processes read it from their environment: every e-mail goes to the sink.
  process.env.SMTP_URL = sink.url;
}
let identitySimUrl: string | null = null;
if (switches && config.sandbox.identity) {
  const sim = await opened('IDENTITY_SIM_PORT', switches.IDENTITY_SIM_PORT, () =>
    startIdentitySimulator({
    ...(mailSink ? { mailbox: mailSink } : {}),
    host: '127.0.0.1',
    port: switches.IDENTITY_SIM_PORT,
    latencyMs: switches.IDENTITY_SIM_LATENCY_MS,
    latency: switches.IDENTITY_SIM_LATENCY_MEDIAN_MS > 0 ? { medianMs: switches.IDENTITY_SIM_LATENCY_MEDIAN_MS, p95Ms: switches.IDENTITY_SIM_LATENCY_P95_MS } : null,
    rateLimit: switches.IDENTITY_SIM_RATE_LIMIT,
    maxConcurrency: switches.IDENTITY_SIM_MAX_CONCURRENCY,
    apiKey: config.IDENTITY_API_KEY,
    appId: config.identityAppId,
    enterpriseCode: config.nimcEnterpriseCode,
    }),
  );
  closers.push(() => sim.close());
  identitySimUrl = sim.url;
  logger.warn({ url: sim.url, dialect: config.IDENTITY_DIALECT }, 'SANDBOX: identity authority is the built-in simulator; no real NIN is checked');
}
if (switches && config.sandbox.processor) {
  const sim = await opened('PAYSTACK_SIM_PORT', switches.PAYSTACK_SIM_PORT, () =>
    startPaymentSimulator({
      host: '127.0.0.1',
      port: switches.PAYSTACK_SIM_PORT,
      secretKey: config.PAYSTACK_SECRET_KEY,
      webhookUrl: `http://127.0.0.1:${config.PORT}/v1/webhooks/paystack`,
    }),
  );
  closers.push(() => sim.close());
  logger.warn({ url: sim.url }, 'SANDBOX: payment processor is the built-in simulator; no real money moves');
}

if (switches && (config.sandbox.identity || config.sandbox.processor) && switches.SANDBOX_SEED) {
  const db = await createDb(config.DATABASE_URL, { maxPoolSize: 2 });
  try {
    const seeded = await seedSandbox(db, config);
    if (seeded) {
      // Printed once, on the first start only: the passwords are stored only as hashes.
      process.stdout.write(
        [
          '',
          '================ SANDBOX DEMO ACCOUNTS (shown once) ================',
          `organisation: ${seeded.organisation} (100 units)`,
          `administrator: username=${seeded.admin.username} password=${seeded.admin.password}`,
          `team member:   username=${seeded.member.username} password=${seeded.member.password}`,
          '====================================================================',
          '',
        ].join('\n'),
      );
    }
  } finally {
    await db.end();
  }
}

// Every start but production's (whose stdout is its JSON log lines only) says where the API, its
// documentation and the portal are (the public address when one is set); the sandbox's mailbox only
// when it runs one (no SMTP_URL).
if (config.NODE_ENV !== 'production') {
  process.stdout.write(
    [
      '',
      `======================== ${identitySimUrl ? 'SANDBOX' : 'STARTED'} ========================`,
      `API:     ${config.publicBaseUrl}/v1  (documentation: ${config.publicBaseUrl}/docs)`,
      `portal:  ${config.publicBaseUrl}/portal/  (sign in with ${identitySimUrl ? 'the demo accounts' : 'your account'})`,
      ...(mailSink && identitySimUrl ? [`e-mails: ${identitySimUrl}/sandbox/mail  (newest first; SMTP sink on 127.0.0.1:${mailSink.port})`] : []),
      '=========================================================',
      '',
    ].join('\n'),
  );
}

const webEntry = fileURLToPath(new URL('./server.ts', import.meta.url));
const workerEntry = fileURLToPath(new URL('../workers/main.ts', import.meta.url));
const faceEntry = fileURLToPath(new URL('../workers/face.ts', import.meta.url));
// Several web processes share the port (SO_REUSEPORT: the kernel spreads connections, no proxy hop);
// each worker process gets a metrics port of its own.
children.push(
  ...Array.from({ length: config.WEB_PROCESSES }, (_, i) => ({ name: `web-${i + 1}`, kind: 'api' as const, entry: webEntry, env: process.env, restarts: [] })),
  ...Array.from({ length: config.WORKER_PROCESSES }, (_, i) => ({
    name: `worker-${i + 1}`,
    kind: 'worker' as const,
    entry: workerEntry,
    env: { ...process.env, WORKER_METRICS_PORT: String(config.WORKER_METRICS_PORT + i) },
    restarts: [],
  })),
  // The face workers: the only processes that load the face model (POST /verify-nin/face).
  ...Array.from({ length: config.FACE_PROCESSES }, (_, i) => ({ name: `face-${i + 1}`, kind: 'worker' as const, entry: faceEntry, env: { ...process.env, FACE_METRICS_PORT: String(config.FACE_METRICS_PORT + i) }, restarts: [] })),
);

function spawn(child: Child): void {
  if (stopping) return;
  const proc = fork(child.entry, [], { stdio: 'inherit', env: child.env, execPath: process.execPath });
  child.proc = proc;
  proc.on('exit', (code, signal) => {
    if (stopping) return;
    // The child could not open its port and has said which in its line on stderr.
    if (code === EX_CONFIG) {
      void shutdown(EX_CONFIG);
      return;
    }
    const now = Date.now();
    child.restarts = child.restarts.filter((t) => now - t < 60_000);
    child.restarts.push(now);
    if (child.restarts.length > 5) {
      logger.fatal({ child: child.name, code, signal }, 'child keeps dying; giving up');
      void shutdown(1);
      return;
    }
    const delay = 250 * 2 ** (child.restarts.length - 1);
    logger.error({ child: child.name, code, signal, delay }, 'child exited; restarting');
    setTimeout(() => spawn(child), delay);
  });
}

async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info('stopping: workers and API finish what they are doing');
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          const p = c.proc;
          if (!p || p.exitCode !== null || p.signalCode !== null) return resolve();
          // A child past its deadline exits by itself; this is for one that cannot (stuck event loop).
          const kill = setTimeout(() => p.kill('SIGKILL'), shutdownDeadlineMs(config, c.kind) + 2000);
          p.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          p.kill('SIGTERM');
        }),
    ),
  );
  await Promise.allSettled(closers.map((close) => close()));
  process.exit(code);
}

if (!stopping) for (const c of children) spawn(c);
