import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run, toolchain } from './helpers.ts';

// The Java client's own suite: test.sh compiles it with javac against Jackson (Debian's jars) and runs its
// main-based runner (signatures of both webhook schemes, rotation, tampering, old timestamps, error
// mapping, the token's renewal against the JDK's HttpServer). No Maven: nothing downloads.
const DIR = fileURLToPath(new URL('../../clients/java', import.meta.url));
const javac = toolchain('javac', ['-version']);

describe.skipIf(!javac.present)('Java client', () => {
  it('When its test runner is compiled with javac and run, then every test passes', { timeout: 300_000 }, () => {
    const r = run('bash', ['test.sh'], DIR);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toMatch(/\b\d+ tests, 0 failed/);
  });
});
