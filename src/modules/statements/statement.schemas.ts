import { z } from 'zod';

// The statement's one declaration: the service's type (statement.ts) and the published document
// (statements.openapi.ts) both come from it.

const date = z.string().meta({ description: 'Lagos calendar day of `at`, yyyy-mm-dd' });
const at = z.iso.datetime().meta({ description: 'When it happened, ISO 8601 UTC (a run of verifications: its first); lines are in this order', example: '2026-11-03T08:15:02.114Z' });
const description = z.string().meta({ description: 'The line in words, as the CSV and PDF say it (for people: match on `kind`)' });
const kobo = (what: string) => z.number().int().meta({ description: `${what}, in kobo (1/100 NGN)` });
const deprecatedKobo = (name: string) => z.number().int().meta({ description: `Deprecated: the same value as \`${name}\` (kobo), under its earlier name; read \`${name}\``, deprecated: true });

const line = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('verifications'),
    date,
    at,
    description,
    count: z.number().int().meta({ description: 'Live verifications (lookups charged) in the run' }),
    units: z.number().int().meta({ description: 'Units debited (live verifications, and face comparisons beyond their lookup), negative' }),
    fixture_count: z.number().int().meta({ description: 'Test-mode calls in the run (free)' }),
    face_match_count: z.number().int().meta({ description: 'How many of them were face matches whose faces were compared: each costs its lookup\'s unit and FACE_MATCH_UNITS - 1 more (the ledger\'s face_match line)' }),
    face_units: z.number().int().meta({ description: 'The face comparisons\' units within `units` (negative; 0 without face matches)' }),
  }),
  z.object({
    kind: z.literal('topup'),
    date,
    at,
    description,
    reference: z.string(),
    invoice: z.string().nullable().meta({ description: 'INV-<year>-<6 digits>' }),
    units: z.number().int().meta({ description: 'Units credited, bonus included' }),
    bonus_units: z.number().int(),
    base_kobo: kobo('units x unit price'),
    vat_kobo: kobo('VAT'),
    fee_kobo: kobo('Processor fee'),
    total_kobo: kobo('What was paid: base + VAT + processor fee'),
    base: deprecatedKobo('base_kobo'),
    vat: deprecatedKobo('vat_kobo'),
    fee: deprecatedKobo('fee_kobo'),
    total: deprecatedKobo('total_kobo'),
  }),
  z.object({ kind: z.literal('adjustment'), date, at, description, units: z.number().int(), note: z.string() }),
  z.object({ kind: z.literal('refund'), date, at, description, reference: z.string(), amount_kobo: kobo('Given back; never credited, so no units'), amount: deprecatedKobo('amount_kobo') }),
]);

export const statementSchema = z
  .object({
    month: z.string().meta({ example: '2026-11' }),
    organisation: z.string(),
    since: z.string().meta({ description: 'Start of the Lagos month, ISO 8601 UTC' }),
    before: z.string().meta({ description: 'Start of the next Lagos month, ISO 8601 UTC' }),
    opening_units: z.number().int(),
    closing_units: z.number().int().meta({ description: 'The balance at the end of the month, or so far (on `as_of`) while it runs' }),
    complete: z.boolean().meta({ description: 'false for the month in progress' }),
    as_of: z.string().meta({ description: 'The Lagos day (yyyy-mm-dd) of the closing balance: the month\'s last day, or today while it runs', example: '2026-11-30' }),
    lines: z.array(line.meta({ id: 'StatementLine' })),
    totals: z.object({
      verification_units: z.number().int(),
      topup_units: z.number().int(),
      adjustment_units: z.number().int(),
      movement_units: z.number().int().meta({ description: 'opening_units + movement_units = closing_units' }),
      topup_total_kobo: kobo('Paid for the month\'s top-ups (their totals)'),
      refund_total_kobo: kobo('Given back for the month\'s refunds'),
      topup_total: deprecatedKobo('topup_total_kobo'),
      refund_total: deprecatedKobo('refund_total_kobo'),
    }),
  })
  .meta({ id: 'Statement' });
