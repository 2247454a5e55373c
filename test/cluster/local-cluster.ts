import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/**
 * A throw-away Redis Cluster of three masters and no replicas: `redis-server` processes in cluster
 * mode on free ports of their own, joined with `redis-cli --cluster create`, their files in a
 * temporary folder removed on stop. Nothing of the shared Redis on 6379 is touched.
 */
export type LocalCluster = {
  /** `127.0.0.1:port` of each master, for REDIS_CLUSTER_NODES. */
  nodes: string[];
  ports: number[];
  /** Every key matching `pattern`, per master port (SCAN on each master: a cluster has no global SCAN). */
  keysByMaster(pattern: string): Promise<Map<number, string[]>>;
  stop(): Promise<void>;
};

export function clusterToolsPresent(): boolean {
  return ['redis-server', 'redis-cli'].every((bin) => spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0);
}

/** A port that is free, and whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 30000);
    if (taken.has(port) || taken.has(port + 10000)) continue;
    if ((await canListen(port)) && (await canListen(port + 10000))) {
      taken.add(port);
      taken.add(port + 10000);
      return port;
    }
  }
  throw new Error('no free port pair for a cluster node');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`local cluster: ${what} not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startLocalCluster(masters = 3): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'idv-cluster-'));
  const taken = new Set<number>();
  const ports: number[] = [];
  const procs: ChildProcess[] = [];
  const output: string[] = [];
  const stop = async () => {
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freeClusterPort(taken);
      ports.push(port);
      const p = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '5000', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--protected-mode', 'no'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      p.stdout!.on('data', (b: Buffer) => output.push(b.toString()));
      p.stderr!.on('data', (b: Buffer) => output.push(b.toString()));
      procs.push(p);
    }
    for (const port of ports) {
      await waitFor(async () => spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG', `redis-server on ${port}`, 10_000);
    }
    const nodes = ports.map((p) => `127.0.0.1:${p}`);
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8' });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.stdout}\n${create.stderr}`);
    for (const port of ports) {
      await waitFor(async () => /cluster_state:ok/.test(spawnSync('redis-cli', ['-p', String(port), 'cluster', 'info'], { encoding: 'utf8' }).stdout), `cluster_state:ok on ${port}`, 20_000);
    }
    return {
      nodes,
      ports,
      async keysByMaster(pattern) {
        const out = new Map<number, string[]>();
        for (const port of ports) {
          const r = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 2 });
          try {
            const keys: string[] = [];
            let cursor = '0';
            do {
              const [next, batch] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
              cursor = next;
              keys.push(...batch);
            } while (cursor !== '0');
            out.set(port, keys);
          } finally {
            r.disconnect();
          }
        }
        return out;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output.join('').slice(-2000)}`);
  }
}
