import { defineConfig } from 'vitest/config';

// Slow reliability scenarios (Redis/PostgreSQL cut off, workers killed under load): `npm run test:chaos`.
export default defineConfig({
  test: {
    // test/chaos/ holds the general scenarios; a subject's own sit beside its other tests as *.chaos.test.ts
    // (test/webhooks/).
    include: ['test/chaos/**/*.test.ts', 'test/**/*.chaos.test.ts'],
    globalSetup: ['test/setup/global.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    passWithNoTests: false,
  },
});
