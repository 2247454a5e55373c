import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A client's own test suite is required where CI is set: a suite that silently does not run proves nothing. */
export const REQUIRED = !!process.env.CI;

/** True when `command args` runs and exits 0 (the toolchain is installed). */
export function toolPresent(command: string, args: string[]): boolean {
  const r = spawnSync(command, args, { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}

/** Runs a command from the repository's root; resolves with its exit code and everything it printed. */
export function runSuite(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
