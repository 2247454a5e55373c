import { z } from 'zod';
import { TARGET_REFUSED } from './address-guard.ts';
import { bearer, errorResponse, errors, json, jsonBody, listEnvelope, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { REDELIVERIES_PER_HOUR } from './endpoints.ts';
import { createEndpointBody, delivery, endpoint, endpointList, endpointWithSecret, patchEndpointBody } from './webhooks.schemas.ts';

const WHO = 'Organisation administrators, and API clients of an administrator role holding the `webhooks` scope.';
/** The operations' own rules, markdown (shown under each operation at /docs; the tag's guide is webhooks.guide.md). */
const CREATE = md(
  `${WHO} \`events\` takes the event names of the tag's table, or \`["*"]\`. The answer carries the signing secret (\`whsec_...\`), once.`,
  '',
  '- The URL must be `https` and its host must resolve only to public addresses (400 otherwise), checked here and again at every ' +
    'delivery against the address actually connected. Link-local and cloud metadata addresses (`169.254.0.0/16`, `fd00:ec2::254`) are ' +
    'refused everywhere; the sandbox (`npm start` with no real upstream) also accepts `http` and loopback (this host\'s own interface addresses judged as loopback), but not the stack\'s own ports ' +
    '(the API, the payment simulator, the mail sink, the metrics; on the identity simulator\'s port only its `/sandbox/hooks/{name}` receiver). ' +
    `Every refused address answers the same detail, whatever the reason (a name that does not resolve included): \`${TARGET_REFUSED}\`.`,
  '- An organisation has at most 20 endpoints (`WEBHOOK_MAX_ENDPOINTS`; switched off ones count): 409 beyond.',
);
const idParam = z.object({ id: z.string().regex(/^we_[0-9a-f]{24}$/).meta({ description: 'The endpoint id' }) });

export function register(registry: OpenAPIRegistry): void {
  const Endpoint = endpoint.meta({ id: 'WebhookEndpoint', description: 'Where the organisation receives its events. The secret is never shown again after creation or rotation.' });
  const WithSecret = endpointWithSecret.meta({ id: 'WebhookEndpointWithSecret' });
  const List = endpointList.meta({ id: 'WebhookEndpointList' });
  const New = createEndpointBody.meta({ id: 'NewWebhookEndpoint' });
  const Change = patchEndpointBody.meta({ id: 'WebhookEndpointChange', description: 'At least one of `url`, `events`, `enabled`, `description`.', minProperties: 1 });
  const Delivery = delivery.meta({ id: 'WebhookDelivery', description: 'One event sent (or being sent) to one endpoint, with every try counted.' });
  const Page = listEnvelope(Delivery).meta({ id: 'WebhookDeliveryPage' });
  const Test = z.object({ event_id: z.string(), type: z.literal('ping') }).meta({ id: 'WebhookTest' });
  const disabled = errorResponse('The endpoint is disabled: enable it first');

  registry.registerPath({
    method: 'post', path: '/webhook-endpoints', operationId: 'createWebhookEndpoint', tags: [TAGS.webhookEndpoints],
    summary: 'Register an endpoint', description: CREATE,
    security: bearer, request: { body: jsonBody(New) },
    responses: { 201: json(WithSecret, 'Endpoint registered'), ...errors(400, 401, 403, 415, 422, 429), 409: errorResponse('The organisation has the most endpoints allowed: delete one first') },
  });
  registry.registerPath({
    method: 'get', path: '/webhook-endpoints', operationId: 'listWebhookEndpoints', tags: [TAGS.webhookEndpoints],
    summary: "The organisation's endpoints", description: WHO, security: bearer,
    responses: { 200: json(List), ...errors(401, 403, 429) },
  });
  registry.registerPath({
    method: 'get', path: '/webhook-endpoints/{id}', operationId: 'getWebhookEndpoint', tags: [TAGS.webhookEndpoints],
    summary: 'One endpoint', description: WHO, security: bearer, request: { params: idParam },
    responses: { 200: json(Endpoint), ...errors(401, 403, 404, 429) },
  });
  registry.registerPath({
    method: 'patch', path: '/webhook-endpoints/{id}', operationId: 'updateWebhookEndpoint', tags: [TAGS.webhookEndpoints],
    summary: 'Change the URL, the events, or switch it on or off',
    description: `${WHO} The URL follows the rules of \`POST /webhook-endpoints\`. Switching off fails its pending deliveries; an endpoint the service disabled (a \`410 Gone\`, or every try failed for 3 days: \`disabled_reason\` says which) is switched on again with \`{"enabled": true}\`, which clears \`disabled_reason\` and receives the events from then on (past ones: redeliver).`,
    security: bearer, request: { params: idParam, body: jsonBody(Change) },
    responses: { 200: json(Endpoint, 'Endpoint changed'), ...errors(400, 401, 403, 404, 415, 422, 429) },
  });
  registry.registerPath({
    method: 'delete', path: '/webhook-endpoints/{id}', operationId: 'deleteWebhookEndpoint', tags: [TAGS.webhookEndpoints],
    summary: 'Delete an endpoint', description: `${WHO} Its pending deliveries fail; its secret is erased.`, security: bearer, request: { params: idParam },
    responses: { 204: { description: 'Deleted' }, ...errors(401, 403, 404, 429) },
  });
  registry.registerPath({
    method: 'post', path: '/webhook-endpoints/{id}/rotate-secret', operationId: 'rotateWebhookSecret', tags: [TAGS.webhookEndpoints],
    summary: 'A new signing secret', description: `${WHO} The new secret is shown once, in this answer. For 24 hours every delivery carries two signatures in each scheme, one with each secret (two \`v1=\` in \`Idverify-Signature\`, two \`v1,...\` in \`webhook-signature\`), so the receiver can switch without losing an event. An endpoint whose secret predates the \`whsec_<standard base64>\` form gets one of that form here.`,
    security: bearer, request: { params: idParam },
    responses: { 200: json(WithSecret, 'Secret rotated'), ...errors(401, 403, 404, 429) },
  });
  registry.registerPath({
    method: 'post', path: '/webhook-endpoints/{id}/test', operationId: 'testWebhookEndpoint', tags: [TAGS.webhookEndpoints],
    summary: 'Send a ping now',
    description:
      `${WHO} A \`ping\` event to this endpoint only, delivered at once and logged like any other. At most 10 pings to an endpoint within an hour (\`WEBHOOK_PINGS_PER_HOUR\`) ` +
      "(a pending ping does not hold the next back): 429 `ping_limit` beyond, with `Retry-After` saying when the oldest leaves the hour. Each ping is on the audit trail (`webhook_endpoint.pinged`).",
    security: bearer, request: { params: idParam },
    responses: {
      202: json(Test, 'Ping queued'),
      ...errors(401, 403, 404),
      409: disabled,
      429: errorResponse(
        '`ping_limit`: the hour\'s pings (10 by default) were sent to this endpoint within the last hour (`Retry-After`: when the oldest leaves it). Also the request rate limits (no `code`).',
        z.object({ detail: z.string(), code: z.enum(['ping_limit']).optional() }),
      ),
    },
  });
  registry.registerPath({
    method: 'get', path: '/webhook-endpoints/{id}/deliveries', operationId: 'listWebhookDeliveries', tags: [TAGS.webhookEndpoints],
    summary: "The endpoint's deliveries, newest first", description: `${WHO} Every delivery of an event to this endpoint, with its tries, newest first, in cursor pages like the other lists.`, security: bearer,
    request: {
      params: idParam,
      query: z.object({
        limit: z.number().int().min(1).max(200).optional().meta({ description: 'Rows per page, 1 to 200 (default 50)' }),
        cursor: z.string().optional().meta({ description: 'The `next_cursor` of the previous page; opaque' }),
      }),
    },
    responses: { 200: json(Page), ...errors(400, 401, 403, 404, 422, 429) },
  });
  registry.registerPath({
    method: 'post', path: '/webhook-endpoints/deliveries/{delivery_id}/redeliver', operationId: 'redeliverWebhook', tags: [TAGS.webhookEndpoints],
    summary: 'Send a past event again',
    description:
      `${WHO} A new delivery of the same event (the same \`id\` and body) to the same endpoint. One event is redelivered to one endpoint once at a time and at most ` +
      `${REDELIVERIES_PER_HOUR} times an hour (redelivering a redelivery counts; the automatic retries do not): 429 \`redelivery_pending\` while a redelivery of it ` +
      'is still pending, 429 `redelivery_limit` beyond the hour\'s count, with `Retry-After` saying when the oldest leaves the hour. Each redelivery is on the audit trail (`webhook_endpoint.redelivered`).',
    security: bearer, request: { params: z.object({ delivery_id: z.string().regex(/^\d+$/).meta({ description: 'A delivery id from the deliveries list' }) }) },
    responses: {
      202: json(Delivery, 'Redelivery queued'),
      ...errors(401, 403, 404),
      409: disabled,
      429: errorResponse(
        `\`redelivery_pending\`: a redelivery of this event to this endpoint is still pending; \`redelivery_limit\`: ${REDELIVERIES_PER_HOUR} were asked for within the last hour (\`Retry-After\`: when the oldest leaves it). Also the request rate limits (no \`code\`).`,
        z.object({ detail: z.string(), code: z.enum(['redelivery_pending', 'redelivery_limit']).optional() }),
      ),
    },
  });
}
