import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Chaos scenarios (test/chaos/ and a subject's *.chaos.test.ts) run only in vitest.chaos.config.ts.
    exclude: ['test/chaos/**', 'test/**/*.chaos.test.ts', 'node_modules/**'],
    globalSetup: ['test/setup/global.ts'],
    // 90 s: under CI load (two files at once, one of them often driving Chromium) a browser test that
    // takes 8 s alone has taken over 30 s; a timeout is a guard against hangs, never an assertion.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more files at once only makes PostgreSQL, Redis and the stacks fight for CPU.
    maxWorkers: 2,
  },
});
