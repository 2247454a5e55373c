import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath, sleep, spawnNode, type NodeChild } from './proc.ts';

/**
 * A process started with the event-loop probe (lib/loop-lag.ts) preloaded, and profiled when a
 * profile directory is given: the same instruments as the service's processes, so a floor's CPU
 * profile sits beside the API's in the same run.
 */
export function spawnProbed(name: string, entry: string, env: Record<string, string>, profileDir?: string): { child: NodeChild; loopLag(): Promise<Record<string, unknown>> } {
  const file = join(mkdtempSync(join(tmpdir(), 'idv-lag-')), `${name}.jsonl`);
  const child = spawnNode(name, entry, { ...env, BENCH_LOOP_LAG_FILE: file, ...(profileDir ? { BENCH_PROFILE_DIR: profileDir, BENCH_PROFILE_NAME: name } : {}) }, {
    nodeArgs: ['--import', repoPath('bench/lib/loop-lag.ts')],
  });
  return {
    child,
    async loopLag() {
      if (!child.alive) return { [name]: null };
      const before = existsSync(file) ? readFileSync(file, 'utf8').length : 0;
      child.proc.kill('SIGUSR2');
      for (let i = 0; i < 250 && !(existsSync(file) && readFileSync(file, 'utf8').length > before); i++) await sleep(20);
      const lines = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];
      return { [name]: lines.length ? JSON.parse(lines.at(-1)!) : null };
    },
  };
}
