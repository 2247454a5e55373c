import { UnrecoverableError } from 'bullmq';
import type { DatabasePool } from 'slonik';
import { ProcessorError, type VerifyResult, type VerifyStatus } from '../../adapters/payment-processor/paystack.ts';
import { jobIds, type JobResult } from '../../jobs/catalog.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { deliverSoon } from '../mail/index.ts';
import { getOrganisation, receiptRecipients } from '../organisations/index.ts';
import { balanceOf } from '../wallet/index.ts';
import { bookCredit, RetiredOrganisation } from './book.ts';
import { saveCard } from './saved-card.ts';
import type { TopupDeps } from './deps.ts';
import * as repo from './topup.repository.ts';
import type { TopupRow } from './topup.schemas.ts';
import * as troubled from './troubled.repository.ts';

/** `reversal`: a dispute or refund notification; `recheck`: the daily re-check of abandoned top-ups; `auto`: an automatic top-up's charge. */
export type CreditSource = 'webhook' | 'verify' | 'sweep' | 'reversal' | 'recheck' | 'auto';
export type CreditResult = JobResult<'topup.credit'>;

const TERMINAL_UNPAID = new Set<VerifyStatus>(['failed', 'reversed', 'not_found']);

export type Settled = { result: CreditResult; closed: boolean };

/**
 * The `topup.credit` job: decides and, when paid, credits one top-up. Safe to run any number of times
 * concurrently for one reference: the conditional UPDATE in `claimCredit` lets exactly one run credit.
 * Throws a ProcessorError when the processor could not answer (retryable ones are retried by BullMQ).
 */
export async function creditTopup(deps: TopupDeps, reference: string, source: CreditSource, log: Logger): Promise<CreditResult> {
  return failFastOnFinalProcessorError(async () => (await settleTopup(deps, reference, source, log)).result);
}

/** A refused key or a malformed answer will not fix itself by waiting: the job fails now, loudly. */
export async function failFastOnFinalProcessorError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ProcessorError && !err.retryable) throw new UnrecoverableError(`processor ${err.code}: ${err.message}`);
    throw err;
  }
}

export async function settleTopup(deps: TopupDeps, reference: string, source: CreditSource, log: Logger): Promise<Settled> {
  const settled = await decideAndCredit(deps, reference, source, log);
  const outcome = settled.result.outcome;
  // Notifications about this reference are settled once the reference is (the audit trail says how).
  if (outcome !== 'not_paid' && outcome !== 'unknown_reference') {
    await repo.markEventsProcessed(deps.db, reference, outcome).catch((err: unknown) => log.warn({ err: describe(err) }, 'could not mark processor events processed'));
  }
  return settled;
}

