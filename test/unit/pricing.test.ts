import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bonusUnits,
  computeTopupPrice,
  defaultPricingRules,
  grossUpForProcessorFee,
  processorFee,
  validateTopupUnits,
  type TopupPriceInput,
} from '../../src/modules/topup/pricing.ts';
import { loyaltyBadge } from '../../src/modules/organisations/index.ts';

const rules = defaultPricingRules;
const fee = (t: number): number => processorFee(t, rules.processorFee);
const settled = (t: number): number => t - fee(t);
const THRESHOLD = rules.processorFee.flatWaivedUnderKobo;

function input(over: Partial<TopupPriceInput> = {}): TopupPriceInput {
  return { units: 100, unitCostKobo: 10_000, tenancy: 'hosted', affiliate: false, now: new Date('2026-01-10T10:00:00Z'), ...over };
}

/** The charge is enough, and one kobo less is not (nor is any charge on the cheaper side of the threshold). */
function expectMinimalCharge(net: number, total: number): void {
  expect(settled(total)).toBeGreaterThanOrEqual(net);
  expect(settled(total - 1)).toBeLessThan(net);
  if (total > THRESHOLD) expect(settled(THRESHOLD - 1)).toBeLessThan(net);
}

/**
 * Brute-force oracle: scanning charges upwards from `from`, the first charge that settles each net.
 * Exact for nets above settled(from - 1) when settled() is non-decreasing from `from` onwards, or
 * for every net when from is 0.
 */
function firstChargeByNet(from: number, to: number): (net: number) => number | undefined {
  const base = Math.max(settled(from - 1) + 1, 0);
  const first = new Float64Array(Math.max(settled(to) - base + 1, 0)).fill(Number.NaN);
  let best = base - 1;
  for (let t = from; t <= to; t++) {
    const g = settled(t);
    for (let v = best + 1; v <= g; v++) first[v - base] = t;
    best = Math.max(best, g);
  }
  return (net) => {
    const t = first[net - base];
    return t === undefined || Number.isNaN(t) ? undefined : t;
  };
}

/** Nets in [lo, hi] whose computed charge differs from the oracle's, as `net: got != want`. */
function mismatches(lo: number, hi: number, oracle: (net: number) => number | undefined): string[] {
  const out: string[] = [];
  for (let net = lo; net <= hi && out.length < 5; net++) {
    const got = grossUpForProcessorFee(net, rules.processorFee);
    const want = oracle(net);
    if (got !== want) out.push(`${net}: ${got} != ${want}`);
  }
  return out;
}

describe('processorFee', () => {
  it('When the charge is under NGN 2,500, then only the 1.5% applies', () => {
    expect(fee(10_000)).toBe(150);
    expect(fee(249_999)).toBe(3750);
  });
  it('When the charge reaches NGN 2,500, then the NGN 100 flat fee is added', () => {
    expect(fee(250_000)).toBe(3750 + 10_000);
  });
  it('When 1.5% + NGN 100 would exceed NGN 2,000, then the fee is capped', () => {
    expect(fee(12_666_600)).toBe(199_999);
    expect(fee(12_666_667)).toBe(200_000);
    expect(fee(1_000_000_000)).toBe(200_000);
  });
  it('When the percentage is fractional, then it is rounded up', () => {
    expect(fee(101)).toBe(2);
  });
});

