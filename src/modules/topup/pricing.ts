/**
 * Commercial rules of a wallet top-up. Pure functions of their inputs and the rules: no clock, no
 * configuration read, no I/O, so that the price a payer is shown and the price a test asserts are the
 * same computation. Every amount is integer kobo (NGN); every rate is in basis points (1 bp = 0.01 %).
 */
import type { TopupPrice } from './topup.schemas.ts';

/** Every price and top-up is in naira (amounts in kobo). */
export const CURRENCY = 'NGN';

export type Tenancy = 'hosted' | 'self-hosted';

/** Inclusive `min`..`max` range of requested units; no `max` means open-ended. */
export type BonusTier = { min: number; max?: number | undefined; bonus: number };

export type ProcessorFeeRule = {
  /** Percentage part of the processor's fee, in basis points of the charged amount. */
  bps: number;
  /** Flat part of the fee, in kobo. */
  flatKobo: number;
  /** The flat part is waived when the charged amount is strictly below this, in kobo. */
  flatWaivedUnderKobo: number;
  /** The whole fee never exceeds this, in kobo. */
  capKobo: number;
};

export type PricingRules = {
  vatBps: number;
  processorFee: ProcessorFeeRule;
  bonusTiers: readonly BonusTier[];
  /** Last calendar day (YYYY-MM-DD, Africa/Lagos) on which a top-up still earns bonus units. */
  bonusEndDate: string;
};

export type TopupPriceInput = {
  units: number;
  unitCostKobo: number;
  tenancy: Tenancy;
  affiliate: boolean;
  now: Date;
};


/** Paystack's published local-card pricing (1.5 % + NGN 100, NGN 100 waived under NGN 2,500, capped at NGN 2,000), VAT 7.5 %. */
export const defaultPricingRules: PricingRules = Object.freeze({
  vatBps: 750,
  processorFee: Object.freeze({ bps: 150, flatKobo: 10_000, flatWaivedUnderKobo: 250_000, capKobo: 200_000 }),
  bonusTiers: Object.freeze([
    { min: 5000, max: 6999, bonus: 30 },
    { min: 7000, max: 9999, bonus: 50 },
    { min: 10000, bonus: 100 },
  ]),
  bonusEndDate: '2026-06-15',
});

const BPS = 10_000;
// Africa/Lagos has been UTC+1 all year since 1919 (no daylight saving), so a fixed offset is exact.
const LAGOS_OFFSET = '+01:00';
const DAY_MS = 86_400_000;

function ceilDiv(a: number, b: number): number {
  return Math.floor((a + b - 1) / b);
}

/** One payment link buys at most this many units (NGN 100 million at the default unit cost). */
export const MAX_TOPUP_UNITS = 1_000_000;

/** Returns the 400 detail for an invalid `units`, or null when the request is acceptable. */
export function validateTopupUnits(units: number, minUnits: number): string | null {
  if (!Number.isSafeInteger(units) || units <= 0 || units % 100 !== 0) {
    return 'units must be a positive integer multiple of 100';
  }
  if (units > MAX_TOPUP_UNITS) return `units must be at most ${MAX_TOPUP_UNITS} per top-up`;
  if (units < minUnits) return `units is below the plan minimum of ${minUnits} units`;
  return null;
}

/**
 * What the processor keeps out of a charge of `amountKobo`. The percentage is rounded up: if the
 * processor rounds to nearest instead, we receive at most one kobo more than needed, never less.
 */
export function processorFee(amountKobo: number, rule: ProcessorFeeRule): number {
  const percent = ceilDiv(amountKobo * rule.bps, BPS);
  const flat = amountKobo < rule.flatWaivedUnderKobo ? 0 : rule.flatKobo;
  return Math.min(rule.capKobo, percent + flat);
}

