import { startIdentitySimulator } from './server.ts';

// The only file of the simulator that reads the environment: the server itself takes options.
function intFromEnv(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`${name} must be a non-negative integer\n`);
    process.exit(1);
  }
  return n;
}

const sim = await startIdentitySimulator({
  host: process.env.SIM_HOST || '127.0.0.1',
  port: intFromEnv('PORT', 4010),
  latencyMs: intFromEnv('SIM_LATENCY_MS', 0),
  apiKey: process.env.SIM_API_KEY || undefined,
});
process.stdout.write(`identity-authority simulator listening on ${sim.url}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void sim.close().then(() => process.exit(0));
  });
}
