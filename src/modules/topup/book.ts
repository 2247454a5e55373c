import type { CommonQueryMethods } from 'slonik';
import type { KeyRing } from '../../lib/crypto.ts';
import { addLifetimeUnits, loyaltyBadge } from '../organisations/index.ts';
import { recordAudit, type AuditActor } from '../audit/index.ts';
import { queueReceipt } from '../mail/index.ts';
import { addUnits } from '../wallet/index.ts';
import { recordWebhookEvent } from '../webhooks/index.ts';
import { findChargeOf, markChargeCredited } from './auto.repository.ts';
import { issueInvoice } from './invoice.repository.ts';
import type { TopupRow } from './topup.schemas.ts';

/** Thrown inside the credit transaction to undo it: the organisation was retired meanwhile. */
export class RetiredOrganisation extends Error {
  readonly orgId: number;

  constructor(orgId: number) {
    super(`organisation ${orgId} is retired`);
    this.orgId = orgId;
    this.name = 'RetiredOrganisation';
  }
}

/**
 * Books a top-up its caller has just claimed (the row is `credited` in this transaction): the
 * lifetime units, the receipt in the outbox, the wallet line and the invoice number. Throws RetiredOrganisation when
 * the organisation was retired, which rolls the claim back with everything else.
 */
export async function bookCredit(
  tx: CommonQueryMethods,
  c: { claimed: TopupRow; recipients: string[]; ring: KeyRing; now: Date; details: Record<string, unknown>; by?: AuditActor },
) {
  const { claimed } = c;
  // An automatic top-up's charge: its receipt and audit event say so, and it ends with this credit.
  const auto = await findChargeOf(tx, claimed.reference);
  // The organisation row is locked from here to COMMIT, so a retirement either committed before
  // (seen here) or waits for this credit.
  const org = await addLifetimeUnits(tx, claimed.org_id, claimed.units);
  if (org.retired) throw new RetiredOrganisation(claimed.org_id);
  // The addresses are sealed in the row (personal data); the figures stay plain for rendering at delivery.
  const outboxId = await queueReceipt(tx, c.ring, { dedupeKey: `receipt-${claimed.reference}`, recipients: c.recipients, payload: {
    reference: claimed.reference,
    org_id: claimed.org_id,
    organisation: org.name,
    units: claimed.units,
    bonus_units: claimed.bonus_units,
    base_amount: claimed.base_amount,
    vat_amount: claimed.vat_amount,
    service_charge: claimed.service_charge,
    total_amount: claimed.total_amount,
    currency: claimed.currency,
    tenancy: org.tenancy,
    loyalty_badge: loyaltyBadge(org.tenancy, org.lifetime_units),
    credited_at: c.now.toISOString(),
    ...(auto ? { automatic: { below_units: auto.below_units, card: auto.card ?? 'saved card' } } : {}),
  } });
  // The wallet row is the hot lock shared with every verification: touched last, then COMMIT. The
  // receipt reads the new balance from this ledger line when it is sent.
  const moved = await addUnits(tx, {
    orgId: claimed.org_id,
    units: claimed.units + claimed.bonus_units,
    kind: 'topup',
    amountKobo: claimed.base_amount,
    vatAmount: claimed.vat_amount,
    serviceCharge: claimed.service_charge,
    reference: claimed.reference,
    details: { units: claimed.units, bonus_units: claimed.bonus_units, total_amount: claimed.total_amount, ...c.details },
  });
  if (!moved) throw new Error(`no wallet for organisation ${claimed.org_id}`);
  // After the wallet row, as a debit's trigger reads the charges while it holds that row.
  if (auto) await markChargeCredited(tx, claimed.reference, c.now);
  // The organisation's webhook endpoints hear of it with the credit (one indexed read when none listens).
  await recordWebhookEvent(tx, {
    orgId: claimed.org_id,
    type: 'topup.credited',
    data: { reference: claimed.reference, units: claimed.units, bonus_units: claimed.bonus_units, new_balance: moved.units_after },
  });
  // The invoice number: the service-wide counter row is held from here to COMMIT, so it is taken as
  // late as the audit head allows (after the wallet, before the audit chain, the order every credit keeps).
  const invoiceNumber = await issueInvoice(tx, {
    reference: claimed.reference,
    orgId: claimed.org_id,
    at: c.now,
    buyer: { name: org.name, address: org.address, tin: org.tin },
  });
  // Last before COMMIT, after the wallet: every transaction takes the wallet row before the audit
  // chain's head, so the two locks are never waited for in opposite orders.
  await recordAudit(tx, {
    orgId: claimed.org_id,
    actor: c.by ?? 'system',
    action: 'topup.credited',
    target: claimed.reference,
    details: { units: claimed.units, bonus_units: claimed.bonus_units, total_amount: claimed.total_amount, units_after: moved.units_after, invoice: invoiceNumber, ...(auto ? { automatic: true } : {}), ...c.details },
  });
  return { moved, outboxId, invoiceNumber };
}
