import { z } from 'zod';
import { cursorParam, timeBoundParam, limitParam } from '../../lib/pagination.ts';
import { topupStatus } from './topup.schemas.ts';

/** The filters of GET /topups, JSON and CSV alike. */
export const topupFilters = z.object({
  status: z.enum(topupStatus.options, `status must be one of ${topupStatus.options.join(', ')}`).optional(),
  from: timeBoundParam('from').optional(),
  to: timeBoundParam('to').optional(),
});
export type TopupFilters = z.infer<typeof topupFilters>;

export const topupListQuery = topupFilters.extend({ limit: limitParam, cursor: cursorParam });
export type TopupListQuery = z.infer<typeof topupListQuery>;

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));
const iso = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString());

/** A top-up as the history reads it; `org_id` and `created_key` stay inside (ownership, cursor). */
export const topupHistoryRow = z.object({
  reference: z.string(),
  org_id: int,
  status: topupStatus,
  units: int,
  bonus_units: int,
  base_amount: int,
  vat_amount: int,
  service_charge: int,
  total_amount: int,
  paid_amount: int.nullable(),
  created_at: iso,
  credited_at: iso.nullable(),
  invoice_number: z.string().nullable(),
  paid_at: iso.nullable(),
  /** created_at to the microsecond, as text: the cursor must name the row exactly. */
  created_key: z.string(),
});
export type TopupHistoryRow = z.infer<typeof topupHistoryRow>;

export const topupView = z.object({
  reference: z.string().meta({ example: 'TOP-42-9f86d081884c7d65' }),
  status: topupStatus.meta({ description: 'pending until paid and credited; abandoned, failed or amount_mismatch when it was not' }),
  units: z.number().int().meta({ description: 'Units bought' }),
  bonus_units: z.number().int().meta({ description: 'Free units added on credit' }),
  base_amount: z.number().int().meta({ description: 'units x unit cost, kobo' }),
  vat_amount: z.number().int().meta({ description: 'kobo' }),
  service_charge: z.number().int().meta({ description: 'kobo' }),
  total_amount: z.number().int().meta({ description: 'What the payer was asked to pay, kobo' }),
  paid_amount: z.number().int().nullable().meta({ description: 'What the processor reported paid, kobo; null until a payment was seen' }),
  created_at: z.string().meta({ description: 'ISO 8601, UTC' }),
  credited_at: z.string().nullable().meta({ description: 'When the wallet was credited; null until then' }),
  invoice_number: z.string().nullable().meta({ description: 'INV-<year>-<6 digits> once credited (GET /topups/{reference}/invoice); null until then' }),
  // Last, so that the CSV's earlier columns keep their positions for readers that go by position.
  paid_at: z.iso.datetime().nullable().meta({ description: "When the payer paid, as the processor's answer says (ISO 8601, UTC); null until a payment was seen, and on top-ups paid before it was recorded", example: '2026-11-30T14:05:09.000Z' }),
});
export type TopupView = z.infer<typeof topupView>;

/** The CSV export's columns: a top-up's fields in their JSON order. */
export const TOPUP_CSV_COLUMNS = Object.keys(topupView.shape) as (keyof TopupView)[];
