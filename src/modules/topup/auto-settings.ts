import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { auditFailedPasswordConfirmation, checkCredentials, guardedSignIn, requireAccountsKeeper, type Principal, type SignInDeps } from '../auth/index.ts';
import { requireOrganisation } from '../organisations/index.ts';
import * as repo from './auto.repository.ts';
import type { AutoTopupAnswer, AutoTopupPut } from './auto.schemas.ts';
import { validateTopupUnits } from './pricing.ts';
import { findSavedCard } from './saved-card.ts';

export const API_CLIENTS_REFUSED = 'API clients may not read or change automatic top-up: it is set by a person who re-enters their password';
// 403, not 401: the caller is signed in (a 401 would end the portal's session), and is refused this change.
export const WRONG_PASSWORD = 'Password is incorrect: automatic top-up was not changed';
export const NO_CARD = 'No saved card to charge: top up once by card (the portal\'s Top up page); its card is kept for automatic top-ups';
export const CARD_NOT_REUSABLE = 'The last card used cannot be charged again: top up once with a card the processor keeps (e.g. Visa or Mastercard)';
export const CARD_DECLINED = 'The saved card was declined: top up once with a card that works (it becomes the saved card), then turn automatic top-up on';

/** The organisation's money, in a person's hands: administrators and finance officers, never an API client. */
export function requirePersonAccountsKeeper(p: Principal): number {
  if (p.clientId !== null) throw new AppError('forbidden', API_CLIENTS_REFUSED);
  return requireAccountsKeeper(p);
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

async function answerOf(db: CommonQueryMethods, orgId: number): Promise<AutoTopupAnswer> {
  const [s, card, today, recent] = await Promise.all([repo.findSettings(db, orgId), findSavedCard(db, orgId), repo.chargesToday(db, orgId), repo.recentCharges(db, orgId, 10)]);
  return {
    enabled: s?.enabled ?? false,
    below_units: s?.below_units ?? null,
    units: s?.units ?? null,
    max_per_day: s?.max_per_day ?? null,
    turned_off: s?.turned_off_reason && s.turned_off_at ? { reason: s.turned_off_reason, at: s.turned_off_at.toISOString() } : null,
    card: card
      ? {
          card_type: card.card_type,
          last4: card.last4,
          bank: card.bank,
          exp_month: card.exp_month,
          exp_year: card.exp_year,
          from_reference: card.topup_reference,
          saved_at: card.saved_at.toISOString(),
          declined_at: iso(card.declined_at),
        }
      : null,
    charges_today: today,
    recent_charges: recent.map((c) => ({
      status: c.status,
      units: c.units,
      below_units: c.below_units,
      balance_units: c.balance_units,
      reference: c.reference,
      card: c.card,
      total_amount_kobo: c.total_amount,
      detail: c.detail,
      created_at: c.created_at.toISOString(),
    })),
  };
}

/** GET /settings/auto-topup */
export async function getAutoTopup(deps: { db: DatabasePool }, principal: Principal): Promise<AutoTopupAnswer> {
  return answerOf(deps.db, requirePersonAccountsKeeper(principal));
}

/**
 * PUT /settings/auto-topup: the whole setting, by an administrator or finance officer who re-enters
 * their password (counted as a sign-in attempt, so a stolen session cannot guess it faster than
 * POST /login allows). Turning it on needs a card the processor will charge again. The next debit
 * below the line queues a charge (the trigger on wallets); saving does not charge by itself.
 */
export async function putAutoTopup(
  deps: { db: DatabasePool; clock: Clock; signIn: SignInDeps },
  principal: Principal,
  input: AutoTopupPut,
  address: string,
): Promise<AutoTopupAnswer> {
  const orgId = requirePersonAccountsKeeper(principal);
  const org = await requireOrganisation(deps.db, orgId);
  const invalid = validateTopupUnits(input.units, org.min_topup_units);
  if (invalid) throw new AppError('bad_request', invalid);

  const user = await guardedSignIn(deps.signIn, principal.username, address, async () => {
    const u = await checkCredentials(deps.db, principal.username, input.password);
    return u && u.id === principal.userId ? u : null;
  });
  if (!user) {
    await auditFailedPasswordConfirmation(deps.db, principal, 'auto_topup.settings');
    throw new AppError('forbidden', WRONG_PASSWORD);
  }

  if (input.enabled) {
    const card = await findSavedCard(deps.db, orgId);
    // An organisation that paid, but with no card kept, paid with one the processor will not charge again.
    if (!card) throw new AppError('conflict', (await repo.anyCreditedTopup(deps.db, orgId)) ? CARD_NOT_REUSABLE : NO_CARD);
    if (card.declined_at) throw new AppError('conflict', CARD_DECLINED);
  }
  const values = { enabled: input.enabled, below_units: input.below_units, units: input.units, max_per_day: input.max_per_day };
  await deps.db.transaction(async (tx) => {
    await repo.saveSettings(tx, { orgId, enabled: input.enabled, belowUnits: input.below_units, units: input.units, maxPerDay: input.max_per_day, userId: principal.userId, at: deps.clock.now() });
    await recordAudit(tx, { ...auditContext(principal), action: 'auto_topup.settings_changed', target: `org:${orgId}`, details: values });
  });
  return answerOf(deps.db, orgId);
}
