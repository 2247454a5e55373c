import type { DatabasePool } from 'slonik';
import { ProcessorError, type VerifyStatus } from '../../adapters/payment-processor/paystack.ts';
import { jobIds, type JobResult } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Logger } from '../../lib/logger.ts';
import { recordAudit } from '../audit/index.ts';
import { deliverSoon, queueMail } from '../mail/index.ts';
import { accountKeepers, getOrganisation, lowBalanceRecipients } from '../organisations/index.ts';
import * as repo from './auto.repository.ts';
import { announceSkips, type SkipDeps } from './auto-skipped.ts';
import { failFastOnFinalProcessorError, settleTopup } from './credit.ts';
import type { TopupDeps } from './deps.ts';
import { computeTopupPrice, validateTopupUnits } from './pricing.ts';
import { cardLabel, findSavedCard, markCardDeclined, openSavedCard, type SavedCardRow } from './saved-card.ts';
import * as topups from './topup.repository.ts';
import { pricingRulesFrom } from './topup.service.ts';

export type AutoChargeResult = JobResult<'topup.auto_charge'>;


/**
 * Runs one automatic charge (the `topup.auto_charge` job): a queued charge gets its top-up row and is
 * claimed (one transaction, before the processor hears of the reference, as initialize does), then
 * the saved card is charged and the top-up credited through the same path as a checkout's. Safe to
 * run again: a charge already claimed asks the processor what became of its reference before charging,
 * and the processor refuses a second charge of one reference anyway. Throws a retryable ProcessorError
 * when the processor did not answer (BullMQ tries again; the top-up sweep settles what is left).
 */
export async function runAutoCharge(deps: TopupDeps, chargeId: number, log: Logger): Promise<AutoChargeResult> {
  return failFastOnFinalProcessorError(() => autoCharge(deps, chargeId, log));
}

async function autoCharge(deps: TopupDeps, chargeId: number, log: Logger): Promise<AutoChargeResult> {
  const found = await repo.findCharge(deps.db, chargeId);
  if (!found) return { outcome: 'missing' };
  if (found.status === 'queued') {
    const started = await start(deps, found);
    if (typeof started === 'string') {
      await announceSkips(deps, found.org_id);
      return { outcome: 'skipped', detail: started };
    }
    if (started !== null) return chargeCard(deps, started, log, { rerun: false });
  }
  const current = await repo.findCharge(deps.db, chargeId);
  if (!current || current.status !== 'charging') return { outcome: 'ended', detail: current?.status ?? 'missing' };
  return chargeCard(deps, current, log, { rerun: true });
}

/** Why nothing may be charged now, or null. */
function refusal(c: repo.ChargeRow, s: repo.SettingsRow | null, card: SavedCardRow | null, org: Awaited<ReturnType<typeof getOrganisation>>): string | null {
  if (!org || org.deleted_at) return 'the organisation is retired';
  if (!s?.enabled) return 'automatic top-up was turned off';
  if (!card) return 'no saved card';
  if (card.declined_at) return 'the saved card was declined';
  return validateTopupUnits(c.units, org.min_topup_units);
}

