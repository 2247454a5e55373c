import { z } from 'zod';
import { bearer, errorResponse, errors, listEnvelope, listParams, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { LEDGER_CSV_COLUMNS, LEDGER_KINDS, ledgerLine } from './ledger.schemas.ts';
import { dailyUsage, usageQuery } from './usage.ts';

/** GET /transactions's own rules, markdown (shown under it at /docs; the tag's guide is history.guide.md). */
const TRANSACTIONS = md(
  'Organisation administrators and the `finance` role (team members 403 `Only',
  "organisation administrators and finance officers may do this`; API clients: `history:read`): the organisation's ledger, ordered by `id` descending. Filter `kind`",
  '(`verification`, `fixture_verification`, `topup`, `adjustment`; anything else 400), `from`, `to`.',
  'Each line:',
  '```json',
  '{"id": 4312, "kind": "topup", "amount": 1000000, "vat_amount": 75000, "service_charge": 26523,',
  ' "units_delta": 100, "units_before": 7, "units_after": 107, "reference": "TOP-1-0f3c9a7d21b4e8c6",',
  ' "details": {"source": "webhook"}, "created_at": "2026-03-01T09:30:00.000Z",',
  ' "username": "demo-admin", "api_client": null}',
  '```',
  '`amount` is the unit price of a verification, the base amount of a top-up, 0 for fixture calls and',
  'adjustments; `vat_amount` and `service_charge` are set on top-up lines only (else `null`);',
  "`reference` is the verification's `reference_id` or the top-up's reference (`null` on adjustments);",
  "`details` holds the verification's mode and reason, `fixture: true` on fixture calls, the operator's",
  'note on adjustments. `username` and `api_client` say who made the verification or the top-up (see the tag, "Who made a verification"); both are `null` on adjustments.',
  '',
  'With `Accept: text/csv` (see the tag, "CSV export"): `transactions-<org>.csv`, the header row',
  '`id,kind,amount,vat_amount,service_charge,units_delta,units_before,units_after,reference,details,created_at,username,api_client_id,api_client_name,description`',
  '(the `api_client` object flattened into its `client_id` and `name`), `details` as JSON. Exports share',
  'per-organisation and per-server caps (429 with `Retry-After` beyond them: see the tag, "CSV export limits").',
);

/** GET /usage/daily's own rules, markdown (shown under it at /docs). */
const USAGE = md(
  'Organisation administrators and the `finance` role (API clients: `history:read`; team members 403): `?days=N` (1 to 366, default 30; else 400,',
  'not a whole number 422), the last `N` calendar days in Lagos time, oldest first, every day present:',
  '`{"data": [{"day": "2026-11-24", "units": 12, "verifications": 12, "fixture_verifications": 3}, ...]}`',
  '(`units`: units charged by verifications that day; fixture calls are counted but free). Read from the',
  'ledger, so it always agrees with `GET /transactions`.',
);

export function register(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/usage/daily',
    operationId: 'dailyUsage',
    tags: [TAGS.history],
    summary: 'Units used per day',
    description: USAGE,
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
    description: TRANSACTIONS,
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
      403: errorResponse('The caller is neither an organisation administrator nor a finance officer'),
    },
  });
}
