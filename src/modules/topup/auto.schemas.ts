import { z } from 'zod';
import { MAX_TOPUP_UNITS } from './pricing.ts';
import { TOPUP_REFERENCE } from './topup.schemas.ts';

export const BELOW_UNITS_MAX = 1_000_000_000;
export const MAX_PER_DAY_LIMIT = 10;

const belowRule = `below_units must be from 1 to ${BELOW_UNITS_MAX}`;
const perDayRule = `max_per_day must be from 1 to ${MAX_PER_DAY_LIMIT}`;

/** PUT /settings/auto-topup: every setting, and the caller's password (the opt-in is a person's, proven now). */
export const autoTopupPut = z
  .object({
    enabled: z.boolean().meta({ description: 'On: a debit that leaves the balance below `below_units` buys `units` with the saved card' }),
    below_units: z.number().int('below_units must be a whole number').min(1, belowRule).max(BELOW_UNITS_MAX, belowRule).meta({ example: 200 }),
    units: z
      .number()
      .int('units must be a whole number')
      .meta({ description: `Units each charge buys: as for a top-up, a multiple of 100, at least the organisation's minimum, at most ${MAX_TOPUP_UNITS}`, example: 1000 }),
    max_per_day: z.number().int('max_per_day must be a whole number').min(1, perDayRule).max(MAX_PER_DAY_LIMIT, perDayRule).meta({ description: 'Charges at most per Lagos calendar day', example: 2 }),
    password: z.string().min(1, 'password must not be empty').max(1024, 'password must be at most 1024 characters').meta({ description: "The caller's own password, re-entered: automatic top-up spends money without asking again" }),
  })
  .strict()
  .meta({ id: 'AutoTopupSettingsPut' });
export type AutoTopupPut = z.infer<typeof autoTopupPut>;

export const savedCard = z
  .object({
    card_type: z.string().meta({ example: 'visa' }),
    last4: z.string().regex(/^[0-9]{4}$/).meta({ example: '4081' }),
    bank: z.string().nullable(),
    exp_month: z.string().nullable(),
    exp_year: z.string().nullable(),
    from_reference: z.string().regex(TOPUP_REFERENCE).meta({ description: 'The top-up paid with it' }),
    saved_at: z.iso.datetime(),
    declined_at: z.iso.datetime().nullable().meta({ description: 'A charge was declined: not charged again until a new top-up saves a card' }),
  })
  .meta({ id: 'SavedCard', description: "The card of the organisation's last successful top-up, when the processor may charge it again" });

export const autoCharge = z
  .object({
    status: z.enum(['queued', 'charging', 'credited', 'declined', 'failed', 'skipped']),
    units: z.number().int(),
    below_units: z.number().int(),
    balance_units: z.number().int().meta({ description: 'The balance the debit that queued it left' }),
    reference: z.string().regex(TOPUP_REFERENCE).nullable().meta({ description: 'The top-up it charged (its invoice, once credited)' }),
    card: z.string().nullable().meta({ example: 'visa ending 4081' }),
    total_amount_kobo: z
      .number()
      .int()
      .nullable()
      .meta({ description: "What the charge asks of the card, in kobo: its top-up's base + VAT + processor fee (as GET /topup/quote prices them), fixed when the charge started; null while queued and when skipped (nothing was asked)", example: 5467006 }),
    detail: z.string().nullable().meta({ description: 'Why it was declined, failed or skipped' }),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'AutoTopupCharge' });

export const autoTopupAnswer = z
  .object({
    enabled: z.boolean(),
    below_units: z.number().int().nullable().meta({ description: 'null until first set' }),
    units: z.number().int().nullable(),
    max_per_day: z.number().int().nullable(),
    turned_off: z
      .object({ reason: z.literal('card_declined'), at: z.iso.datetime() })
      .nullable()
      .meta({ description: 'Set when the service turned it off (a declined card); cleared when a person saves the settings again' }),
    card: savedCard.nullable(),
    charges_today: z.number().int().meta({ description: 'Charges counted against max_per_day today (Lagos)' }),
    recent_charges: z.array(autoCharge).meta({ description: 'The last 10 charges, newest first' }),
  })
  .meta({ id: 'AutoTopupSettings' });
export type AutoTopupAnswer = z.infer<typeof autoTopupAnswer>;
