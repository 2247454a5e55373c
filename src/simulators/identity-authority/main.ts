import { z } from 'zod';
import { DEFAULT_CONTROL_TOKEN, startIdentitySimulator } from './server.ts';

// Standalone entry point (`npm run sim:identity`); the only file of the simulator that reads the
// environment: the server itself takes options. README.md lists the variables.
const count = z.coerce.number().int().min(0);
const env = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(4010),
    SIM_HOST: z.string().default(''),
    SIM_API_KEY: z.string().default(''),
    // Checked on Prembly (`app-id`) and Dojah (`AppId`) calls when set.
    SIM_APP_ID: z.string().default(''),
    SIM_CONTROL_TOKEN: z.string().min(1).default(DEFAULT_CONTROL_TOKEN),
    SIM_LATENCY_MS: count.default(0),
    // Both or neither: a seeded lognormal latency for valid lookups.
    SIM_LATENCY_MEDIAN_MS: count.default(0),
    SIM_LATENCY_P95_MS: count.default(0),
    SIM_RATE_LIMIT: count.default(0),
    SIM_RATE_WINDOW: z.enum(['bucket', 'sliding']).default('bucket'),
    SIM_MAX_CONCURRENCY: count.default(0),
    SIM_HANG_MS: count.default(60_000),
    SIM_ENTERPRISE_CODE: z.string().regex(/^\d{4,10}$/).default('000000'),
  })
  .refine((e) => (e.SIM_LATENCY_MEDIAN_MS === 0) === (e.SIM_LATENCY_P95_MS === 0) && e.SIM_LATENCY_P95_MS >= e.SIM_LATENCY_MEDIAN_MS, {
    message: 'set together with SIM_LATENCY_MEDIAN_MS, and not below it',
    path: ['SIM_LATENCY_P95_MS'],
  })
  .safeParse(process.env);

if (!env.success) {
  const issue = env.error.issues[0];
  process.stderr.write(`invalid configuration: ${issue?.path.join('.') ?? 'environment'}: ${issue?.message ?? ''}\n`);
  process.exit(78);
}
const e = env.data;

let sim;
try {
  sim = await startIdentitySimulator({
    host: e.SIM_HOST || '127.0.0.1',
    port: e.PORT,
    apiKey: e.SIM_API_KEY || undefined,
    appId: e.SIM_APP_ID || undefined,
    controlToken: e.SIM_CONTROL_TOKEN,
    latencyMs: e.SIM_LATENCY_MS,
    latency: e.SIM_LATENCY_MEDIAN_MS > 0 ? { medianMs: e.SIM_LATENCY_MEDIAN_MS, p95Ms: e.SIM_LATENCY_P95_MS } : null,
    rateLimit: e.SIM_RATE_LIMIT,
    rateWindow: e.SIM_RATE_WINDOW,
    maxConcurrency: e.SIM_MAX_CONCURRENCY,
    hangMs: e.SIM_HANG_MS,
    enterpriseCode: e.SIM_ENTERPRISE_CODE,
  });
} catch (err) {
  process.stderr.write(`invalid configuration: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(78);
}
process.stdout.write(`identity-authority simulator listening on ${sim.url}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void sim.close().then(() => process.exit(0));
  });
}
