import { z } from 'zod';
import { bearer, errorResponse, errors, listEnvelope, listParams, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
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
    description: md(
      'Organisation administrators and the `finance` role, and API clients of those roles (team members: 403 `Only organisation ' +
        'administrators and finance officers may do this`). The organisation\'s own events (who did what and when: see the tag for each ' +
        'event\'s fields and the actions), newest first, in the history lists\' pages (`limit`, `cursor`, `from`, `to` as in History), ' +
        'filtered by `action` (one of the actions; anything else 400). Append-only and hash-chained.',
      '',
      'With `Accept: text/csv`: the whole filtered range as CSV (header row, CRLF, `details` as JSON, `limit` and `cursor` do not apply; ' +
        'a field that would start a spreadsheet formula is prefixed with `\'`); an `Accept` that allows neither JSON nor CSV is 406, as on ' +
        'the other lists.',
    ),
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
      403: errorResponse('The caller is neither an organisation administrator nor a finance officer'),
    },
  });
}
