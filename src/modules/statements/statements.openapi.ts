import { z } from 'zod';
import { monthPathParams } from '../../lib/lagos-month.ts';
import { bearer, errorResponse, errors, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { STATEMENT_CSV_COLUMNS } from './statement-files.ts';
import { statementSchema } from './statement.schemas.ts';

/** GET /statements/{month}'s own rules, markdown (shown under it at /docs; the tag's guide is history.guide.md). */
const STATEMENT = md(
  'Organisation administrators and the `finance` role (API clients: `history:read`). One Lagos calendar',
  'month of the wallet, read from the ledger in one snapshot: the opening balance (after the last ledger',
  "line before the month; 0 before the first), live verifications summed per run (the lines of one Lagos day",
  'between two top-ups or adjustments, with their free test-mode calls and their face matches: a face match is in its lookup\'s run even when a top-up came between the two debits), each top-up (units with bonus, base, VAT, processor fee and total, and its invoice',
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
