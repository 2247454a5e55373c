import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run, toolchain } from './helpers.ts';

// The PHP client's own suite (tests/run.php: signatures of both webhook schemes, rotation, tampering, old
// timestamps, error mapping, the token's renewal), run with the machine's PHP (8.1+ with curl).
const DIR = fileURLToPath(new URL('../../clients/php', import.meta.url));
const php = toolchain('php', ['-r', 'exit(PHP_VERSION_ID >= 80100 && function_exists("curl_init") ? 0 : 1);']);

describe.skipIf(!php.present)('PHP client', () => {
  it('When its own test script runs with php, then every test passes', () => {
    const r = run('php', ['tests/run.php'], DIR);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toMatch(/\b\d+ tests, 0 failed/);
  });

  it('When every source file is linted with php -l, then none has a syntax error', () => {
    const files = ['autoload.php', 'examples/walk.php', ...readdirSync(`${DIR}/src`).filter((f) => f.endsWith('.php')).map((f) => `src/${f}`)];
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const r = run('php', ['-l', file], DIR);
      expect(r.status, r.output).toBe(0);
    }
  });
});
