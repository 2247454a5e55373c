import { z } from 'zod';
import { bearer, errorResponse, errors, listEnvelope, listParams, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { VERIFICATION_CSV_COLUMNS, verificationSummary } from './history.schemas.ts';
import { DELIVERIES, MODES, STATUSES } from './verification.schemas.ts';

export function register(registry: OpenAPIRegistry): void {
  const Summary = verificationSummary.meta({ id: 'VerificationSummary' });
  registry.registerPath({
    method: 'get',
    path: '/verifications',
    operationId: 'listVerifications',
    tags: [TAGS.history],
    summary: "The organisation's verifications",
    description:
      'Administrators and team members. Newest first, a page at a time. No personal data: to read a record again, ' +
      'requery its reference_id (free, within the retention period). With `Accept: text/csv` the answer is the whole filtered range as CSV ' +
      '(`limit` and `cursor` do not apply), streamed; exports share per-organisation and per-server caps (429 with Retry-After beyond them).',
    security: bearer,
    request: {
      query: z.object({
        status: z.enum(STATUSES).optional().meta({ description: 'Only verifications in this status' }),
        mode: z.enum([...DELIVERIES, ...MODES]).optional().meta({ description: 'Only verifications asked for this way (sync, async, batch); a kind (nin, vnin, phone, demography, match) is accepted too' }),
        kind: z.enum(MODES).optional().meta({ description: 'Only verifications that looked up this kind of identifier' }),
        delivery: z.enum(DELIVERIES).optional().meta({ description: 'Only verifications asked for this way' }),
        batch_id: z.string().optional().meta({ description: 'Only the rows of this batch', example: 'BAT-7K2M9Q4XD1AB' }),
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
