import type { CommonQueryMethods } from 'slonik';
import { ProcessorError, type Refund } from '../../adapters/payment-processor/paystack.ts';
import { AppError, describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { recordAudit } from '../audit/index.ts';
import type { TopupDeps } from './deps.ts';
import * as troubled from './troubled.repository.ts';

/** What the operator's commands need: no queue, the processor is called in the command itself. */
export type OperatorDeps = Pick<TopupDeps, 'config' | 'db' | 'logger' | 'clock' | 'processor' | 'metrics'>;

export type RefundAnswer = {
  reference: string;
  status: string;
  refund_id: string | null;
  refund_status: string | null;
  refund_amount: number | null;
  refund_error: string | null;
};

/**
 * Refunds a `refund_due` top-up through the processor, once. The state is claimed first
 * (refund_due -> refunding), so only one command sends; a command that finds it `refunding` (the
 * sender crashed, or the outcome is not known yet) asks the processor what exists before sending,
 * and a repeated send is harmless because the processor refunds one transaction at most once.
 */
export async function refundTopup(deps: OperatorDeps, reference: string): Promise<RefundAnswer> {
  const row = await troubled.findRefundRow(deps.db, reference);
  if (!row) throw new AppError('not_found', `top-up ${reference} not found`);
  if (row.status === 'refunded') return answerOf(row);
  if (row.status === 'refund_due') {
    if (await troubled.claimRefund(deps.db, reference, deps.clock.now())) return send(deps, row);
    return refundTopup(deps, reference);
  }
  if (row.status === 'refunding') return reconcile(deps, row, { resend: true });
  throw new AppError('conflict', `top-up ${reference} is ${row.status}: only a refund_due top-up is refunded`);
}

/**
 * Checks refunds claimed at least TOPUP_SWEEP_MIN_AGE_SECONDS ago (no command is still sending them,
 * its processor call timed out long before) against the processor. It never sends money: a claim
 * with no refund at the processor goes back to refund_due for the operator to run again.
 */
export async function reconcileRefunds(deps: OperatorDeps, log: Logger): Promise<number> {
  const references = await troubled.listStaleRefunding(deps.db, {
    now: deps.clock.now(),
    minAgeSeconds: deps.config.TOPUP_SWEEP_MIN_AGE_SECONDS,
    limit: deps.config.TOPUP_SWEEP_BATCH,
  });
  let checked = 0;
  for (const reference of references) {
    const row = await troubled.findRefundRow(deps.db, reference);
    if (row?.status !== 'refunding') continue;
    try {
      await reconcile(deps, row, { resend: false });
      checked++;
    } catch (err) {
      log.warn({ reference, err: describe(err) }, 'refund reconciliation could not reach the processor');
    }
  }
  return checked;
}

async function reconcile(deps: OperatorDeps, row: troubled.RefundRow, o: { resend: boolean }): Promise<RefundAnswer> {
  let refund: Refund | null;
  try {
    refund = row.refund_id ? await deps.processor.fetchRefund(row.refund_id) : null;
    refund ??= await deps.processor.findRefund(row.reference);
  } catch (err) {
    if (!(err instanceof ProcessorError)) throw err;
    throw new AppError('unavailable', `could not check the refund of ${row.reference} with the processor (${err.message}); run the command again`);
  }
  if (refund) return record(deps, row, refund);
  if (o.resend) return send(deps, row);
  await settle(deps, row, { status: 'refund_due', refund: null, error: 'no refund found at the processor; run topup:refund again' });
  return answerOf((await troubled.findRefundRow(deps.db, row.reference)) ?? row);
}

async function send(deps: OperatorDeps, row: troubled.RefundRow): Promise<RefundAnswer> {
  let refund: Refund;
  try {
    refund = await deps.processor.refund({ reference: row.reference, merchantNote: `refund of top-up ${row.reference}` });
  } catch (err) {
    if (!(err instanceof ProcessorError)) throw err;
    if (err.retryable) {
      // The processor may have made the refund before the answer was lost: stay claimed, and let the
      // next run (or the sweep) find out from the processor.
      await settle(deps, row, { status: 'refunding', refund: null, error: err.message });
      throw new AppError('unavailable', `refund of ${row.reference} not confirmed (${err.message}); run topup:refund again, it will not refund twice`);
    }
    await settle(deps, row, { status: 'refund_due', refund: null, error: err.message });
    throw new AppError('upstream_failed', `the processor refused the refund of ${row.reference}: ${err.message}`);
  }
  return record(deps, row, refund);
}

async function record(deps: OperatorDeps, row: troubled.RefundRow, refund: Refund): Promise<RefundAnswer> {
  if (refund.status === 'processed') {
    // The refund and its event commit together; a rerun finds it refunded and records nothing more.
    await deps.db.transaction(async (tx) => {
      if (!(await settle({ ...deps, db: tx }, row, { status: 'refunded', refund, error: null }))) return;
      // An operator's command or the refund reconciliation sweep found it: the money went back either way.
      await recordAudit(tx, { orgId: row.org_id, actor: 'system', action: 'topup.refunded', target: row.reference, details: { refund_id: refund.id, amount: refund.amountKobo } });
    });
    deps.metrics.topups.inc({ state: 'refunded' });
    deps.logger.info({ reference: row.reference, orgId: row.org_id, refundId: refund.id }, 'top-up refunded');
  } else if (refund.status === 'failed') {
    await settle(deps, row, { status: 'refund_due', refund, error: 'the processor reports the refund failed' });
  } else {
    await settle(deps, row, { status: 'refunding', refund, error: null });
  }
  return answerOf((await troubled.findRefundRow(deps.db, row.reference)) ?? row);
}

function settle(deps: { db: CommonQueryMethods; clock: OperatorDeps['clock'] }, row: troubled.RefundRow, s: { status: 'refunded' | 'refunding' | 'refund_due'; refund: Refund | null; error: string | null }) {
  return troubled.settleRefund(deps.db, {
    reference: row.reference,
    status: s.status,
    refundId: s.refund?.id ?? null,
    refundStatus: s.refund?.status ?? null,
    amount: s.refund?.amountKobo ?? null,
    error: s.error?.slice(0, 500) ?? null,
    at: deps.clock.now(),
  });
}

function answerOf(row: troubled.RefundRow): RefundAnswer {
  return {
    reference: row.reference,
    status: row.status,
    refund_id: row.refund_id,
    refund_status: row.refund_status,
    refund_amount: row.refund_amount,
    refund_error: row.refund_error,
  };
}
