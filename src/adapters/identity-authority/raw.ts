import type { UpstreamOutcome } from './types.ts';

/**
 * Vendors' raw records use their own keys; the normaliser only knows the person record's aliases. Each
 * vendor-only key is copied to its alias, leaving the vendor keys in place for diagnosis.
 */
export function withSpecAliases(record: Record<string, unknown>, aliases: Record<string, string>): Record<string, unknown> {
  const raw: Record<string, unknown> = { ...record };
  for (const [from, to] of Object.entries(aliases)) {
    if (raw[to] === undefined && raw[from] !== undefined) raw[to] = raw[from];
  }
  return raw;
}

/** Some NIN lookups answer without the NIN itself; it is the one we asked for. */
export function withQueriedNin(outcome: UpstreamOutcome, nin: string): UpstreamOutcome {
  if (outcome.kind !== 'found') return outcome;
  const { raw } = outcome;
  const hasNin = ['nin', 'NIN', 'identityNumber'].some((k) => typeof raw[k] === 'string' && raw[k] !== '');
  return hasNin ? outcome : { kind: 'found', raw: { ...raw, nin } };
}
