import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { ProcessorError, type PaystackClient, type VerifyStatus } from '../../adapters/payment-processor/paystack.ts';
import { verifyPaystackSignature } from '../../adapters/payment-processor/signature.ts';
import { chargeSuccessEventSchema, paystackEventSchema } from '../../adapters/payment-processor/webhook.ts';
import type { Config } from '../../config.ts';
import { jobIds, type JobResult } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { describe } from '../../lib/http.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { Principal } from '../auth/auth.schemas.ts';
import { requireOrgAdmin } from '../auth/auth.service.ts';
import { addLifetimeUnits, receiptRecipients, requireOrganisation } from '../organisations/organisations.service.ts';
import { addUnits, balanceOf, countWallets, findLedgerMismatches } from '../wallet/wallet.service.ts';
import { computeTopupPrice, loyaltyBadge, validateTopupUnits, type PricingRules } from './pricing.ts';
import * as repo from './topup.repository.ts';
import { TOPUP_REFERENCE, type InitializeResponse, type TopupRow, type VerifyResponse } from './topup.schemas.ts';

/** What top-up code needs; both the API context and the worker deps have it. */
export type TopupDeps = {
  config: Config;
  db: DatabasePool;
  logger: Logger;
  producer: Producer;
  clock: Clock;
  processor: PaystackClient;
  metrics: Metrics;
};

export type CreditSource = 'webhook' | 'verify' | 'sweep';
export type CreditResult = JobResult<'topup.credit'>;

const CURRENCY = 'NGN';

export function pricingRulesFrom(c: Config): PricingRules {
  return {
    vatBps: c.VAT_BPS,
    processorFee: {
      bps: c.PROCESSOR_FEE_BPS,
      flatKobo: c.PROCESSOR_FEE_FLAT_KOBO,
      flatWaivedUnderKobo: c.PROCESSOR_FEE_FLAT_WAIVED_UNDER_KOBO,
      capKobo: c.PROCESSOR_FEE_CAP_KOBO,
    },
    bonusTiers: c.BONUS_TIERS,
    bonusEndDate: c.BONUS_END_DATE,
  };
}

// ---------------------------------------------------------------------------------------------
// POST /topup/initialize

export async function initializeTopup(deps: TopupDeps, principal: Principal, units: number): Promise<InitializeResponse> {
  const orgId = requireOrgAdmin(principal);
  const org = await requireOrganisation(deps.db, orgId);
  const invalid = validateTopupUnits(units, org.min_topup_units);
  if (invalid) throw new AppError('bad_request', invalid);

  const now = deps.clock.now();
  const price = computeTopupPrice(
    { units, unitCostKobo: org.unit_cost_kobo, tenancy: org.tenancy, affiliate: org.affiliate, now },
    pricingRulesFrom(deps.config),
  );
  const reference = `TOP-${orgId}-${randomBytes(8).toString('hex')}`;
  // The row exists before the processor hears of the reference, so a webhook can never arrive for
  // a reference we do not know, and a crash after the call leaves a row the sweep can reconcile.
  await repo.insertTopup(deps.db, {
    reference,
    orgId,
    userId: principal.userId,
    units,
    bonusUnits: price.bonus_units,
    unitCostKobo: price.unit_cost,
    baseAmount: price.base_amount,
    vatAmount: price.vat_amount,
    serviceCharge: price.service_charge,
    totalAmount: price.total_amount,
    currency: CURRENCY,
    at: now,
  });

  const [email] = await receiptRecipients(deps.db, orgId, deps.config.MAIL_FALLBACK_TO);
  let checkout;
  try {
    checkout = await deps.processor.initialize({
      email: email ?? deps.config.MAIL_FALLBACK_TO,
      amountKobo: price.total_amount,
      reference,
      currency: CURRENCY,
      metadata: { org: orgId, units, reference },
      callbackUrl: deps.config.PAYSTACK_CALLBACK_URL || undefined,
    });
  } catch (err) {
    if (!(err instanceof ProcessorError)) throw err;
    await repo.markInitializeFailed(deps.db, reference, `initialize_${err.code}`);
    deps.metrics.topups.inc({ state: 'initialize_failed' });
    deps.logger.warn({ reference, code: err.code, httpStatus: err.httpStatus }, 'processor initialize failed');
    if (err.retryable) {
      throw new AppError('unavailable', 'Payment processor is unavailable; nothing was charged, retry later', {
        headers: { 'Retry-After': '10' },
      });
    }
    throw new AppError('upstream_failed', 'Payment processor refused to create the payment link; nothing was charged');
  }
  await repo.setCheckout(deps.db, reference, checkout.accessCode, checkout.authorizationUrl);
  deps.metrics.topups.inc({ state: 'initialized' });

  return {
    authorization_url: checkout.authorizationUrl,
    reference,
    access_code: checkout.accessCode,
    base_amount: price.base_amount,
    vat_amount: price.vat_amount,
    service_charge: price.service_charge,
    total_amount: price.total_amount,
    units: price.units,
    unit_cost: price.unit_cost,
    discount: null,
    bonus_units: price.bonus_units,
    currency: CURRENCY,
  };
}

