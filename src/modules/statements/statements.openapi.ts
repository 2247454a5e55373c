import { z } from 'zod';
import { monthPathParams } from '../../lib/lagos-month.ts';
import { bearer, errorResponse, errors, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { STATEMENT_CSV_COLUMNS } from './statement-files.ts';

const date = z.string().meta({ description: 'Lagos calendar day, yyyy-mm-dd' });

const line = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('verifications'), date, count: z.number().int(), units: z.number().int().meta({ description: 'Units debited that day (live verifications, and face comparisons beyond their lookup), negative' }), fixture_count: z.number().int().meta({ description: 'Test-mode calls that day (free)' }) }),
  z.object({
    kind: z.literal('topup'),
    date,
    reference: z.string(),
    invoice: z.string().nullable().meta({ description: 'INV-<year>-<6 digits>' }),
    units: z.number().int().meta({ description: 'Units credited, bonus included' }),
    bonus_units: z.number().int(),
    base: z.number().int().meta({ description: 'kobo' }),
    vat: z.number().int().meta({ description: 'kobo' }),
    fee: z.number().int().meta({ description: 'Processor fee, kobo' }),
    total: z.number().int().meta({ description: 'kobo' }),
  }),
  z.object({ kind: z.literal('adjustment'), date, units: z.number().int(), note: z.string() }),
  z.object({ kind: z.literal('refund'), date, reference: z.string(), amount: z.number().int().meta({ description: 'kobo given back; never credited, so no units' }) }),
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
      topup_total: z.number().int().meta({ description: 'kobo' }),
      refund_total: z.number().int().meta({ description: 'kobo' }),
    }),
  })
  .meta({ id: 'Statement' });

/** GET /statements/{month}'s own rules, markdown (shown under it at /docs; the tag's guide is history.guide.md). */
const STATEMENT = md(
  'Organisation administrators and the `finance` role (API clients: `history:read`). One Lagos calendar',
  'month of the wallet, read from the ledger in one snapshot: the opening balance (after the last ledger',
  "line before the month; 0 before the first), live verifications summed per day (with the day's free",
  'test-mode calls), each top-up (units with bonus, base, VAT, processor fee and total, and its invoice',
  'number), each adjustment with its note, each payment refunded in the month (never credited, so no',
  'units), and the closing balance; `opening_units + totals.movement_units = closing_units`. Answered as',
  'JSON, or as a file with `Accept: text/csv` (`statement-<month>.csv`: columns',
  '`date,kind,reference,description,units,balance_units,base_naira,vat_naira,fee_naira,total_naira`, the',
  'first row the opening balance and the last the closing, money as plain naira decimals) or',
  '`Accept: application/pdf` (amounts as `NGN 11,015.23`). A month that is not `yyyy-mm` from 2000-01, or has not',
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
    request: { params: monthPathParams },
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
      400: errorResponse('Not a month (yyyy-mm from 2000-01), or a month not yet begun'),
      403: errorResponse('Not an administrator or finance user'),
    },
  });
}
