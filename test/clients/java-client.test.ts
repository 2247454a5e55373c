import { describe, expect, it } from 'vitest';
import { REQUIRED, runSuite, toolPresent } from './language-suite.ts';

// The Java client's own suite (clients/java/test.sh compiles it with javac against Jackson and runs its
// main-based runner: signatures of both webhook schemes, error mapping, the token's renewal). Without a JDK
// it is skipped on a developer's machine, failed in CI.
const present = toolPresent('javac', ['-version']) && toolPresent('java', ['-version']);

describe.skipIf(!present && !REQUIRED)('the Java client', () => {
  it('When its own test runner is compiled with javac and run, then every test passes', { timeout: 300_000 }, async () => {
    if (!present) throw new Error('a JDK (javac and java, 17+) is required for the Java client tests');
    const { code, output } = await runSuite('bash', ['clients/java/test.sh']);
    expect(code, output).toBe(0);
    expect(output).toMatch(/\b\d+ tests, 0 failed/);
  });
});
