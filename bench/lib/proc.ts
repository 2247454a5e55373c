import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** Absolute path of a file of this repository, from its path relative to the root. */
export function repoPath(relative: string): string {
  return fileURLToPath(new URL(`../../${relative}`, import.meta.url));
}

export type NodeChild = {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** Every line the process wrote on stdout and stderr (kept only when asked). */
  logs: string[];
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly alive: boolean;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): void;
  /** The first line the process wrote starting with `prefix`, once it has (rejects if it exits first). */
  line(prefix: string): Promise<string>;
};

/**
 * Starts `node <entry>` (the same Node as this process: native TypeScript) with exactly the given
 * environment plus PATH and HOME. Output is kept when `captureLogs`, else the last lines only, so a
 * crash can be explained without holding a long run's log in memory.
 */
export function spawnNode(name: string, entry: string, env: Record<string, string>, opts: { captureLogs?: boolean; args?: string[]; nodeArgs?: string[] } = {}): NodeChild {
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), entry, ...(opts.args ?? [])], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (proc.pid === undefined) throw new Error(`could not start ${name}`);
  const logs: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      logs.push(line);
      tell(line);
      if (!opts.captureLogs && logs.length > 200) logs.splice(0, logs.length - 100);
    }
  };
  const lineWaiters: { prefix: string; resolve: (line: string) => void }[] = [];
  const tell = (line: string) => {
    for (const w of lineWaiters.filter((x) => line.startsWith(x.prefix))) {
      lineWaiters.splice(lineWaiters.indexOf(w), 1);
      w.resolve(line);
    }
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  let alive = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      alive = false;
      resolve({ code, signal });
    });
  });
  return {
    name,
    proc,
    pid: proc.pid,
    logs,
    exited,
    get alive() {
      return alive;
    },
    line(prefix: string) {
      const seen = logs.find((l) => l.startsWith(prefix));
      if (seen !== undefined) return Promise.resolve(seen);
      const waited = new Promise<string>((resolve) => lineWaiters.push({ prefix, resolve }));
      return Promise.race([waited, exited.then(() => Promise.reject(new Error(`${name} exited before printing ${prefix}: ${logs.slice(-5).join(' | ')}`)))]);
    },
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (alive) proc.kill(signal);
    },
    async stop(graceMs = 10_000) {
      if (!alive) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A free loopback port (the tiny race until the child binds it is acceptable on a test machine). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `url` until it answers 2xx (any status with `anyStatus`), the child dies, or the deadline passes. */
export async function waitForHttp(url: string, opts: { timeoutMs?: number; child?: NodeChild; anyStatus?: boolean } = {}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  while (Date.now() < deadline) {
    if (opts.child && !opts.child.alive) throw new Error(`${opts.child.name} exited while starting:\n${opts.child.logs.slice(-20).join('\n')}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok || opts.anyStatus) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer in time${opts.child ? `:\n${opts.child.logs.slice(-20).join('\n')}` : ''}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** VmRSS and VmHWM (peak resident set) of a live process, in kB; null once it has gone. */
export function procMemory(pid: number): { rssKb: number; hwmKb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+)/.exec(status);
    const hwm = /VmHWM:\s+(\d+)/.exec(status);
    return { rssKb: Number(rss?.[1] ?? 0), hwmKb: Number(hwm?.[1] ?? 0) };
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in ms; null once it has gone. */
export function procCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name; clock ticks of 10 ms.
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return null;
  }
}

/**
 * Polls VmRSS of named processes; the peak is the larger of the polled maximum and VmHWM, so a
 * spike between two polls is not missed. `series` keeps every sample for the soak's growth check.
 */
export class MemorySampler {
  private timer: NodeJS.Timeout | undefined;
  readonly peaksKb = new Map<string, number>();
  readonly series = new Map<string, { t: number; rssKb: number }[]>();
  private readonly started = Date.now();
  private readonly pids: () => Record<string, number>;
  constructor(pids: () => Record<string, number>) {
    this.pids = pids;
  }

  sample(): void {
    const t = Date.now() - this.started;
    for (const [name, pid] of Object.entries(this.pids())) {
      const m = procMemory(pid);
      if (!m) continue;
      this.peaksKb.set(name, Math.max(this.peaksKb.get(name) ?? 0, m.rssKb, m.hwmKb));
      let s = this.series.get(name);
      if (!s) this.series.set(name, (s = []));
      s.push({ t, rssKb: m.rssKb });
    }
  }

  start(intervalMs = 500): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): Record<string, number> {
    clearInterval(this.timer);
    this.sample();
    return Object.fromEntries([...this.peaksKb].map(([k, v]) => [k, Math.round(v / 1024)]));
  }
}
