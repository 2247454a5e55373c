import { createHash } from 'node:crypto';

/**
 * Per-query latency drawn from a lognormal distribution. The draw is seeded by the query itself,
 * so the same NIN (phone, demographic query) takes the same time on every call, every run and
 * every machine, and a benchmark can tell which of its calls were meant to be slow.
 */
export interface LatencyDistribution {
  medianMs: number;
  p95Ms: number;
}

// The standard normal's 95th percentile: p95 = median * exp(sigma * Z95).
const Z95 = 1.6448536269514722;

/** A standard normal deviate from two uniforms taken from SHA-256 of the seed (Box-Muller). */
function seededNormal(seed: string): number {
  const h = createHash('sha256').update(`latency:${seed}`).digest();
  // +1 keeps u1 above 0 so the logarithm stays finite.
  const u1 = (h.readUInt32LE(0) + 1) / 4294967297;
  const u2 = h.readUInt32LE(4) / 4294967296;
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** Whole milliseconds; the seed names the query, e.g. `nin:12345678901`. */
export function latencyFor(seed: string, d: LatencyDistribution): number {
  const mu = Math.log(d.medianMs);
  const sigma = (Math.log(d.p95Ms) - mu) / Z95;
  return Math.round(Math.exp(mu + sigma * seededNormal(seed)));
}