/**
 * Smallest charge T such that T - fee(T) >= netKobo, i.e. what the payer must be charged so that we
 * still settle `netKobo` after the processor takes its fee out of T.
 *
 * Why a search and not the textbook T = (net + flat) / (1 - rate): net(T) = T - fee(T) is not
 * monotonic. It is non-decreasing on each side of the waiver threshold (T - ceil(rT) and T - cap
 * both are, and T - min(cap, x) = max(T - cap, T - x)), but at the threshold the flat fee starts and
 * net(T) drops by up to `flat`: a charge of NGN 2,499.99 settles NGN 2,462.49 while NGN 2,500 settles
 * only NGN 2,362.50. So for a net between those two the cheapest charge sits *below* the threshold,
 * while the closed form (which assumes the flat fee) would put it above. Rounding of the percentage and the cap add
 * two more kinks. Binary search on each monotone side is exact in integer kobo: try the side below
 * the threshold first (its charges are all smaller), then the side from the threshold on, whose
 * upper bound is where either the cap (T = net + cap) or the uncapped rate certainly suffices.
 */
export function grossUpForProcessorFee(netKobo: number, rule: ProcessorFeeRule): number {
  if (!Number.isSafeInteger(netKobo) || netKobo < 0) throw new RangeError('netKobo must be a non-negative integer');
  if (rule.bps >= BPS) throw new RangeError('processor fee rate must be below 100%');
  const settles = (t: number): boolean => t - processorFee(t, rule) >= netKobo;

  // No charge can settle more than itself, so netKobo is a lower bound on every side.
  const belowEnd = rule.flatWaivedUnderKobo - 1;
  if (netKobo <= belowEnd && settles(belowEnd)) return smallestSettling(netKobo, belowEnd, settles);

  const lo = Math.max(netKobo, rule.flatWaivedUnderKobo);
  // T >= (net + flat + 1) / (1 - rate) settles even without the cap (the +1 absorbs the rounding up).
  const uncapped = ceilDiv((netKobo + rule.flatKobo + 1) * BPS, BPS - rule.bps);
  const hi = Math.max(lo, Math.min(uncapped, netKobo + rule.capKobo));
  return smallestSettling(lo, hi, settles);
}

/** Binary search on [lo, hi] for the first t with settles(t), given settles(hi) and monotonicity. */
function smallestSettling(lo: number, hi: number, settles: (t: number) => boolean): number {
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (settles(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Bonus units a top-up earns; hosted affiliate tenants only, up to and including the Lagos end date. */
export function bonusUnits(input: Pick<TopupPriceInput, 'units' | 'tenancy' | 'affiliate' | 'now'>, rules: PricingRules): number {
  if (input.tenancy !== 'hosted' || !input.affiliate) return 0;
  const endsBefore = Date.parse(`${rules.bonusEndDate}T00:00:00${LAGOS_OFFSET}`) + DAY_MS;
  if (Number.isNaN(endsBefore)) throw new RangeError('bonusEndDate must be YYYY-MM-DD');
  if (input.now.getTime() >= endsBefore) return 0;
  const tier = rules.bonusTiers.find((t) => input.units >= t.min && (t.max === undefined || input.units <= t.max));
  return tier?.bonus ?? 0;
}

/**
 * The price of a top-up. VAT is on the base only and the service charge passes the processor's fee
 * through, so base_amount is exactly what we earn and what we settle equals base + VAT.
 */
export function computeTopupPrice(input: TopupPriceInput, rules: PricingRules): TopupPrice {
  if (!Number.isSafeInteger(input.units) || input.units <= 0) throw new RangeError('units must be a positive integer');
  if (!Number.isSafeInteger(input.unitCostKobo) || input.unitCostKobo < 0) throw new RangeError('unitCostKobo must be a non-negative integer');
  const base = input.units * input.unitCostKobo;
  if (!Number.isSafeInteger(base * rules.vatBps)) throw new RangeError('top-up amount out of range');
  // Half-up rounding of base * rate, done in integers.
  const vat = Math.floor((base * rules.vatBps + BPS / 2) / BPS);
  const total = grossUpForProcessorFee(base + vat, rules.processorFee);
  return {
    base_amount: base,
    vat_amount: vat,
    service_charge: total - base - vat,
    total_amount: total,
    units: input.units,
    unit_cost: input.unitCostKobo,
    discount: null,
    bonus_units: bonusUnits(input, rules),
  };
}
