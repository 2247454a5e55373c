import { expect, it } from 'vitest';
import { lookupWaitMs, shutdownDeadlineMs } from '../../src/jobs/budgets.ts';
import { testConfig } from '../setup/harness.ts';

it("When a process stops, then the API's deadline is its grace for requests plus 5 s, and a worker's outlasts its longest job (a face match's lookup) by 5 s", () => {
  const config = testConfig({});
  expect(shutdownDeadlineMs(config, 'api')).toBe(config.SHUTDOWN_GRACE_MS + 5000);
  expect(shutdownDeadlineMs(config, 'worker')).toBe(Math.max(config.SHUTDOWN_GRACE_MS, lookupWaitMs(config, true), config.WEBHOOK_TIMEOUT_MS, 2 * config.PAYSTACK_TIMEOUT_MS) + 5000);
  expect(shutdownDeadlineMs(config, 'worker')).toBeGreaterThanOrEqual(lookupWaitMs(config, true) + 5000);
  // A longer webhook timeout lengthens a worker's stop, never the API's.
  const slowHooks = testConfig({ WEBHOOK_TIMEOUT_MS: '60000' });
  expect(shutdownDeadlineMs(slowHooks, 'worker')).toBe(65_000);
  expect(shutdownDeadlineMs(slowHooks, 'api')).toBe(shutdownDeadlineMs(config, 'api'));
});
