import { z } from 'zod';
import { bearer, errorResponse, errors, json, listEnvelope, listParams, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { verificationSummary } from './history.schemas.ts';
import { MODES, STATUSES } from './verification.schemas.ts';

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
      'requery its reference_id (free, within the retention period).',
    security: bearer,
    request: {
      query: z.object({
        status: z.enum(STATUSES).optional().meta({ description: 'Only verifications in this status' }),
        mode: z.enum(MODES).optional().meta({ description: 'Only verifications of this mode' }),
        ...listParams,
      }),
    },
    responses: {
      200: json(listEnvelope(Summary).meta({ id: 'VerificationPage' }), 'A page of verifications'),
      ...errors(401, 422, 429),
      400: errorResponse('A filter, limit or cursor breaks a rule'),
      403: errorResponse('No organisation account, or a cross-origin call'),
    },
  });
}