/** The charge claimed with its new top-up; a reason when nothing may be charged (the charge is skipped); null when another run claimed it. */
async function start(deps: TopupDeps, c: repo.ChargeRow): Promise<repo.ChargeRow | string | null> {
  const now = deps.clock.now();
  const [settings, card, org] = await Promise.all([repo.findSettings(deps.db, c.org_id), findSavedCard(deps.db, c.org_id), getOrganisation(deps.db, c.org_id)]);
  const reason = refusal(c, settings, card, org);
  if (reason !== null || !org || !card) {
    const why = reason ?? 'nothing to charge';
    await repo.skipCharge(deps.db, c.id, why, now);
    return why;
  }
  // The price at the organisation's unit price now, computed as initialize computes it.
  const price = computeTopupPrice({ units: c.units, unitCostKobo: org.unit_cost_kobo, tenancy: org.tenancy, affiliate: org.affiliate, now }, pricingRulesFrom(deps.config));
  const reference = topups.newTopupReference(c.org_id);
  return deps.db.transaction(async (tx) => {
    await topups.insertTopup(tx, { reference, orgId: c.org_id, userId: null, apiClientId: null, units: c.units, price, at: now });
    const claimed = await repo.startCharge(tx, { id: c.id, reference, card: cardLabel(card), cardReference: card.topup_reference });
    // Claimed by another run meanwhile: this run's top-up row goes with the rollback.
    if (!claimed) throw new ClaimedElsewhere();
    return claimed;
  }).catch((err: unknown) => {
    if (err instanceof ClaimedElsewhere) return null;
    throw err;
  });
}

class ClaimedElsewhere extends Error {}

async function chargeCard(deps: TopupDeps, c: repo.ChargeRow, log: Logger, o: { rerun: boolean }): Promise<AutoChargeResult> {
  const reference = c.reference!;
  if (o.rerun) {
    // The run before may have charged (its answer lost with it): the processor's word decides.
    const checked = await deps.processor.verify(reference);
    if (checked.status !== 'not_found') return decide(deps, c, checked.status, 'Declined', log);
  }
  const topup = await topups.findTopup(deps.db, reference);
  const card = await findSavedCard(deps.db, c.org_id);
  if (!topup || topup.status !== 'pending') return { outcome: 'ended', detail: topup?.status ?? 'missing' };
  if (!card || card.declined_at) {
    await endWithoutCharge(deps, c, 'no usable saved card');
    return { outcome: 'skipped', detail: 'no usable saved card' };
  }
  const credential = openSavedCard(deps.config.encryptionKeys, card);
  let result;
  try {
    result = await deps.processor.chargeAuthorization({
      authorizationCode: credential.authorizationCode,
      email: credential.email,
      amountKobo: topup.total_amount,
      reference,
      currency: topup.currency,
      metadata: { org: c.org_id, units: c.units, reference, automatic: true },
    });
  } catch (err) {
    if (!(err instanceof ProcessorError) || err.retryable) throw err;
    // The processor knows this reference already (a rerun after a lost answer): ask what it decided.
    if (err.code === 'duplicate_reference') return decide(deps, c, (await deps.processor.verify(reference)).status, 'Declined', log);
    // Refused outright (an authorization it no longer honours, another e-mail): the card cannot be used.
    return declined(deps, c, err.message, log);
  }
  return decide(deps, c, result.status, result.gatewayResponse, log);
}

async function decide(deps: TopupDeps, c: repo.ChargeRow, status: VerifyStatus, reason: string, log: Logger): Promise<AutoChargeResult> {
  if (status === 'success') {
    // The same exactly-once credit as a checkout's (it verifies again, then books the credit, its
    // invoice number and its receipt; the charge is marked credited in that transaction).
    const settled = await settleTopup(deps, c.reference!, 'auto', log);
    return { outcome: settled.result.outcome, reference: c.reference! };
  }
  if (status === 'failed') return declined(deps, c, reason, log);
  // Not decided yet (or reversed at once): the top-up sweep asks the processor again.
  return { outcome: 'pending', reference: c.reference!, detail: status };
}

/** No charge reached the processor: the top-up is closed and the charge ends, so the next debit may queue another. */
async function endWithoutCharge(deps: TopupDeps, c: repo.ChargeRow, detail: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await topups.closeTopup(tx, c.reference!, 'failed', 'not_charged', now);
    await repo.endCharge(tx, { id: c.id, status: 'failed', detail, at: now });
  });
}

/**
 * The card was declined: the charge ends, its top-up is closed, automatic top-up is turned off, the
 * card is not charged again, and the administrators are told, all in one transaction.
 */
