import { describe, expect, it } from 'vitest';
import { REQUIRED, runSuite, toolPresent } from './language-suite.ts';

// The PHP client's own suite (clients/php/tests/run.php: signatures of both webhook schemes, error mapping,
// the token's renewal). Without php and its curl extension it is skipped on a developer's machine, failed in CI.
const present = toolPresent('php', ['-r', 'exit(PHP_VERSION_ID >= 80100 && function_exists("curl_init") ? 0 : 1);']);

describe.skipIf(!present && !REQUIRED)('the PHP client', () => {
  it('When its own test script runs with php, then every test passes', async () => {
    if (!present) throw new Error('php 8.1+ with the curl extension is required for the PHP client tests');
    const { code, output } = await runSuite('php', ['clients/php/tests/run.php']);
    expect(code, output).toBe(0);
    expect(output).toMatch(/\b\d+ tests, 0 failed/);
  });
});
