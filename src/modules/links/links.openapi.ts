import { z } from 'zod';
import { bearer, errors, json, jsonBody, md, pageParams, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { createLinkBody, link, linkDetail, linkPage, linkWithUrl } from './links.schemas.ts';

const WHO = 'Organisation administrators, and API clients of an administrator role holding the `links` scope.';
/** The operations' own rules, markdown (shown under each operation at /docs; the tag's guide is links.guide.md). */
const CREATE = md(
  `${WHO} \`{"reason", "purpose", "require_face": true, "liveness": true, "expires_in_hours": 72, "max_uses": 1, "client_ref"}\`:`,
  '',
  '- `reason` a key of `GET /nimc-reasons` (400 otherwise; its label is shown to the person);',
  '- `purpose` up to 200 characters, shown to the person;',
  '- `expires_in_hours` 1 to 720 (default 72); `max_uses` 1 to 1000 (default 1); `require_face` default true (false: the page runs ' +
    '`POST /verify-nin/vnin` without a selfie);',
  '- `liveness` default as `require_face`: the page has the person turn their head on request before their camera (a liveness ' +
    'check, docs/liveness.md) in place of a selfie; `false` keeps the selfie; `true` with `require_face: false` is refused (400);',
  '- `client_ref` your own reference (up to 100 characters, never shown to the person).',
  '',
  'The 201 answer carries `url` (`<PUBLIC_BASE_URL>/v/<token>`, the token 128 random bits): **it is shown once**, since only the ' +
    "token's hash is kept. Send it to the person (SMS, e-mail, WhatsApp). Lost it: revoke the link and make another.",
);
const GET = md(
  `${WHO} \`submissions\` lists each verification the page made (\`reference_id\`, \`status\`, \`code\`, \`face\` as in the face ` +
    "match's answer, `submitted_at`; newest first, the last 200). A submission is `pending` while its verification runs, then takes " +
    "its end; one interrupted before any verification was recorded ends `abandoned` (nothing charged, its use back). Requery a " +
    "submission's `reference_id` (free) for the record: the page never shows it to the person. The link's `status` is `active`, " +
    '`expired`, `used_up`, `revoked` or `suspended` (its maker may no longer make links: see the tag).',
);
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
    description: CREATE,
    security: bearer, request: { body: jsonBody(New) },
    responses: { 201: json(WithUrl, 'Link made'), ...errors(400, 401, 403, 415, 422, 429) },
  });
  registry.registerPath({
    method: 'get', path: '/verification-links', operationId: 'listVerificationLinks', tags: [TAGS.links],
    summary: "The organisation's links, newest first", description: `${WHO} Newest first, in cursor pages like the other lists.`, security: bearer,
    request: {
      query: z.object(pageParams),
    },
    responses: { 200: json(Page), ...errors(400, 401, 403, 422, 429) },
  });
  registry.registerPath({
    method: 'get', path: '/verification-links/{id}', operationId: 'getVerificationLink', tags: [TAGS.links],
    summary: 'One link, with its submissions', description: GET,
    security: bearer, request: { params: idParam },
    responses: { 200: json(Detail), ...errors(401, 403, 404, 429) },
  });
  registry.registerPath({
    method: 'post', path: '/verification-links/{id}/revoke', operationId: 'revokeVerificationLink', tags: [TAGS.links],
    summary: 'Withdraw a link', description: `${WHO} Withdraws it at once: from now on its page says it was withdrawn (410). Revoking a revoked link answers 409 \`This verification link is already revoked\` (and records no second audit event).`,
    security: bearer, request: { params: idParam },
    responses: { 200: json(Link, 'Link revoked'), ...errors(401, 403, 404, 409, 429) },
  });
}
