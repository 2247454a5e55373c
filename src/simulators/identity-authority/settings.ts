import { z } from 'zod';

/**
 * What the simulator's behaviour can be set to, at start and at run time. One schema serves the
 * options, configure() and the control API, so all three refuse the same values.
 */
const distribution = z
  .object({ medianMs: z.number().positive(), p95Ms: z.number().positive() })
  .strict()
  .refine((d) => d.p95Ms >= d.medianMs, 'p95Ms must not be below medianMs');

export const settingsPatchSchema = z
  .object({
    /** Fixed delay before every answer; for valid lookups `latency` wins when set. */
    latencyMs: z.number().int().min(0),
    /** Lognormal per-query delay of valid lookups; null turns it off. */
    latency: distribution.nullable(),
    /** Lookups admitted per second per API key; 0: no limit. */
    rateLimit: z.number().int().min(0),
    rateWindow: z.enum(['bucket', 'sliding']),
    /** Lookups in flight per API key; 0: no cap. */
    maxConcurrency: z.number().int().min(0),
    /** How long NINs starting 5002 are held before a 504. */
    hangMs: z.number().int().min(0),
  })
  .strict()
  .partial();

export type SettingsPatch = z.input<typeof settingsPatchSchema>;
export type SimSettings = Required<z.output<typeof settingsPatchSchema>>;

export const DEFAULT_SETTINGS: SimSettings = {
  latencyMs: 0,
  latency: null,
  rateLimit: 0,
  rateWindow: 'bucket',
  maxConcurrency: 0,
  hangMs: 60_000,
};

/** Throws a ZodError naming the offending field. */
export function applyPatch(current: SimSettings, patch: unknown): SimSettings {
  const parsed = settingsPatchSchema.parse(patch);
  const next: SimSettings = { ...current };
  for (const [key, value] of Object.entries(parsed)) {
    if (value !== undefined) Object.assign(next, { [key]: value });
  }
  return next;
}

export const outageSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.enum(['503', 'hang']), forMs: z.number().int().positive() }).strict(),
  z.object({ mode: z.literal('none') }).strict(),
]);

export type OutageRequest = z.input<typeof outageSchema>;
