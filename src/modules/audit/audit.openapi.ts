import { z } from 'zod';
import { bearer, errorResponse, errors, listEnvelope, listParams, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { AUDIT_ACTIONS } from './actions.ts';
import { AUDIT_CSV_COLUMNS, auditEvent } from './audit.schemas.ts';

export function register(registry: OpenAPIRegistry): void {
  const Event = auditEvent.meta({ id: 'AuditEvent' });
  const page = listEnvelope(Event).meta({ id: 'AuditEventPage' });
  registry.registerPath({
    method: 'get',
    path: '/audit-events',
    operationId: 'listAuditEvents',
    tags: [TAGS.audit],
    summary: "The organisation's audit trail",
    description:
      'Organisation administrators only. Who did what and when in the organisation (sign-ins, password and team ' +
      'changes, API clients, wallet movements, every read of a stored record), newest first, a page at a time. ' +
      'Append-only and hash-chained. With `Accept: text/csv` the answer is the whole filtered range as CSV ' +
      '(`limit` and `cursor` do not apply).',
    security: bearer,
    request: {
      query: z.object({
        action: z.enum(AUDIT_ACTIONS).optional().meta({ description: 'Only events of this action' }),
        ...listParams,
      }),
    },
    responses: {
      200: {
        description: 'A page of events (JSON), or the whole range (CSV)',
        content: {
          'application/json': { schema: page },
          'text/csv': {
            schema: z.string().meta({ description: `Columns: ${AUDIT_CSV_COLUMNS.join(', ')}; RFC 4180, CRLF line ends; \`details\` as JSON` }),
          },
        },
      },
      ...errors(401, 406, 422, 429),
      400: errorResponse('A filter, limit or cursor breaks a rule (unknown action, limit above 200, from after to, a cursor this list did not issue)'),
      403: errorResponse('The caller is not an organisation administrator'),
    },
  });
}