describe('computeTopupPrice', () => {
  it('When 100 units at NGN 100 are bought, then base, VAT and the grossed-up charge add up', () => {
    const p = computeTopupPrice(input(), rules);
    expect(p).toEqual({
      base_amount: 1_000_000,
      vat_amount: 75_000,
      service_charge: 26_523,
      total_amount: 1_101_523,
      units: 100,
      unit_cost: 10_000,
      bonus_units: 0,
      discount: null,
    });
    expect(p.total_amount).toBe(p.base_amount + p.vat_amount + p.service_charge);
    expectMinimalCharge(p.base_amount + p.vat_amount, p.total_amount);
  });

  it('When the amounts are tiny, then VAT rounds half up and the charge still covers the fee', () => {
    const p = computeTopupPrice(input({ unitCostKobo: 1 }), rules);
    expect(p.base_amount).toBe(100);
    expect(p.vat_amount).toBe(8);
    expect(p.total_amount).toBe(110);
    expect(p.service_charge).toBe(2);
    expectMinimalCharge(108, 110);
  });

  it('When the unit cost is zero, then nothing is charged', () => {
    const p = computeTopupPrice(input({ unitCostKobo: 0 }), rules);
    expect([p.base_amount, p.vat_amount, p.service_charge, p.total_amount]).toEqual([0, 0, 0, 0]);
  });

  it('When the amount is large, then the service charge is the NGN 2,000 cap', () => {
    const p = computeTopupPrice(input({ units: 1_000_000 }), rules);
    expect(p.base_amount).toBe(10_000_000_000);
    expect(p.vat_amount).toBe(750_000_000);
    expect(p.service_charge).toBe(200_000);
    expectMinimalCharge(p.base_amount + p.vat_amount, p.total_amount);
  });

  it('When units or unit cost are not integers, then it refuses', () => {
    expect(() => computeTopupPrice(input({ units: 0 }), rules)).toThrow(RangeError);
    expect(() => computeTopupPrice(input({ unitCostKobo: 1.5 }), rules)).toThrow(RangeError);
  });

  it('When any price is computed, then every amount is an integer and the total is minimal', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 0, max: 50_000 }), (hundreds, unitCostKobo) => {
        const p = computeTopupPrice(input({ units: hundreds * 100, unitCostKobo }), rules);
        for (const v of [p.base_amount, p.vat_amount, p.service_charge, p.total_amount]) expect(Number.isSafeInteger(v)).toBe(true);
        expect(p.total_amount).toBe(p.base_amount + p.vat_amount + p.service_charge);
        if (p.total_amount > 0) expectMinimalCharge(p.base_amount + p.vat_amount, p.total_amount);
      }),
      { numRuns: 500 },
    );
  });
});

describe('grossUpForProcessorFee', () => {
  it('When the net is just under what NGN 2,499.99 settles, then the charge stays under the waiver threshold', () => {
    // NGN 2,500 settles only 236,250 kobo, so every net in (236,250, 246,249] is cheaper below it.
    expect(settled(THRESHOLD - 1)).toBe(246_249);
    expect(settled(THRESHOLD)).toBe(236_250);
    expect(grossUpForProcessorFee(246_249, rules.processorFee)).toBe(249_999);
    expect(grossUpForProcessorFee(240_000, rules.processorFee)).toBe(243_655);
    expect(grossUpForProcessorFee(236_250, rules.processorFee)).toBeLessThan(THRESHOLD);
  });

  it('When the net is one kobo more than the waiver side can settle, then the charge jumps past the threshold', () => {
    const total = grossUpForProcessorFee(246_250, rules.processorFee);
    expect(total).toBe(260_153);
    expectMinimalCharge(246_250, total);
  });

  it('When every net up to past the waiver threshold is tried, then each charge is the brute-force minimum', () => {
    expect(mismatches(0, 255_000, firstChargeByNet(0, 270_000))).toEqual([]);
  });

  it('When every net around the start of the cap is tried, then each charge is the brute-force minimum', () => {
    // Above the threshold settled() is non-decreasing, so a scan from here is an exact oracle.
    const from = 12_600_000;
    const lo = settled(from - 1) + 1;
    expect(lo).toBeLessThan(12_466_666); // the first net whose charge is capped
    expect(mismatches(lo, lo + 150_000, firstChargeByNet(from, 12_760_000))).toEqual([]);
    // Once capped, the charge is exactly net + cap.
    expect(grossUpForProcessorFee(13_000_000, rules.processorFee)).toBe(13_200_000);
  });

  it('When the rules change, then the search follows them', () => {
    const rule = { bps: 290, flatKobo: 5_000, flatWaivedUnderKobo: 0, capKobo: 1_000_000 };
    for (const net of [1, 99, 10_000, 1_234_567, 99_999_999]) {
      const t = grossUpForProcessorFee(net, rule);
      expect(t - processorFee(t, rule)).toBeGreaterThanOrEqual(net);
      expect(t - 1 - processorFee(t - 1, rule)).toBeLessThan(net);
    }
  });
});

