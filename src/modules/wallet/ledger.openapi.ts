import { z } from 'zod';
import { bearer, errorResponse, errors, listEnvelope, listParams, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { LEDGER_CSV_COLUMNS, LEDGER_KINDS, ledgerLine } from './ledger.schemas.ts';
import { dailyUsage, usageQuery } from './usage.ts';

export function register(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/usage/daily',
    operationId: 'dailyUsage',
    tags: [TAGS.history],
    summary: 'Units used per day',
    description: 'Organisation administrators only. Read from the ledger: live verifications charged per Lagos day, and fixture calls.',
    security: bearer,
    request: { query: usageQuery },
    responses: { 200: { description: 'Per day, oldest first', content: { 'application/json': { schema: dailyUsage } } }, ...errors(401, 403, 422, 429), 400: errorResponse('days is not 1 to 366') },
  });

  const LedgerLine = ledgerLine.meta({ id: 'LedgerLine' });
  const page = listEnvelope(LedgerLine).meta({ id: 'LedgerPage' });
  registry.registerPath({
    method: 'get',
    path: '/transactions',
    operationId: 'listTransactions',
    tags: [TAGS.history],
    summary: "The organisation's ledger",
    description:
      'Organisation administrators only. Every unit movement of the wallet, newest first, a page at a time. ' +
      'With `Accept: text/csv` the answer is the whole filtered range as CSV (a header row, then one line per ledger line; ' +
      '`limit` and `cursor` do not apply), sent while it is read from the database. Exports share per-organisation and per-server ' +
      'caps (429 with Retry-After beyond them).',
    security: bearer,
    request: {
      query: z.object({
        kind: z.enum(LEDGER_KINDS).optional().meta({ description: 'Only lines of this kind' }),
        ...listParams,
      }),
    },
    responses: {
      200: {
        description: 'A page of ledger lines (JSON), or the whole range (CSV)',
        content: {
          'application/json': { schema: page },
          'text/csv': {
            schema: z.string().meta({ description: `Columns: ${LEDGER_CSV_COLUMNS.join(', ')}; RFC 4180, CRLF line ends; \`details\` as JSON` }),
            example: `${LEDGER_CSV_COLUMNS.join(',')}\r\n42,verification,10000,,,-1,8,7,REF-7K2M9Q4XD1AB,"{""mode"": ""nin"", ""reason"": ""corporate""}",2026-03-01T09:30:00.000Z\r\n`,
          },
        },
      },
      ...errors(401, 406, 422, 429),
      400: errorResponse('A filter, limit or cursor breaks a rule (unknown kind, limit above 200, from after to, a cursor this list did not issue)'),
      403: errorResponse('The caller is not an organisation administrator'),
    },
  });
}
