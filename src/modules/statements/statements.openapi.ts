import { z } from 'zod';
import { bearer, errorResponse, errors, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { STATEMENT_CSV_COLUMNS } from './statement-files.ts';

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

/** GET /statements/{month}'s own rules, markdown (shown under it at /docs; the tag's guide is history.guide.md). */
const STATEMENT = md(
  'Organisation administrators and the `finance` role (API clients: `history:read`). One Lagos calendar',
  'month of the wallet, read from the ledger in one snapshot: the opening balance (after the last ledger',
  "line before the month; 0 before the first), live verifications summed per run (the lines of one Lagos day",
  'between two top-ups or adjustments, with their free test-mode calls and their face matches), each top-up (units with bonus, base, VAT, processor fee and total, and its invoice',
  'number), each adjustment with its note, each payment refunded in the month (never credited, so no',
  'units), and the closing balance; `opening_units + totals.movement_units = closing_units`.',
  '',
  'Lines are in time order: by `at` (the instant each happened; a run of verifications: its first), at one instant',
  'usage before money in, corrections and money back, then by the ledger\'s order (a refund: its reference), in JSON, CSV and PDF',
  'alike. Each line has a `description`, the words the CSV and PDF print; a run with face matches says what one costs, e.g.',
  '`3 live verifications, 1 with face match (2 units: lookup 1 + face 1)`. Money fields are kobo and say so: `base_kobo`,',
  '`vat_kobo`, `fee_kobo`, `total_kobo`, `amount_kobo`, `totals.topup_total_kobo`, `totals.refund_total_kobo`; the earlier',
  'names without `_kobo` (`base`, `vat`, `fee`, `total`, `amount`, `totals.topup_total`, `totals.refund_total`) carry the',
  'same values and are deprecated.',
  '',
  'Answered as',
  'JSON, or as a file with `Accept: text/csv` (`statement-<month>.csv`: columns',
  '`date,kind,reference,description,units,balance_units,base_naira,vat_naira,fee_naira,total_naira`, the',
  'first row the opening balance and the last the closing, money as plain naira decimals) or',
  '`Accept: application/pdf` (amounts as `NGN 11,015.23`). A month that is not `yyyy-mm`, or has not',
  'begun: 400; another `Accept`: 406; team members: 403. The month in progress can be asked for: its',
  'closing row is the balance so far, dated today (`complete: false`, `as_of`; the PDF and CSV say so).',
  '',
  'On the first days of a month each finance user (active, with an e-mail address) gets one e-mail linking the statement of the month',
  'that ended in the portal (`PUBLIC_BASE_URL/portal/history?statement=yyyy-mm`), once per user and month.',
);

export function register(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/statements/{month}',
    operationId: 'getStatement',
    tags: [TAGS.history],
    summary: "A month's statement of the wallet",
    description: STATEMENT,
    security: bearer,
    request: { params: z.object({ month: z.string().meta({ example: '2026-11', description: 'yyyy-mm, Lagos time; not a month yet to begin' }) }) },
    responses: {
      200: {
        description: 'The statement',
        content: {
          'application/json': { schema: statementSchema },
          'text/csv': { schema: z.string().meta({ description: `Columns: ${STATEMENT_CSV_COLUMNS.join(', ')}; the first row is the opening balance, the last the closing; money in naira (plain decimals)` }) },
          'application/pdf': { schema: z.string().meta({ format: 'binary', description: 'PDF document' }) },
        },
      },
      ...errors(401, 406, 429),
      400: errorResponse('Not a month (yyyy-mm), or a month not yet begun'),
      403: errorResponse('Not an administrator or finance user'),
    },
  });
}