async function decideAndCredit(deps: TopupDeps, reference: string, source: CreditSource, log: Logger): Promise<Settled> {
  const topup = await repo.findTopup(deps.db, reference);
  if (!topup) return { result: { outcome: 'unknown_reference' }, closed: false };
  if (topup.status === 'credited') {
    // Only a dispute or refund notification is worth a processor call on a credited top-up.
    if (source === 'reversal') return { result: await checkReversal(deps, topup, log), closed: false };
    return { result: await alreadyCredited(deps.db, topup), closed: false };
  }
  if (topup.status === 'charged_back') return { result: { outcome: 'charged_back' }, closed: false };
  if (topup.status === 'refund_due' || topup.status === 'refunding' || topup.status === 'refunded') return { result: { outcome: 'refund_due' }, closed: false };

  // The webhook's claims and the verify caller's word are not evidence: only the processor's own
  // verify answer is. Slow I/O happens here, before any row lock is taken.
  const checked = await deps.processor.verify(reference);
  const now = deps.clock.now();
  const paidAt = paidAtOf(checked, topup, now);

  if (checked.status !== 'success') {
    let closed = false;
    // Only the sweep closes a top-up, and only on a terminal answer and once the normal path had its
    // time: a verify on an unpaid checkout must leave it open, because the payer may still pay.
    const oldEnough = now.getTime() - topup.created_at.getTime() >= deps.config.TOPUP_SWEEP_MIN_AGE_SECONDS * 1000;
    if (source === 'sweep' && oldEnough && TERMINAL_UNPAID.has(checked.status)) {
      closed = await repo.closeTopup(deps.db, reference, 'failed', checked.status, now);
      if (closed) deps.metrics.topups.inc({ state: 'failed' });
    } else {
      await repo.recordCheck(deps.db, reference, checked.status, now);
    }
    return { result: { outcome: 'not_paid', processorStatus: checked.status }, closed };
  }

  // A retired organisation is never credited, whatever it paid: the whole payment goes back.
  const org = await getOrganisation(deps.db, topup.org_id);
  if (!org || org.deleted_at) return { result: await refundDue(deps, topup, checked, log), closed: false };

  if (checked.amountKobo !== topup.total_amount || checked.currency !== topup.currency) {
    await repo.markAmountMismatch(deps.db, { reference, paidAmount: checked.amountKobo, paidCurrency: checked.currency, processorStatus: checked.status, paidAt, at: now });
    deps.metrics.topups.inc({ state: 'amount_mismatch' });
    log.error(
      { reference, orgId: topup.org_id, expectedKobo: topup.total_amount, paidKobo: checked.amountKobo, expectedCurrency: topup.currency, paidCurrency: checked.currency, source },
      'TOP-UP AMOUNT MISMATCH: paid amount differs from the top-up; nothing credited, needs review',
    );
    return { result: { outcome: 'amount_mismatch' }, closed: false };
  }

  const recipients = await receiptRecipients(deps.db, topup.org_id, deps.config.MAIL_FALLBACK_TO, topup.user_id);
  let credited;
  try {
    credited = await deps.db.transaction(async (tx) => {
      const claimed = await repo.claimCredit(tx, { reference, paidAmount: checked.amountKobo, paidCurrency: checked.currency, paidAt, at: now });
      if (!claimed) return null;
      // A card the processor will charge again becomes the organisation's saved card (automatic top-up).
      if (checked.authorization) await saveCard(tx, deps.config.encryptionKeys, { orgId: claimed.org_id, reference, authorization: checked.authorization, at: now });
      return { claimed, ...(await bookCredit(tx, { claimed, recipients, ring: deps.config.encryptionKeys, now, details: { source } })) };
    });
  } catch (err) {
    if (!(err instanceof RetiredOrganisation)) throw err;
    return { result: await refundDue(deps, topup, checked, log), closed: false };
  }

  if (!credited) {
    // Another run credited it between our read and our claim (or it is held for review).
    const current = await repo.findTopup(deps.db, reference);
    if (current?.status === 'credited') return { result: await alreadyCredited(deps.db, current), closed: false };
    if (current?.status === 'refund_due') return { result: { outcome: 'refund_due' }, closed: false };
    return { result: { outcome: 'amount_mismatch' }, closed: false };
  }

  const unitsAdded = credited.claimed.units + credited.claimed.bonus_units;
  deps.metrics.unitsCredited.inc(unitsAdded);
  deps.metrics.topups.inc({ state: 'credited' });
  log.info({ reference, orgId: credited.claimed.org_id, unitsAdded, source }, 'top-up credited');
  // The credit is committed; the outbox sweep sends a receipt whose job was never queued.
  if (credited.outboxId !== null) await deliverSoon(deps.producer, credited.outboxId, log, 'receipt');
  // A credited wallet resumes its organisation's paused batches at once (the periodic feed would,
  // later). Told as the batches' own job (the catalog's batch.feed), the organisation read from the
  // top-up's row: top-up does not import batches, whose lookups end in debits that may top up.
  const orgId = credited.claimed.org_id;
  await deps.producer
    .enqueue('batch.feed', { orgId }, { jobId: jobIds.batchWake(orgId, reference) })
    .catch((err: unknown) => log.warn({ err: describe(err) }, 'batches not woken; the periodic feed resumes them'));
  return {
    result: { outcome: 'credited', unitsAdded, newBalance: credited.moved.units_after, pricePaid: credited.claimed.base_amount },
    closed: false,
  };
}

/**
 * The processor's `paid_at` (the invoice's date of payment), when it is an instant with its zone
 * (as Paystack writes it: `2026-11-27T22:42:36.000Z`) between the top-up's start and now, a day's
 * clock skew allowed; otherwise none, and the invoice shows the credit's time.
 */
function paidAtOf(checked: VerifyResult, topup: TopupRow, now: Date): Date | null {
  if (!checked.paidAt || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(checked.paidAt)) return null;
  const at = new Date(checked.paidAt);
  const day = 86_400_000;
  const plausible = at.getTime() >= topup.created_at.getTime() - day && at.getTime() <= now.getTime() + day;
  return Number.isFinite(at.getTime()) && plausible ? at : null;
}

async function alreadyCredited(db: DatabasePool, topup: TopupRow): Promise<CreditResult> {
  const wallet = await balanceOf(db, topup.org_id);
  return { outcome: 'already_credited', unitsAdded: topup.units + topup.bonus_units, newBalance: wallet.units, pricePaid: topup.base_amount };
}

async function refundDue(deps: TopupDeps, topup: TopupRow, checked: VerifyResult, log: Logger): Promise<CreditResult> {
  const moved = await troubled.markRefundDue(deps.db, {
    reference: topup.reference,
    paidAmount: checked.amountKobo,
    paidCurrency: checked.currency,
    processorStatus: checked.status,
    at: deps.clock.now(),
  });
  if (moved) {
    deps.metrics.topups.inc({ state: 'refund_due' });
    log.error({ reference: topup.reference, orgId: topup.org_id }, 'PAYMENT FOR A RETIRED ORGANISATION: not credited, refund due (topup:refund)');
  }
  return { outcome: 'refund_due' };
}

/** A payment the processor now reports reversed after it was credited: a chargeback, never debited automatically. */
async function checkReversal(deps: TopupDeps, topup: TopupRow, log: Logger): Promise<CreditResult> {
  const checked = await deps.processor.verify(topup.reference);
  if (checked.status !== 'reversed') return alreadyCredited(deps.db, topup);
  if (await troubled.markChargedBack(deps.db, topup.reference, deps.clock.now())) {
    deps.metrics.topups.inc({ state: 'charged_back' });
    log.error({ reference: topup.reference, orgId: topup.org_id }, 'TOP-UP CHARGED BACK: payment reversed after crediting; settle with wallet:adjust');
  }
  return { outcome: 'charged_back' };
}
