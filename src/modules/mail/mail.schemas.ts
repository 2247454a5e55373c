import { z } from 'zod';

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));

/**
 * What the receipt e-mail needs; kept in the outbox row (PostgreSQL), never in a job payload. Its
 * addresses are personal data: they are sealed in the row's body_enc (sealed-mail.ts), erased once
 * sent; `recipients` in plain is read only from a receipt queued before that, still pending.
 */
export const receiptPayload = z.object({
  reference: z.string(),
  org_id: z.number(),
  organisation: z.string(),
  recipients: z.array(z.string()).min(1).optional(),
  units: z.number(),
  bonus_units: z.number(),
  base_amount: z.number(),
  vat_amount: z.number(),
  service_charge: z.number(),
  total_amount: z.number(),
  currency: z.string(),
  tenancy: z.enum(['hosted', 'self-hosted']),
  loyalty_badge: z.enum(['silver', 'gold', 'diamond']).nullable(),
  credited_at: z.string(),
  /** An automatic top-up (issue 34 item 6): the line its balance fell below and the card charged. */
  automatic: z.object({ below_units: z.number(), card: z.string() }).optional(),
});
export type ReceiptPayload = z.infer<typeof receiptPayload>;

/** Every kind of e-mail the outbox holds (the table's CHECK lists the same); all but receipts are sealed whole. */
export const OUTBOX_KINDS = ['receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email', 'invitation_email', 'statement_email', 'auto_topup_declined_email', 'consent_receipt_email', 'link_refused_email', 'auto_topup_skipped_email'] as const;
export type SealedMailKind = Exclude<(typeof OUTBOX_KINDS)[number], 'receipt_email'>;

export const outboxRow = z.object({
  id: int,
  kind: z.enum(OUTBOX_KINDS),
  body_enc: z.instanceof(Buffer).nullable(),
  key_id: z.string().nullable(),
  dedupe_key: z.string(),
  status: z.enum(['pending', 'sent', 'failed']),
  payload: z.unknown(),
  attempts: int,
  /** units_after of the top-up's ledger line: the balance right after this credit. */
  new_balance: int.nullable(),
  /** The VAT invoice's number of a receipt's top-up (INV-<year>-<6 digits>). */
  invoice_number: z.string().nullable(),
});