// ---------------------------------------------------------------------------------------------
// POST /topup/verify

export async function verifyTopup(deps: TopupDeps, principal: Principal, reference: string, requestId?: string): Promise<VerifyResponse> {
  const orgId = requireOrgAdmin(principal);
  if (!TOPUP_REFERENCE.test(reference)) throw new AppError('bad_request', 'reference is not a top-up reference (TOP-<org>-<16 hex>)');
  const topup = await repo.findTopup(deps.db, reference);
  if (!topup) throw new AppError('not_found', 'Top-up reference not found');
  if (topup.org_id !== orgId) throw new AppError('forbidden', 'This top-up belongs to another organisation');
  // A credited reference is final: answer from the database without a job or a processor call.
  if (topup.status === 'credited') return alreadyCreditedAnswer(deps.db, topup);

  // A fresh job id per call: a verify must always run a new check, never reuse a finished one.
  const outcome = await deps.producer.enqueueAndWait(
    'topup.credit',
    { reference, source: 'verify', ...(requestId ? { requestId } : {}) },
    { jobId: jobIds.creditFromVerify(reference, randomUUID().replaceAll('-', '')), timeoutMs: deps.config.TOPUP_WAIT_MS },
  );
  if (outcome.status === 'timeout') {
    // The job goes on; the row is the truth, so a credit that landed meanwhile is still reported.
    const now = await repo.findTopup(deps.db, reference);
    if (now?.status === 'credited') return alreadyCreditedAnswer(deps.db, now);
    throw new AppError('timeout', 'Payment confirmation is taking longer than expected; retry the verify call later', { extra: { reference } });
  }
  if (outcome.status === 'failed') {
    throw new AppError('upstream_failed', 'Could not confirm the payment with the payment processor; retry later', { extra: { reference } });
  }
  const r = outcome.result;
  switch (r.outcome) {
    case 'credited':
    case 'already_credited':
      return {
        message: r.outcome === 'credited' ? 'Top-up successful' : 'Top-up already credited',
        units_added: r.unitsAdded ?? 0,
        new_balance: r.newBalance ?? 0,
        price_paid: r.pricePaid ?? 0,
      };
    case 'not_paid':
      throw new AppError('bad_request', `Payment not successful (status: ${r.processorStatus ?? 'unknown'}); nothing was credited`);
    case 'amount_mismatch':
      throw new AppError('bad_request', 'Paid amount does not match the top-up; nothing was credited');
    case 'unknown_reference':
      throw new AppError('not_found', 'Top-up reference not found');
  }
}

async function alreadyCreditedAnswer(db: DatabasePool, topup: TopupRow): Promise<VerifyResponse> {
  const wallet = await balanceOf(db, topup.org_id);
  return { message: 'Top-up already credited', units_added: topup.units + topup.bonus_units, new_balance: wallet.units, price_paid: topup.base_amount };
}

// ---------------------------------------------------------------------------------------------
// POST /webhooks/paystack

/**
 * Authenticates, stores and acknowledges one processor notification. Crediting happens in a job,
 * never here: the processor only needs a quick 200, and the job re-verifies the charge anyway.
 */
