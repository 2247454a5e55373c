import { AppError } from '../../lib/errors.ts';
import { getOrganisation, receiptRecipients } from '../organisations/index.ts';
import { bookCredit, RetiredOrganisation } from './book.ts';
import { refundTopup, type OperatorDeps, type RefundAnswer } from './refund.ts';
import * as repo from './topup.repository.ts';
import * as troubled from './troubled.repository.ts';

export type Resolution = { action: 'credit' | 'refund'; by: string; note: string };

export type CreditAnswer = { reference: string; status: 'credited'; units_added: number; new_balance: number; resolved_by: string; resolution_note: string };

/**
 * Settles an `amount_mismatch` by an operator's decision, recorded with who decided and why:
 * `credit` books the units initialised (bonus included) although the amount paid differs; `refund`
 * makes it refund_due and refunds it. The receipt of a resolved credit is queued in the outbox and
 * sent by the outbox sweep (the command has no queue connection).
 */
export async function resolveMismatch(deps: OperatorDeps, reference: string, r: Resolution): Promise<CreditAnswer | RefundAnswer> {
  const note = r.note.trim();
  const by = r.by.trim();
  if (!note) throw new AppError('bad_request', 'a note saying why is required');
  if (!by) throw new AppError('bad_request', 'the operator resolving it must be named');
  const topup = await repo.findTopup(deps.db, reference);
  if (!topup) throw new AppError('not_found', `top-up ${reference} not found`);
  if (topup.status !== 'amount_mismatch') throw new AppError('conflict', `top-up ${reference} is ${topup.status}, not amount_mismatch`);
  const now = deps.clock.now();

  if (r.action === 'refund') {
    if (!(await troubled.resolveToRefund(deps.db, { reference, by, note, at: now }))) {
      throw new AppError('conflict', `top-up ${reference} changed while being resolved; look again`);
    }
    deps.logger.info({ reference, orgId: topup.org_id, by }, 'amount mismatch resolved: refund');
    return refundTopup(deps, reference);
  }

  const org = await getOrganisation(deps.db, topup.org_id);
  const retired = `organisation ${topup.org_id} is retired: resolve with --refund`;
  if (!org || org.deleted_at) throw new AppError('conflict', retired);
  const recipients = await receiptRecipients(deps.db, topup.org_id, deps.config.MAIL_FALLBACK_TO, topup.user_id);
  let booked;
  try {
    booked = await deps.db.transaction(async (tx) => {
      const claimed = await troubled.claimResolvedCredit(tx, { reference, by, note, at: now });
      if (!claimed) return null;
      return { claimed, ...(await bookCredit(tx, { claimed, recipients, ring: deps.config.encryptionKeys, now, details: { source: 'resolve', resolved_by: by }, by: 'operator' })) };
    });
  } catch (err) {
    if (err instanceof RetiredOrganisation) throw new AppError('conflict', retired);
    throw err;
  }
  if (!booked) throw new AppError('conflict', `top-up ${reference} changed while being resolved; look again`);
  const unitsAdded = booked.claimed.units + booked.claimed.bonus_units;
  deps.metrics.unitsCredited.inc(unitsAdded);
  deps.metrics.topups.inc({ state: 'credited' });
  deps.logger.info({ reference, orgId: topup.org_id, by, unitsAdded }, 'amount mismatch resolved: credited');
  return { reference, status: 'credited', units_added: unitsAdded, new_balance: booked.moved.units_after, resolved_by: by, resolution_note: note };
}
