import { z } from 'zod';
import { bool, port } from './lib/env-values.ts';

/**
 * The sandbox's own switches: where `npm start` opens its simulators and mail sink, how the built-in
 * identity simulator behaves, the demo seed, and the benchmark's inline lookup. None of them means
 * anything to a real deployment, so the production schema (config.ts) does not hold them: loadConfig
 * parses this schema only where the sandbox runs (a built-in simulator stands in for an upstream, or
 * every upstream is a local one on a stack that is not real) and hands it on as `config.sandboxSwitches`;
 * everywhere else it is null and none of these variables is read. docs/configuration.md lists them
 * under their own heading, from the descriptions below (`npm run docs`).
 */
export const sandboxSchema = z
  .object({
    IDENTITY_SIM_PORT: port.default(4010).describe('where `npm start` runs the built-in identity simulator (and where the API and workers look for it while `IDENTITY_BASE_URL` is empty)'),
    PAYSTACK_SIM_PORT: port.default(4020).describe('where `npm start` runs the built-in payment simulator (and where the API, workers and CLI look for it while `PAYSTACK_BASE_URL` is empty)'),
    SANDBOX_SMTP_PORT: port.default(4025).describe('`npm start`\'s mail sink with `SMTP_URL` empty (its e-mails are read at the identity simulator\'s `/sandbox/mail`); `0` picks a free port'),
    IDENTITY_SIM_LATENCY_MS: z.coerce.number().int().min(0).default(0).describe('built-in identity simulator: a fixed delay before every answer'),
    IDENTITY_SIM_LATENCY_MEDIAN_MS: z.coerce.number().int().min(0).default(0).describe('built-in identity simulator: the median of a lognormal latency seeded per NIN, as the real authority behaves (set with `IDENTITY_SIM_LATENCY_P95_MS`; for lookups it wins over the fixed latency); `0`: off'),
    IDENTITY_SIM_LATENCY_P95_MS: z.coerce.number().int().min(0).default(0).describe('built-in identity simulator: the 95th percentile of that latency, set together with the median and not below it'),
    IDENTITY_SIM_RATE_LIMIT: z.coerce.number().int().min(0).default(0).describe('built-in identity simulator: calls per second per API key before it answers 429 (`0`: none)'),
    IDENTITY_SIM_MAX_CONCURRENCY: z.coerce.number().int().min(0).default(0).describe('built-in identity simulator: calls in flight per API key before it answers 429 (`0`: none)'),
    SANDBOX_SEED: bool.default(true).describe('`npm start` creates the demo organisation and its two users on the first start of a sandbox (a built-in simulator standing in), printing their passwords once'),
    LOOKUP_INLINE: bool
      .default(false)
      .describe(
        'benchmarks only, the yardstick of the live path: run each live lookup in the API process instead of through the queue (same admission, limits, hold and capture; one API process, no worker; the authority\'s concurrency becomes an in-process limit of `min(LOOKUP_CONCURRENCY, IDENTITY_MAX_CONCURRENCY)`). Refused on a real stack, `NODE_ENV=production` included',
      ),
  })
  .superRefine((c, ctx) => {
    const median = c.IDENTITY_SIM_LATENCY_MEDIAN_MS;
    const p95 = c.IDENTITY_SIM_LATENCY_P95_MS;
    if ((median === 0) !== (p95 === 0) || p95 < median) ctx.addIssue({ code: 'custom', path: ['IDENTITY_SIM_LATENCY_P95_MS'], message: 'set together with IDENTITY_SIM_LATENCY_MEDIAN_MS, and not below it' });
  });

export type SandboxConfig = z.infer<typeof sandboxSchema>;