export async function receiveProcessorEvent(deps: TopupDeps, rawBody: Buffer, signature: string | undefined, requestId?: string): Promise<void> {
  if (!verifyPaystackSignature(rawBody, signature, deps.config.PAYSTACK_SECRET_KEY)) {
    throw new AppError('unauthorized', 'Invalid signature');
  }
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new AppError('bad_request', 'Malformed JSON body');
  }
  const event = paystackEventSchema.safeParse(json);
  if (!event.success) throw new AppError('bad_request', 'Body is not a processor event');
  // Every accepted event is stored as jsonb, which cannot hold NUL characters or lone surrogates.
  if (!storableJson(json)) throw new AppError('bad_request', 'Body contains characters that cannot be stored');

  // The digest of the signed bytes: a retried delivery is byte-identical, so it maps to the same key.
  const eventKey = createHash('sha256').update(rawBody).digest('hex');
  const data = (typeof event.data.data === 'object' && event.data.data !== null ? event.data.data : {}) as Record<string, unknown>;
  const rawRef = data['reference'];
  const reference = typeof rawRef === 'string' && rawRef.length <= 100 ? rawRef : null;

  const charge = chargeSuccessEventSchema.safeParse(json);
  let creditable = false;
  let outcome: string | null = 'ignored';
  if (charge.success && TOPUP_REFERENCE.test(charge.data.data.reference)) {
    const known = await repo.findTopup(deps.db, charge.data.data.reference);
    creditable = known !== null;
    outcome = known ? null : 'unknown_reference';
  }
  const stored = await repo.insertProcessorEvent(deps.db, {
    eventKey,
    event: event.data.event.slice(0, 100),
    reference,
    payload: withoutPersonalData(event.data),
    outcome,
  });
  if (outcome === 'unknown_reference' && stored) deps.logger.warn({ reference, eventKey }, 'charge.success for an unknown top-up reference');
  // Enqueued even for a duplicate: the first delivery may have been stored and then failed to enqueue.
  // The job id, built from the event key, makes BullMQ drop the copy while the first job is known.
  if (creditable && charge.success) {
    await deps.producer.enqueue('topup.credit', { reference: charge.data.data.reference, source: 'webhook', requestId }, { jobId: jobIds.creditFromWebhook(eventKey) });
  }
}

function storableJson(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (typeof value === 'string') return value.isWellFormed() && !value.includes('\u0000');
  if (Array.isArray(value)) return value.every((v) => storableJson(v, depth + 1));
  if (value && typeof value === 'object') return Object.entries(value).every(([k, v]) => storableJson(k, depth + 1) && storableJson(v, depth + 1));
  return true;
}

/** The customer and card objects hold personal data the audit trail does not need. */
function withoutPersonalData(event: { event: string; data: unknown }): unknown {
  if (typeof event.data !== 'object' || event.data === null) return event;
  const { customer: _customer, authorization: _authorization, ...data } = event.data as Record<string, unknown>;
  return { ...event, data };
}

// ---------------------------------------------------------------------------------------------
// topup.credit job

const TERMINAL_UNPAID = new Set<VerifyStatus>(['failed', 'reversed', 'not_found']);

type Settled = { result: CreditResult; closed: boolean };

/**
 * Decides and, when paid, credits one top-up. Safe to run any number of times concurrently for one
 * reference: the conditional UPDATE in `claimCredit` lets exactly one run credit. Throws a
 * ProcessorError when the processor could not answer (retryable ones are retried by BullMQ).
 */
export async function creditTopup(deps: TopupDeps, reference: string, source: CreditSource, log: Logger): Promise<CreditResult> {
  return (await settleTopup(deps, reference, source, log)).result;
}

async function settleTopup(deps: TopupDeps, reference: string, source: CreditSource, log: Logger): Promise<Settled> {
  const settled = await decideAndCredit(deps, reference, source, log);
  const outcome = settled.result.outcome;
  // Notifications about this reference are settled once the reference is (the audit trail says how).
  if (outcome === 'credited' || outcome === 'already_credited' || outcome === 'amount_mismatch') {
    await repo.markEventsProcessed(deps.db, reference, outcome).catch((err: unknown) => log.warn({ err: describe(err) }, 'could not mark processor events processed'));
  }
  return settled;
}

