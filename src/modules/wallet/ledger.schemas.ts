import { z } from 'zod';
import { cursorParam, timeBoundParam, limitParam } from '../../lib/pagination.ts';

export const LEDGER_KINDS = ['verification', 'fixture_verification', 'topup', 'adjustment', 'face_match'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** The filters of GET /transactions, JSON and CSV alike. */
export const ledgerFilters = z.object({
  kind: z.enum(LEDGER_KINDS, `kind must be one of ${LEDGER_KINDS.join(', ')}`).optional(),
  from: timeBoundParam('from').optional(),
  to: timeBoundParam('to').optional(),
});

/** A JSON page adds its size and where to go on from. */
export const ledgerPageQuery = ledgerFilters.extend({ limit: limitParam, cursor: cursorParam });

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));
const intOrNull = z.union([z.number(), z.bigint(), z.string(), z.null()]).transform((v) => (v === null ? null : Number(v)));

/** One ledger line as the database hands it over (also the row of the CSV stream). */
export const ledgerRow = z.object({
  id: int,
  kind: z.string(),
  description: z.string(),
  amount: int,
  vat_amount: intOrNull,
  service_charge: intOrNull,
  units_delta: int,
  units_before: int,
  units_after: int,
  reference: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString()),
  username: z.string().nullable(),
  client_id: z.string().nullable(),
  client_name: z.string().nullable(),
});
export type LedgerRow = z.infer<typeof ledgerRow>;

/** The published shape of a ledger line; its field order is the CSV's column order. */
export const ledgerLine = z.object({
  id: z.number().int().meta({ description: 'Ledger line id; higher is newer' }),
  kind: z.string().meta({ description: 'verification (1 unit debited), fixture_verification (free), topup (credit), adjustment (operator), face_match (a compared face match\'s units beyond its lookup\'s, FACE_MATCH_UNITS - 1)', example: 'verification' }),
  description: z.string().meta({
    description:
      'What the line is and why it costs what it does, in words. A face match is two lines, its lookup\'s and its comparison\'s, and both say the whole cost, ' +
      'e.g. `NIN verification with face match (2 units: lookup 1 + face 1): the lookup\'s 1` and `...: the face comparison\'s 1`; ' +
      'a face match whose faces were not compared says `NIN verification with face match, faces not compared (1 unit: lookup only)`. ' +
      'Other lines: `NIN verification (1 unit)`, `Test-mode NIN verification (free)`, `Top-up of 1000 units + 50 bonus`, `Adjustment: <note>`. ' +
      'Text for people: match on `kind`, not on these words.',
    example: "NIN verification with face match (2 units: lookup 1 + face 1): the face comparison's 1",
  }),
  amount: z.number().int().meta({ description: 'Money in kobo: the unit price for a verification, the base amount for a top-up, 0 otherwise' }),
  vat_amount: z.number().int().nullable().meta({ description: 'VAT of a top-up, kobo; null on other lines' }),
  service_charge: z.number().int().nullable().meta({ description: 'Processor fee passed through on a top-up, kobo; null on other lines' }),
  units_delta: z.number().int().meta({ description: 'Units added (positive) or taken (negative)' }),
  units_before: z.number().int(),
  units_after: z.number().int(),
  reference: z.string().nullable().meta({ description: 'reference_id of a verification or reference of a top-up; null for adjustments' }),
  details: z.record(z.string(), z.unknown()).meta({ description: 'What the line records: mode and reason of a verification, the note of an adjustment, `fixture: true` on fixture calls' }),
  created_at: z.string().meta({ description: 'ISO 8601, UTC', example: '2026-03-01T09:30:00.000Z' }),
  username: z.string().nullable().meta({ description: 'The user who made the verification or the top-up; null for an API client and on adjustments' }),
  api_client: z
    .object({ client_id: z.string(), name: z.string() })
    .nullable()
    .meta({ description: 'The API client that made the verification or the top-up; null for a user and on adjustments' }),
});
export type LedgerLine = z.infer<typeof ledgerLine>;

/**
 * The CSV's columns: the line's fields in order, the API client flattened into two columns, and the
 * description last (added after the others, so that their positions hold for readers that go by them).
 */
export const LEDGER_CSV_COLUMNS = [
  ...(Object.keys(ledgerLine.shape) as (keyof LedgerLine)[]).filter((k) => k !== 'api_client' && k !== 'description'),
  'api_client_id',
  'api_client_name',
  'description',
] as const;
export type LedgerCsvColumn = (typeof LEDGER_CSV_COLUMNS)[number];
