import { z } from 'zod';

/** A top-up reference: `TOP-<organisation number>-<16 lowercase hex>` (SPEC 2.4). */
export const TOPUP_REFERENCE = /^TOP-[0-9]+-[0-9a-f]{16}$/;

// Form values arrive as strings. A decimal string becomes a number and is judged by the business
// rule (150 -> 400); anything else stays a string so zod reports a wrong type (abc -> 422).
const decimal = (v: unknown): unknown => (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v);

export const initializeForm = z.object({
  units: z.preprocess(decimal, z.number()),
});

export const verifyForm = z.object({
  reference: z.string().trim().min(1, 'reference must not be empty').max(100),
});

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));
const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));

export const topupStatus = z.enum(['pending', 'credited', 'failed', 'abandoned', 'amount_mismatch']);
export type TopupStatus = z.infer<typeof topupStatus>;

export const topupRow = z.object({
  reference: z.string(),
  org_id: int,
  units: int,
  bonus_units: int,
  unit_cost_kobo: int,
  base_amount: int,
  vat_amount: int,
  service_charge: int,
  total_amount: int,
  currency: z.string(),
  status: topupStatus,
  processor_status: z.string().nullable(),
  created_at: time,
});
export type TopupRow = z.infer<typeof topupRow>;

/** What the receipt e-mail needs; kept in the outbox row (PostgreSQL), never in a job payload. */
export const receiptPayload = z.object({
  reference: z.string(),
  org_id: z.number(),
  organisation: z.string(),
  recipients: z.array(z.string()).min(1),
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
});
export type ReceiptPayload = z.infer<typeof receiptPayload>;

export const outboxRow = z.object({
  id: int,
  status: z.enum(['pending', 'sent', 'failed']),
  payload: z.unknown(),
  attempts: int,
  /** units_after of the top-up's ledger line: the balance right after this credit. */
  new_balance: int.nullable(),
});

/** SPEC 2.4, plus `bonus_units` and `currency` (amounts are integer kobo). */
export type InitializeResponse = {
  authorization_url: string;
  reference: string;
  access_code: string;
  base_amount: number;
  vat_amount: number;
  service_charge: number;
  total_amount: number;
  units: number;
  unit_cost: number;
  discount: null;
  bonus_units: number;
  currency: 'NGN';
};

/** SPEC 2.5. */
export type VerifyResponse = {
  message: 'Top-up successful' | 'Top-up already credited';
  units_added: number;
  new_balance: number;
  price_paid: number;
};