async function decideAndCredit(deps: TopupDeps, reference: string, source: CreditSource, log: Logger): Promise<Settled> {
  const topup = await repo.findTopup(deps.db, reference);
  if (!topup) return { result: { outcome: 'unknown_reference' }, closed: false };
  if (topup.status === 'credited') return { result: await alreadyCredited(deps.db, topup), closed: false };

  // The webhook's claims and the verify caller's word are not evidence: only the processor's own
  // verify answer is. Slow I/O happens here, before any row lock is taken.
  const checked = await deps.processor.verify(reference);
  const now = deps.clock.now();

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

  if (checked.amountKobo !== topup.total_amount || checked.currency !== topup.currency) {
    await repo.markAmountMismatch(deps.db, { reference, paidAmount: checked.amountKobo, paidCurrency: checked.currency, processorStatus: checked.status, at: now });
    deps.metrics.topups.inc({ state: 'amount_mismatch' });
    log.error(
      { reference, orgId: topup.org_id, expectedKobo: topup.total_amount, paidKobo: checked.amountKobo, expectedCurrency: topup.currency, paidCurrency: checked.currency, source },
      'TOP-UP AMOUNT MISMATCH: paid amount differs from the top-up; nothing credited, needs review',
    );
    return { result: { outcome: 'amount_mismatch' }, closed: false };
  }

  const recipients = await receiptRecipients(deps.db, topup.org_id, deps.config.MAIL_FALLBACK_TO);
  const credited = await deps.db.transaction(async (tx) => {
    const claimed = await repo.claimCredit(tx, { reference, paidAmount: checked.amountKobo, paidCurrency: checked.currency, at: now });
    if (!claimed) return null;
    // Badges count purchased units; bonus units are a gift and do not move a tenant up.
    const org = await addLifetimeUnits(tx, claimed.org_id, claimed.units);
    const outboxId = await repo.insertReceipt(tx, `receipt-${reference}`, {
      reference,
      org_id: claimed.org_id,
      organisation: org.name,
      recipients,
      units: claimed.units,
      bonus_units: claimed.bonus_units,
      base_amount: claimed.base_amount,
      vat_amount: claimed.vat_amount,
      service_charge: claimed.service_charge,
      total_amount: claimed.total_amount,
      currency: claimed.currency,
      tenancy: org.tenancy,
      loyalty_badge: loyaltyBadge(org.tenancy, org.lifetime_units),
      credited_at: now.toISOString(),
    });
    // The wallet row is the hot lock shared with every verification: touched last, then COMMIT. The
    // receipt reads the new balance from this ledger line when it is sent.
    const moved = await addUnits(tx, {
      orgId: claimed.org_id,
      units: claimed.units + claimed.bonus_units,
      kind: 'topup',
      amountKobo: claimed.base_amount,
      vatAmount: claimed.vat_amount,
      serviceCharge: claimed.service_charge,
      reference,
      details: { units: claimed.units, bonus_units: claimed.bonus_units, total_amount: claimed.total_amount, source },
    });
    if (!moved) throw new Error(`no wallet for organisation ${claimed.org_id}`);
    return { claimed, moved, outboxId };
  });

  if (!credited) {
    // Another run credited it between our read and our claim (or it is held for review).
    const current = await repo.findTopup(deps.db, reference);
    if (current?.status === 'credited') return { result: await alreadyCredited(deps.db, current), closed: false };
    return { result: { outcome: 'amount_mismatch' }, closed: false };
  }

  const unitsAdded = credited.claimed.units + credited.claimed.bonus_units;
  deps.metrics.unitsCredited.inc(unitsAdded);
  deps.metrics.topups.inc({ state: 'credited' });
  log.info({ reference, orgId: credited.claimed.org_id, unitsAdded, source }, 'top-up credited');
  if (credited.outboxId !== null) {
    try {
      await deps.producer.enqueue('outbox.deliver', { outboxId: credited.outboxId }, { jobId: jobIds.outbox(credited.outboxId) });
    } catch (err) {
      // The credit is committed; the outbox sweep sends a receipt whose job was never queued.
      log.warn({ err: describe(err), outboxId: credited.outboxId }, 'receipt not queued; the outbox sweep will send it');
    }
  }
  return {
    result: { outcome: 'credited', unitsAdded, newBalance: credited.moved.units_after, pricePaid: credited.claimed.base_amount },
    closed: false,
  };
}

