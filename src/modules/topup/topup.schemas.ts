import { z } from 'zod';

/** A top-up reference: `TOP-<organisation number>-<16 lowercase hex>`. */
export const TOPUP_REFERENCE = /^TOP-[0-9]+-[0-9a-f]{16}$/;

/** A path naming a top-up (`GET /topups/{reference}` and its invoice): the routes' check and the OpenAPI document's pattern. */
export const topupPathParams = z.object({
  reference: z
    .string()
    .regex(TOPUP_REFERENCE, 'reference is not a top-up reference (TOP-<org>-<16 hex>)')
    .meta({ description: 'The reference `POST /topup/initialize` gave: TOP-<organisation>-<16 lowercase hex>', example: 'TOP-42-9f86d081884c7d65' }),
});

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

export const topupStatus = z.enum([
  'pending',
  'credited',
  'failed',
  'abandoned',
  'amount_mismatch',
  // Paid for a retired organisation: never credited, to be refunded (topup:refund), being refunded, refunded.
  'refund_due',
  'refunding',
  'refunded',
  // Credited, then reversed by the processor (a chargeback): the operator settles it with wallet:adjust.
  'charged_back',
]);
export type TopupStatus = z.infer<typeof topupStatus>;

export const topupRow = z.object({
  reference: z.string(),
  org_id: int,
  /** The user who started it (its receipt goes to them too); null for an API client's or an automatic one. */
  user_id: int.nullable(),
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

/**
 * The price of a top-up, in integer kobo. The one declaration of this shape: pricing returns it, the
 * initialize answer embeds it and the OpenAPI document describes it from these fields.
 */
export const topupPrice = z.object({
  base_amount: z.number().int().meta({ description: 'Revenue part of the charge (units x unit_cost), kobo' }),
  vat_amount: z.number().int().meta({ description: 'VAT, kobo' }),
  service_charge: z.number().int().meta({ description: "Processor fee: the payment processor's fee passed through, kobo (the invoice and receipt say Processor fee)" }),
  total_amount: z.number().int().meta({ description: 'What the payer pays: base + VAT + processor fee, kobo' }),
  units: z.number().int().meta({ description: 'Units requested' }),
  unit_cost: z.number().int().meta({ description: 'Price per unit, kobo' }),
  discount: z.null().meta({ description: 'Always null: no discount applies' }),
  bonus_units: z.number().int().meta({ description: 'Free units added on credit (hosted affiliate tenants, until the promotion ends); 0 otherwise' }),
});
export type TopupPrice = z.infer<typeof topupPrice>;

/** The payment link and its price; the field order is the order of the published document. */
export const initializeResponse = z.object({
  authorization_url: z.url().meta({ description: "Payment link at the processor's hosted page; send the payer there" }),
  reference: z.string().regex(TOPUP_REFERENCE).meta({ description: 'Keep it to verify and reconcile', example: 'TOP-42-9f86d081884c7d65' }),
  access_code: z.string().meta({ description: 'Processor access code' }),
  ...topupPrice.shape,
  currency: z.literal('NGN').meta({ description: 'Every amount is an integer number of kobo (1/100 NGN)' }),
});
export type InitializeResponse = z.infer<typeof initializeResponse>;

export const verifyResponse = z.object({
  message: z.enum(['Top-up successful', 'Top-up already credited']).meta({
    description: '`Top-up successful` on the call that credits; `Top-up already credited` when the webhook or an earlier verify did',
  }),
  units_added: z.number().int().meta({ description: 'Units credited, bonus included' }),
  new_balance: z.number().int().meta({ description: 'Wallet balance in units after the credit' }),
  price_paid: z.number().int().meta({ description: 'Base amount (revenue), kobo' }),
});
export type VerifyResponse = z.infer<typeof verifyResponse>;