async function declined(deps: TopupDeps, c: repo.ChargeRow, reason: string, log: Logger): Promise<AutoChargeResult> {
  const now = deps.clock.now();
  const outboxId = await deps.db.transaction(async (tx) => {
    if (!(await repo.endCharge(tx, { id: c.id, status: 'declined', detail: reason, at: now }))) return null;
    await topups.closeTopup(tx, c.reference!, 'failed', 'failed', now);
    await repo.turnOffForDecline(tx, c.org_id, now);
    if (c.card_reference) await markCardDeclined(tx, c.org_id, c.card_reference, now);
    // A declined charge is an automatic top-up not made: told, as every skipped one is, to the
    // administrators and finance officers (accountKeepers), and to the balance alerts' addresses.
    const [alerts, keepers] = await Promise.all([lowBalanceRecipients(tx, c.org_id), accountKeepers(tx, c.org_id)]);
    const organisation = alerts.organisation;
    const recipients = [...new Set([...alerts.recipients, ...keepers.recipients].map((a) => a.toLowerCase()))];
    const to = recipients.length > 0 ? recipients : [deps.config.MAIL_FALLBACK_TO];
    const id = await queueMail(tx, deps.config, {
      dedupeKey: `auto-topup-declined-${c.id}`,
      to,
      message: { template: 'auto_topup_declined', data: { organisation, units: c.units, below: c.below_units, card: c.card ?? 'saved card', reason } },
    });
    await recordAudit(tx, { orgId: c.org_id, actor: 'system', action: 'auto_topup.declined', target: c.reference!, details: { units: c.units, card: c.card, reason } });
    return id;
  });
  if (outboxId === null) return { outcome: 'ended', detail: 'declined already' };
  deps.metrics.topups.inc({ state: 'auto_declined' });
  log.warn({ orgId: c.org_id, reference: c.reference, chargeId: c.id }, 'automatic top-up declined: turned off, administrators told');
  await deliverSoon(deps.producer, outboxId, log, 'e-mail');
  return { outcome: 'declined', reference: c.reference!, detail: reason };
}

/** After a debit: starts the organisation's queued charge, if the debit queued one (a read of the small in-flight index otherwise). */
export async function queueAutoTopup(deps: SkipDeps, orgId: number): Promise<number> {
  const ids = await repo.queuedChargeIds(deps.db, orgId);
  for (const id of ids) await enqueueCharge(deps.producer, id);
  // The debit may have found the day's charges all made: its trigger recorded a skip to tell of.
  if (ids.length === 0) await announceSkips(deps, orgId);
  return ids.length;
}

// The job id is the charge's: a charge queued twice (a debit's worker and the sweep) runs once.
const enqueueCharge = (producer: Producer, id: number) => producer.enqueue('topup.auto_charge', { chargeId: id }, { jobId: jobIds.autoCharge(id) });

const SWEEP_LIMIT = 100;

/**
 * Part of the top-up sweep, after it settled pending top-ups: ends the charges whose top-up was
 * settled without a credit (a charge that crashed before or after the processor call is settled by
 * that sweep's verify, like any top-up whose webhook never came), gives up on charges no worker
 * started within the hour, and starts those whose job was never queued (a debit outside a worker:
 * an operator's adjustment, a synchronous face match).
 */
export async function sweepAutoCharges(deps: TopupDeps, log: Logger): Promise<{ ended: number; started: number }> {
  const now = deps.clock.now();
  const ended = (await repo.endSettledCharges(deps.db, now)) + (await repo.skipStaleCharges(deps.db, now));
  const ids = await repo.listQueuedCharges(deps.db, SWEEP_LIMIT);
  for (const id of ids) await enqueueCharge(deps.producer, id);
  // Skips told of by nobody (a debit outside a worker, a worker stopped between).
  await announceSkips(deps, null);
  if (ended + ids.length > 0) log.info({ ended, started: ids.length }, 'automatic top-up sweep');
  return { ended, started: ids.length };
}
