import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { AppError } from '../../lib/errors.ts';
import { requireAccountsKeeper, type Principal } from '../auth/index.ts';
import { renderInvoice } from './invoice-pdf.ts';
import { findInvoice } from './invoice.repository.ts';
import { findTopup } from './topup.repository.ts';
import { TOPUP_REFERENCE } from './topup.schemas.ts';

/**
 * GET /topups/{reference}/invoice: the VAT invoice of a credited top-up, as PDF. The number and the
 * buyer were fixed when the credit was booked (book.ts); the seller is the service's configuration.
 */
export async function invoicePdf(deps: { db: DatabasePool; config: Config }, principal: Principal, reference: string): Promise<{ number: string; pdf: Buffer }> {
  const orgId = requireAccountsKeeper(principal);
  if (!TOPUP_REFERENCE.test(reference)) throw new AppError('bad_request', 'reference is not a top-up reference (TOP-<org>-<16 hex>)');
  const inv = await findInvoice(deps.db, reference);
  if (!inv) {
    const topup = await findTopup(deps.db, reference);
    if (!topup) throw new AppError('not_found', 'Top-up reference not found');
    if (topup.org_id !== orgId) throw new AppError('forbidden', 'This top-up belongs to another organisation');
    throw new AppError('not_found', `This top-up has no invoice: it is ${topup.status}, not credited`);
  }
  if (inv.org_id !== orgId) throw new AppError('forbidden', 'This top-up belongs to another organisation');
  const c = deps.config;
  const pdf = await renderInvoice({
    number: inv.number,
    issuedAt: inv.issued_at,
    paidAt: inv.paid_at,
    seller: { name: c.INVOICE_SELLER_NAME, address: c.INVOICE_SELLER_ADDRESS || null, tin: c.INVOICE_SELLER_TIN || null },
    buyer: { name: inv.buyer_name, address: inv.buyer_address, tin: inv.buyer_tin },
    reference: inv.reference,
    units: inv.units,
    bonusUnits: inv.bonus_units,
    unitCostKobo: inv.unit_cost_kobo,
    baseAmount: inv.base_amount,
    vatAmount: inv.vat_amount,
    vatBps: c.VAT_BPS,
    serviceCharge: inv.service_charge,
    totalAmount: inv.total_amount,
  });
  return { number: inv.number, pdf };
}
