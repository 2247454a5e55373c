import { z } from 'zod';
import { serialIdParam } from '../../lib/http.ts';
import { bearer, errorResponse, errors, json, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, organisationPage, organisationView, pageQuery } from './platform.schemas.ts';

// The query as a caller writes it: limit is a number (the route parses the query string's text).
const pageParams = pageQuery.extend({
  limit: z.number().int().min(1).max(MAX_LIMIT).optional().meta({ description: `Page size, 1 to ${MAX_LIMIT}; default ${DEFAULT_LIMIT}`, example: DEFAULT_LIMIT }),
});

export function register(registry: OpenAPIRegistry): void {
  const View = organisationView.meta({ id: 'PlatformOrganisation' });
  const forbidden = errorResponse('Not a platform administrator (organisation administrators and members included)');
  registry.registerPath({
    method: 'get',
    path: '/platform/organisations',
    operationId: 'listPlatformOrganisations',
    tags: [TAGS.platform],
    summary: 'Every organisation, for platform administrators',
    description:
      'Balance, reserved units, lifetime units and loyalty badge, subscription, tenancy, users and last credited top-up of every organisation ' +
      '(retired ones included, with `deleted_at`), in id order. The same view is a page at `/admin/organisations`.',
    security: bearer,
    request: { query: pageParams },
    responses: {
      200: json(organisationPage.extend({ data: z.array(View) }).meta({ id: 'PlatformOrganisationPage' }), 'One page of organisations'),
      ...errors(401, 429),
      400: errorResponse('limit is not an integer from 1 to 200, or cursor is not a next_cursor of this list'),
      403: forbidden,
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/platform/organisations/{id}',
    operationId: 'getPlatformOrganisation',
    tags: [TAGS.platform],
    summary: 'One organisation, for platform administrators',
    security: bearer,
    request: { params: z.object({ id: serialIdParam.meta({ description: 'Organisation id (org_number)', example: '1' }) }) },
    responses: {
      200: json(View, 'The organisation'),
      ...errors(401, 429),
      403: forbidden,
      404: errorResponse('`Organisation not found`'),
    },
  });
}
