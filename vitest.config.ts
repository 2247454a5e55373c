import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/chaos/**', 'node_modules/**'],
    globalSetup: ['test/setup/global.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more files at once only makes PostgreSQL, Redis and the stacks fight for CPU.
    maxWorkers: 2,
  },
});
