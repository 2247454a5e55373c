import type { Tenancy } from './organisations.schemas.ts';

export type LoyaltyBadge = 'silver' | 'gold' | 'diamond';

/** Highest first, so the first threshold reached is the badge. */
export const LOYALTY_THRESHOLDS: readonly { badge: LoyaltyBadge; minLifetimeUnits: number }[] = Object.freeze([
  { badge: 'diamond', minLifetimeUnits: 50_000 },
  { badge: 'gold', minLifetimeUnits: 30_000 },
  { badge: 'silver', minLifetimeUnits: 20_000 },
]);

/** The badge for a tenant's lifetime purchased units; hosted tenants never get one. */
export function loyaltyBadge(tenancy: Tenancy, lifetimeUnits: number): LoyaltyBadge | null {
  if (tenancy !== 'self-hosted') return null;
  return LOYALTY_THRESHOLDS.find((t) => lifetimeUnits >= t.minLifetimeUnits)?.badge ?? null;
}
