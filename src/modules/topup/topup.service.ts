import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { ProcessorError } from '../../adapters/payment-processor/paystack.ts';
import type { Config } from '../../config.ts';
import { jobIds } from '../../jobs/catalog.ts';
import { AppError } from '../../lib/errors.ts';
import { requireAccountsKeeper, type Principal } from '../auth/index.ts';
import { receiptRecipients, requireOrganisation } from '../organisations/index.ts';
import { balanceOf } from '../wallet/index.ts';
import type { TopupDeps } from './deps.ts';
import { computeTopupPrice, CURRENCY, validateTopupUnits, type PricingRules } from './pricing.ts';
import * as repo from './topup.repository.ts';
import { TOPUP_REFERENCE, type InitializeResponse, type TopupRow, type VerifyResponse } from './topup.schemas.ts';


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

/** GET /topup/quote: what a top-up of this many units would cost, computed as initialize computes it; nothing is written. */
export async function quoteTopup(deps: Pick<TopupDeps, 'db' | 'clock' | 'config'>, principal: Principal, units: number) {
  const orgId = requireAccountsKeeper(principal);
  const org = await requireOrganisation(deps.db, orgId);
  const invalid = validateTopupUnits(units, org.min_topup_units);
  if (invalid) throw new AppError('bad_request', invalid);
  const price = computeTopupPrice(
    { units, unitCostKobo: org.unit_cost_kobo, tenancy: org.tenancy, affiliate: org.affiliate, now: deps.clock.now() },
    pricingRulesFrom(deps.config),
  );
  return { ...price, currency: CURRENCY };
}

/**
 * `returnUrl`: where the processor sends the payer back. The portal's top-ups carry their own (the
 * portal's page that waits for the credit); an API caller's use PAYSTACK_CALLBACK_URL.
 */
export async function initializeTopup(deps: TopupDeps, principal: Principal, units: number, opts: { returnUrl?: string } = {}): Promise<InitializeResponse> {
  const orgId = requireAccountsKeeper(principal);
  const org = await requireOrganisation(deps.db, orgId);
  const invalid = validateTopupUnits(units, org.min_topup_units);
  if (invalid) throw new AppError('bad_request', invalid);

  const now = deps.clock.now();
  const price = computeTopupPrice(
    { units, unitCostKobo: org.unit_cost_kobo, tenancy: org.tenancy, affiliate: org.affiliate, now },
    pricingRulesFrom(deps.config),
  );
  const reference = repo.newTopupReference(orgId);
  // The row exists before the processor hears of the reference, so a webhook can never arrive for
  // a reference we do not know, and a crash after the call leaves a row the sweep can reconcile.
  await repo.insertTopup(deps.db, { reference, orgId, userId: principal.userId, apiClientId: principal.apiClientId, units, price, at: now });

  const [email] = await receiptRecipients(deps.db, orgId, deps.config.MAIL_FALLBACK_TO);
  let checkout;
  try {
    checkout = await deps.processor.initialize({
      email: email ?? deps.config.MAIL_FALLBACK_TO,
      amountKobo: price.total_amount,
      reference,
      currency: CURRENCY,
      metadata: { org: orgId, units, reference },
      callbackUrl: opts.returnUrl ?? (deps.config.PAYSTACK_CALLBACK_URL || undefined),
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
    ...price,
    currency: CURRENCY,
  };
}

// ---------------------------------------------------------------------------------------------
// POST /topup/verify

export async function verifyTopup(deps: TopupDeps, principal: Principal, reference: string, requestId?: string): Promise<VerifyResponse> {
  const orgId = requireAccountsKeeper(principal);
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
    case 'refund_due':
      throw new AppError('conflict', 'The organisation is retired: this payment is not credited and will be refunded');
    case 'charged_back':
      throw new AppError('conflict', 'This payment was reversed by the payment processor after it was credited');
  }
}

async function alreadyCreditedAnswer(db: DatabasePool, topup: TopupRow): Promise<VerifyResponse> {
  const wallet = await balanceOf(db, topup.org_id);
  return { message: 'Top-up already credited', units_added: topup.units + topup.bonus_units, new_balance: wallet.units, price_paid: topup.base_amount };
}
