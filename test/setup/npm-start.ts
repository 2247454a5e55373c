import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { createTestDatabase } from './harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A port nothing listens on right now (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** True when a listener could take the port on every address the service binds (it is free). */
export async function portIsFree(port: number): Promise<boolean> {
  for (const host of ['0.0.0.0', '127.0.0.1']) {
    const s = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      s.once('error', () => resolve(false));
      s.listen(port, host, () => resolve(true));
    });
    if (ok) await new Promise<void>((resolve) => s.close(() => resolve()));
    else return false;
  }
  return true;
}

/** Every process below `pid` in the process table (children, grandchildren, ...). */
export function descendantsOf(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent; the command (field 2) may hold spaces, so split after it.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(entry), ppid);
    } catch {
      // Gone meanwhile.
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, pp] of parent) if (pp === p) (out.push(child), walk(child));
  };
  walk(pid);
  return out;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export type NpmStart = {
  proc: ChildProcess;
  databaseUrl: string;
  ports: { api: number; identity: number; payment: number; smtp: number };
  output(): string;
  /** What it wrote on stderr alone. */
  stderr(): string;
  /** Every process seen in its tree so far (npm, the launcher, its children). */
  seen(): number[];
  /** Resolves once the output contains `text`. */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  /** SIGKILLs whatever is left of the tree and drops the database (test cleanup). */
  cleanup(): Promise<void>;
};

/** `npm start` as an operator runs it, with a database, a Redis prefix and ports of its own (or those given). */
export async function startNpmStart(o: { ports?: Partial<NpmStart['ports']>; env?: Record<string, string> } = {}): Promise<NpmStart> {
  const database = await createTestDatabase();
  const ports = { api: await freePort(), identity: await freePort(), payment: await freePort(), smtp: await freePort(), ...o.ports };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    DATABASE_URL: database.url,
    REDIS_URL: inject('redisUrl'),
    REDIS_PREFIX: `${inject('runId')}-start-${randomBytes(3).toString('hex')}`,
    PORT: String(ports.api),
    IDENTITY_SIM_PORT: String(ports.identity),
    PAYSTACK_SIM_PORT: String(ports.payment),
    SANDBOX_SMTP_PORT: String(ports.smtp),
    SANDBOX_SEED: 'false',
    SHUTDOWN_GRACE_MS: '5000',
    ...o.env,
  };
  const proc = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stderr = '';
  proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => {
    output += c.toString();
    stderr += c.toString();
  });
  const tree = new Set<number>();
  const remember = () => {
    if (proc.pid && proc.exitCode === null) for (const p of [proc.pid, ...descendantsOf(proc.pid)]) tree.add(p);
  };
  // Watched from the start, so that a tree that ends early is still known.
  const watch = setInterval(remember, 50);
  proc.once('exit', () => clearInterval(watch));
  return {
    proc,
    databaseUrl: database.url,
    ports,
    output: () => output,
    stderr: () => stderr,
    seen: () => [...tree],
    async waitForOutput(text, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!output.includes(text)) {
        if (proc.exitCode !== null) throw new Error(`npm start exited (${proc.exitCode}) before "${text}":\n${output.slice(-3000)}`);
        if (Date.now() > deadline) throw new Error(`npm start: no "${text}" within ${timeoutMs} ms:\n${output.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 100));
        remember();
      }
      remember();
    },
    async cleanup() {
      clearInterval(watch);
      remember();
      // Only what is still ours: a pid that ended may since have been given to another process.
      for (const p of tree) if (alive(p) && /npm start|src\/main\.ts|src\/server\.ts|workers\/main\.ts/.test(commandOf(p))) process.kill(p, 'SIGKILL');
      await database.drop();
    },
  };
}

/** `npm start` with the demo accounts seeded, once the API and the workers are up, and the administrator's printed password. */
export async function startSeededSandbox(): Promise<{ sandbox: NpmStart; adminPassword: string }> {
  const sandbox = await startNpmStart({ env: { SANDBOX_SEED: 'true' } });
  try {
    await sandbox.waitForOutput('api listening', 90_000);
    await sandbox.waitForOutput('workers started', 90_000);
    const printed = /administrator: username=demo-admin password=(\S+)/.exec(sandbox.output());
    if (!printed) throw new Error(`npm start printed no demo-admin password:\n${sandbox.output().slice(-3000)}`);
    return { sandbox, adminPassword: printed[1]! };
  } catch (e) {
    // The caller never gets the sandbox to stop: a start that failed must not leave its tree running.
    await sandbox.cleanup();
    throw e;
  }
}

/** Stops it as an operator would (SIGTERM, then waits for the exit), then cleans up what is left. */
export async function stopNpmStart(s: NpmStart | undefined): Promise<void> {
  if (!s) return;
  if (s.proc.exitCode === null) {
    const exited = new Promise((resolve) => s.proc.once('exit', resolve));
    s.proc.kill('SIGTERM');
    await exited;
  }
  await s.cleanup();
}
