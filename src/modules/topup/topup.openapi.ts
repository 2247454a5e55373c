import { z } from 'zod';
import { paystackEventSchema } from '../../adapters/payment-processor/webhook.ts';
import { bearer, errorResponse, errors, formBody, json, jsonBody, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { initializeForm, initializeResponse, TOPUP_REFERENCE, topupPrice, verifyForm, verifyResponse } from './topup.schemas.ts';

const pendingError = z
  .object({ detail: z.string(), reference: z.string().regex(TOPUP_REFERENCE) })
  .meta({ id: 'TopupPendingError', description: 'Nothing was credited yet; call verify again later (the webhook may credit meanwhile).' });

const webhookAck = z.object({ status: z.literal('ok') });

export function register(registry: OpenAPIRegistry): void {
  const InitializeForm = initializeForm
    .extend({
      units: initializeForm.shape.units.meta({
        type: 'integer',
        multipleOf: 100,
        minimum: 100,
        description: "Positive multiple of 100, at least the organisation's minimum top-up (`min_topup_units` in GET /me)",
        example: 500,
      }),
    })
    .meta({ id: 'TopupInitializeForm' });
  const VerifyForm = verifyForm
    .extend({ reference: verifyForm.shape.reference.meta({ description: 'The reference from /topup/initialize', example: 'TOP-42-9f86d081884c7d65' }) })
    .meta({ id: 'TopupVerifyForm' });

  registry.registerPath({
    method: 'post',
    path: '/topup/initialize',
    operationId: 'initializeTopup',
    tags: [TAGS.topup],
    summary: 'Start a wallet top-up',
    description:
      'Organisation administrators only. Prices the units, creates a payment link at the processor and returns it with a reference. ' +
      'The wallet is credited when the processor notifies the service of the payment; nothing is credited yet.',
    security: bearer,
    request: { body: formBody(InitializeForm) },
    responses: {
      200: json(initializeResponse.meta({ id: 'TopupInitialization' }), 'Payment link created'),
      ...errors(401, 415, 422, 429, 502),
      400: errorResponse('units is not a positive multiple of 100 or is below the minimum'),
      403: errorResponse('The caller is not an organisation administrator'),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/topup/quote',
    operationId: 'quoteTopup',
    tags: [TAGS.topup],
    summary: 'Price a top-up without starting it',
    description: 'Organisation administrators only. The same breakdown /topup/initialize would answer for these units; nothing is created.',
    security: bearer,
    request: { query: z.object({ units: z.string().regex(/^\d+$/).meta({ description: 'Units, a multiple of 100 at or above the minimum', example: '500' }) }) },
    responses: {
      200: json(topupPrice.extend({ currency: z.literal('NGN') }).meta({ id: 'TopupQuote' }), 'The price'),
      ...errors(401, 422, 429),
      400: errorResponse('units is not a positive multiple of 100 or is below the minimum'),
      403: errorResponse('The caller is not an organisation administrator'),
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/topup/verify',
    operationId: 'verifyTopup',
    tags: [TAGS.topup],
    summary: 'Confirm a top-up payment now',
    description:
      'Optional: confirms the payment with the processor at once instead of waiting for its notification. ' +
      'Safe to repeat and to race with the notification: a reference is credited exactly once.',
    security: bearer,
    request: { body: formBody(VerifyForm) },
    responses: {
      200: json(verifyResponse.meta({ id: 'TopupVerification' }), 'Credited, now or earlier'),
      ...errors(401, 415, 422, 429),
      400: errorResponse('Not a top-up reference, payment not successful, or amount mismatch; nothing credited'),
      403: errorResponse('Not an organisation administrator, or the reference belongs to another organisation'),
      404: errorResponse('Top-up reference not found'),
      502: errorResponse('The processor could not confirm the payment; retry later', pendingError),
      504: errorResponse('Confirmation is taking longer than expected; retry later', pendingError),
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/webhooks/paystack',
    operationId: 'receivePaystackEvent',
    tags: [TAGS.webhooks],
    summary: 'Payment processor notification (processor to service)',
    description:
      'Called by the payment processor, not by integrators. Authenticated by `x-paystack-signature`, the HMAC-SHA512 (hex) of the raw body ' +
      'under the processor secret key; no bearer token. `charge.success` events credit the wallet once per reference; other events are acknowledged.',
    security: [],
    request: {
      headers: z.object({ 'x-paystack-signature': z.string().regex(/^[0-9a-f]{128}$/).meta({ description: 'HMAC-SHA512 of the raw body, hex' }) }),
      body: jsonBody(paystackEventSchema.meta({ id: 'PaystackEvent', description: 'Any processor event; `charge.success` carries data.reference' })),
    },
    responses: {
      200: json(webhookAck.meta({ id: 'WebhookAck' }), 'Stored; credited asynchronously'),
      ...errors(413),
      400: errorResponse('Malformed JSON or not a processor event'),
      401: errorResponse('Invalid signature'),
    },
  });
}
