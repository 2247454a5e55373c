import { z } from 'zod';
import { bearer, errorResponse, errors, listEnvelope, listParams, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { VERIFICATION_CSV_COLUMNS, verificationFilters, verificationSummary } from './history.schemas.ts';
import { DELIVERIES, MODES, STATUSES } from './verification.schemas.ts';

/** GET /verifications's own rules, markdown (shown under it at /docs; the tag's guide is history.guide.md). */
const VERIFICATIONS = md(
  'Administrators and team members: everyone of the organisation sees all its verifications (API clients:',
  '`history:read`). Filters `status` (`pending`, `found`, `not_found`, `failed`, `expired`), `mode`',
  '(`sync`, `async`, `batch`, or a `kind` name: see below), `kind` (`nin`, `vnin`, `phone`, `demography`,',
  '`match`), `delivery` (`sync`, `async`, `batch`), `batch_id` (`BAT-` and 12 characters), `from`, `to`.',
  'Each verification:',
  '```json',
  '{"reference_id": "REF-7K2M9Q4XD1AB", "mode": "sync", "kind": "nin", "delivery": "sync", "batch_id": null, "reason": "corporate",',
  ' "status": "found", "verdict": "verified", "verdict_reasons": [], "charged": true, "fixture": false, "username": "demo-member", "api_client": null, "consent": null,',
  ' "created_at": "2026-03-01T09:31:02.118Z"}',
  '```',
  '`mode` is how the verification was asked for: `sync` (answered in the request), `async`',
  '(`Prefer: respond-async`) or `batch` (a row of a batch, whose id is `batch_id`; `null` otherwise).',
  '`kind` is what was looked up: `nin`, `vnin`, `phone`, `demography` or `match`. `delivery` repeats',
  '`mode`. **One change of meaning inside `v1`, announced here:** before asynchronous verification,',
  '`mode` carried what `kind` carries now; the contract of asynchronous verification gives `mode` the',
  'names `sync`, `async` and `batch`, and we follow it. Clients that filtered with `?mode=nin` keep',
  'working: the `mode` filter takes both sets of names (they do not overlap), and `?kind=` filters on the',
  'lookup alone. Waiting lookups are `?status=pending`.',
  '`charged` is read from the ledger (a verification whose record was erased shows `expired` and still',
  '`charged: true`). `verdict` and `verdict_reasons` are as on the requery (Webhooks, section Verdict); a',
  'pending row has none yet, an expired one none any more (null). The CSV export has no verdict column.',
  '',
  'Who made each verification (`username`, `api_client`): see the tag.',
  '',
  'With `Accept: text/csv` (see the tag, "CSV export"), it answers the whole filtered range as',
  '`verifications-<org>.csv`, columns',
  '`reference_id,mode,kind,batch_id,reason,status,charged,fixture,username,api_client_id,api_client_name,consent_obtained_at,consent_channel,consent_notice_version,created_at`',
  "(`charged` and `fixture` as `true`/`false`, the consent's fields empty when none was recorded), newest first, with the same streaming, headers and limits",
  'as every export. No personal data ever appears in',
  'this list (no NIN, phone, names, date of birth or photo): `POST /verify-nin/requery` with the',
  '`reference_id` reads a record again, free, within the retention period.',
);

export function register(registry: OpenAPIRegistry): void {
  const Summary = verificationSummary.meta({ id: 'VerificationSummary' });
  registry.registerPath({
    method: 'get',
    path: '/verifications',
    operationId: 'listVerifications',
    tags: [TAGS.history],
    summary: "The organisation's verifications",
    description: VERIFICATIONS,
    security: bearer,
    request: {
      query: z.object({
        status: z.enum(STATUSES).optional().meta({ description: 'Only verifications in this status' }),
        mode: z.enum([...DELIVERIES, ...MODES]).optional().meta({ description: `Only verifications asked for this way (${DELIVERIES.join(', ')}); a kind (${MODES.join(', ')}) is accepted too` }),
        kind: z.enum(MODES).optional().meta({ description: 'Only verifications that looked up this kind of identifier' }),
        delivery: z.enum(DELIVERIES).optional().meta({ description: 'Only verifications asked for this way' }),
        batch_id: verificationFilters.shape.batch_id.meta({ description: 'Only the rows of this batch', example: 'BAT-7K2M9Q4XD1AB' }),
        ...listParams,
      }),
    },
    responses: {
      200: {
        description: 'A page of verifications (JSON), or the whole range (CSV)',
        content: {
          'application/json': { schema: listEnvelope(Summary).meta({ id: 'VerificationPage' }) },
          'text/csv': { schema: z.string().meta({ description: `Columns: ${VERIFICATION_CSV_COLUMNS.join(', ')}; RFC 4180, CRLF line ends` }) },
        },
      },
      ...errors(401, 406, 422, 429),
      400: errorResponse('A filter, limit or cursor breaks a rule'),
      403: errorResponse('No organisation account, or a cross-origin call'),
    },
  });
}
