import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const processModule = fileURLToPath(new URL('../../src/lib/process.ts', import.meta.url));

// A child process of its own: lowering the test runner's priority would slow every later test.
// It prints its threads' nice values before and after, read from /proc (one line of JSON).
const child = `
import { readdirSync, readFileSync } from 'node:fs';
import { lowerPriority } from ${JSON.stringify(processModule)};
const nices = () => readdirSync('/proc/self/task').map((t) => {
  const stat = readFileSync('/proc/self/task/' + t + '/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
});
// Garbage first, so that V8's worker threads are up and running before the call.
const junk = []; for (let i = 0; i < 200000; i++) junk.push({ i });
const before = nices();
lowerPriority(5);
const after = nices();
console.log(JSON.stringify({ before, after }));
`;

describe.skipIf(!existsSync('/proc/self/task'))('lowerPriority: a face worker yields the CPU with every thread it has', () => {
  it('When a process lowers its priority, then every one of its threads (V8 workers included) runs at the lowered nice value', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8' });
    const { before, after } = JSON.parse(out.trim().split('\n').at(-1)!) as { before: number[]; after: number[] };
    // Several threads (main and V8's workers), all at the starting value before the call.
    expect(before.length).toBeGreaterThan(1);
    const base = before[0]!;
    expect(new Set(before)).toEqual(new Set([base]));
    expect(after).toHaveLength(before.length);
    expect(new Set(after)).toEqual(new Set([Math.min(19, base + 5)]));
  });
});
