import { z } from 'zod';
import { bearer, errors, json, jsonBody, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { createLinkBody, link, linkDetail, linkPage, linkWithUrl } from './links.schemas.ts';

const WHO = 'Organisation administrators, and API clients of an administrator role holding the `links` scope.';
const idParam = z.object({ id: z.string().regex(/^LNK-[A-Z0-9]{12}$/).meta({ description: 'The link id' }) });

export function register(registry: OpenAPIRegistry): void {
  const Link = link.meta({ id: 'VerificationLink', description: 'A link a person opens to verify themselves; its URL is shown only when it is made.' });
  const WithUrl = linkWithUrl.meta({ id: 'VerificationLinkWithUrl' });
  const Detail = linkDetail.meta({ id: 'VerificationLinkDetail' });
  const Page = linkPage.meta({ id: 'VerificationLinkPage' });
  const New = createLinkBody.meta({ id: 'NewVerificationLink' });

  registry.registerPath({
    method: 'post', path: '/verification-links', operationId: 'createVerificationLink', tags: [TAGS.links],
    summary: 'Make a link for a person to verify themselves',
    description: `${WHO} Send the \`url\` to the person (SMS, e-mail, WhatsApp): it is shown in this answer only. \`reason\` must be a key of \`GET /nimc-reasons\` (400 otherwise).`,
    security: bearer, request: { body: jsonBody(New) },
    responses: { 201: json(WithUrl, 'Link made'), ...errors(400, 401, 403, 415, 422, 429) },
  });
  registry.registerPath({
    method: 'get', path: '/verification-links', operationId: 'listVerificationLinks', tags: [TAGS.links],
    summary: "The organisation's links, newest first", description: WHO, security: bearer,
    request: {
      query: z.object({
        limit: z.number().int().min(1).max(200).optional().meta({ description: 'Rows per page, 1 to 200 (default 50)' }),
        cursor: z.string().optional().meta({ description: 'The `next_cursor` of the previous page; opaque' }),
      }),
    },
    responses: { 200: json(Page), ...errors(400, 401, 403, 422, 429) },
  });
  registry.registerPath({
    method: 'get', path: '/verification-links/{id}', operationId: 'getVerificationLink', tags: [TAGS.links],
    summary: 'One link, with its submissions', description: `${WHO} Each submission names its verification: requery it (free) for the record.`,
    security: bearer, request: { params: idParam },
    responses: { 200: json(Detail), ...errors(401, 403, 404, 429) },
  });
  registry.registerPath({
    method: 'post', path: '/verification-links/{id}/revoke', operationId: 'revokeVerificationLink', tags: [TAGS.links],
    summary: 'Withdraw a link', description: `${WHO} From now on its page says it was withdrawn (410). Revoking a revoked link answers it as it is.`,
    security: bearer, request: { params: idParam },
    responses: { 200: json(Link, 'Link revoked'), ...errors(401, 403, 404, 429) },
  });
}