describe('validateTopupUnits', () => {
  it('When units are not a positive integer multiple of 100, then it names the problem', () => {
    for (const u of [0, -100, 150, 100.5, Number.NaN, Number.POSITIVE_INFINITY, 1e21]) {
      expect(validateTopupUnits(u, 100)).toBe('units must be a positive integer multiple of 100');
    }
  });
  it('When units are below the plan minimum, then it says so with the minimum', () => {
    expect(validateTopupUnits(400, 500)).toBe('units is below the plan minimum of 500 units');
  });
  it('When units are valid, then there is no detail', () => {
    expect(validateTopupUnits(500, 500)).toBeNull();
    expect(validateTopupUnits(100_000, 500)).toBeNull();
  });
});

describe('bonusUnits', () => {
  const hostedAffiliate = (units: number, now: string) => ({ units, tenancy: 'hosted' as const, affiliate: true, now: new Date(now) });

  it('When a hosted affiliate tops up on 14 or 15 June 2026 Lagos time, then the bonus applies', () => {
    expect(bonusUnits(hostedAffiliate(5000, '2026-06-14T12:00:00+01:00'), rules)).toBe(30);
    expect(bonusUnits(hostedAffiliate(5000, '2026-06-15T00:00:00+01:00'), rules)).toBe(30);
    expect(bonusUnits(hostedAffiliate(5000, '2026-06-15T23:59:59.999+01:00'), rules)).toBe(30);
  });

  it('When it is already 16 June in Lagos but still 15 June in UTC, then the bonus has ended', () => {
    expect(bonusUnits(hostedAffiliate(5000, '2026-06-15T23:00:00Z'), rules)).toBe(0);
    expect(bonusUnits(hostedAffiliate(5000, '2026-06-16T12:00:00+01:00'), rules)).toBe(0);
  });

  it('When the units sit on tier edges, then the matching tier applies', () => {
    const at = '2026-06-01T10:00:00+01:00';
    const cases: [number, number][] = [
      [4900, 0],
      [5000, 30],
      [6900, 30],
      [6999, 30],
      [7000, 50],
      [9900, 50],
      [9999, 50],
      [10_000, 100],
      [1_000_000, 100],
    ];
    for (const [units, bonus] of cases) expect(bonusUnits(hostedAffiliate(units, at), rules), `units ${units}`).toBe(bonus);
  });

  it('When the tenant is self-hosted or not an affiliate, then there is never a bonus', () => {
    const now = new Date('2026-06-01T10:00:00+01:00');
    expect(bonusUnits({ units: 10_000, tenancy: 'self-hosted', affiliate: true, now }, rules)).toBe(0);
    expect(bonusUnits({ units: 10_000, tenancy: 'hosted', affiliate: false, now }, rules)).toBe(0);
  });

  it('When a price is computed for a qualifying top-up, then it carries the bonus and charges only the paid units', () => {
    const p = computeTopupPrice(input({ units: 7000, affiliate: true, now: new Date('2026-06-15T20:00:00+01:00') }), rules);
    expect(p.bonus_units).toBe(50);
    expect(p.base_amount).toBe(7000 * 10_000);
  });
});

describe('loyaltyBadge', () => {
  it('When a self-hosted tenant crosses 20k, 30k and 50k lifetime units, then it earns silver, gold and diamond', () => {
    const cases: [number, string | null][] = [
      [0, null],
      [19_999, null],
      [20_000, 'silver'],
      [29_999, 'silver'],
      [30_000, 'gold'],
      [49_999, 'gold'],
      [50_000, 'diamond'],
      [5_000_000, 'diamond'],
    ];
    for (const [units, badge] of cases) expect(loyaltyBadge('self-hosted', units), `units ${units}`).toBe(badge);
  });
  it('When the tenant is hosted, then it never has a badge', () => {
    expect(loyaltyBadge('hosted', 60_000)).toBeNull();
  });
});