async function alreadyCredited(db: DatabasePool, topup: TopupRow): Promise<CreditResult> {
  const wallet = await balanceOf(db, topup.org_id);
  return { outcome: 'already_credited', unitsAdded: topup.units + topup.bonus_units, newBalance: wallet.units, pricePaid: topup.base_amount };
}

// ---------------------------------------------------------------------------------------------
// topup.sweep job

const SWEEP_PARALLELISM = 4;

/**
 * Reconciles top-ups whose webhook never came. The window starts at TOPUP_SWEEP_MIN_AGE_SECONDS so
 * the webhook and verify paths have their time first; a race with them would be harmless anyway,
 * because crediting is idempotent per reference. It ends at TOPUP_SWEEP_MAX_AGE_HOURS, after which a
 * still-unpaid top-up is marked abandoned (a late webhook or verify still credits it). LIMIT bounds
 * each run; the least recently checked rows come first, so a backlog is worked through in turns.
 */
export async function sweepTopups(deps: TopupDeps, log: Logger): Promise<JobResult<'topup.sweep'>> {
  const c = deps.config;
  const now = deps.clock.now();
  const references = await repo.listSweepCandidates(deps.db, {
    now,
    minAgeSeconds: c.TOPUP_SWEEP_MIN_AGE_SECONDS,
    maxAgeHours: c.TOPUP_SWEEP_MAX_AGE_HOURS,
    limit: c.TOPUP_SWEEP_BATCH,
  });
  let checked = 0;
  let credited = 0;
  let closed = 0;
  const queue = [...references];
  const worker = async (): Promise<void> => {
    for (let reference = queue.shift(); reference !== undefined; reference = queue.shift()) {
      try {
        const settled = await settleTopup(deps, reference, 'sweep', log);
        checked++;
        if (settled.result.outcome === 'credited') credited++;
        if (settled.closed) closed++;
      } catch (err) {
        // One unreachable or refusing check must not stop the batch; the next run tries again.
        log.warn({ reference, err: describe(err) }, 'sweep could not check a top-up');
      }
    }
  };
  await Promise.all(Array.from({ length: SWEEP_PARALLELISM }, worker));

  const abandoned = await repo.abandonExpired(deps.db, { now, maxAgeHours: c.TOPUP_SWEEP_MAX_AGE_HOURS, limit: c.TOPUP_SWEEP_BATCH });
  if (abandoned > 0) deps.metrics.topups.inc({ state: 'abandoned' }, abandoned);
  closed += abandoned;
  if (checked + abandoned > 0) log.info({ checked, credited, closed }, 'top-up sweep');
  return { checked, credited, closed };
}

// ---------------------------------------------------------------------------------------------
// ledger.audit job

export async function auditLedger(deps: Pick<TopupDeps, 'db' | 'metrics'>, log: Logger): Promise<JobResult<'ledger.audit'>> {
  // One statement, one snapshot: balances and ledger sums are read at the same instant.
  const mismatches = await findLedgerMismatches(deps.db);
  const walletsChecked = await countWallets(deps.db);
  const rows = mismatches.map((m) => ({ org_id: m.org_id, units: m.units, ledger_units: m.ledger_units }));
  await repo.insertLedgerAudit(deps.db, walletsChecked, rows);
  deps.metrics.ledgerMismatches.set(rows.length);
  deps.metrics.ledgerAuditRuns.inc({ result: rows.length > 0 ? 'mismatch' : 'ok' });
  if (rows.length > 0) log.error({ mismatches: rows.slice(0, 50), count: rows.length }, 'LEDGER MISMATCH: wallet balance differs from its ledger');
  return { walletsChecked, mismatches: rows.length };
}
