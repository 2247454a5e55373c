import type { UpstreamOutcome, VninRefusal } from './types.ts';

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

/**
 * Which of the four vNIN refusals a dialect's not-found message names (each simulator dialect's
 * wording is listed in its README; the providers word theirs alike). Anything else is an unknown token.
 */
export function vninRefusal(message: unknown): VninRefusal {
  const m = typeof message === 'string' ? message : '';
  if (/expired/i.test(m)) return 'vnin_expired';
  if (/enterprise/i.test(m)) return 'vnin_wrong_enterprise';
  if (/\bused\b/i.test(m)) return 'vnin_used';
  return 'vnin_not_found';
}

/**
 * A vNIN answer with the token taken out (some providers echo it): the token must reach no record,
 * log or store. The NIN stays only when the authority gave it.
 */
export function withoutToken(outcome: UpstreamOutcome, message?: unknown): UpstreamOutcome {
  if (outcome.kind === 'not_found') return { kind: 'not_found', refusal: vninRefusal(message) };
  const { vnin: _vnin, VNIN: _upper, virtual_nin: _virtual, ...raw } = outcome.raw;
  return { kind: 'found', raw };
}
