import { z } from 'zod';
import { paystackEventSchema } from '../../adapters/payment-processor/webhook.ts';
import { bearer, errorResponse, errors, formBody, json, jsonBody, TAGS, type Assert, type OpenAPIRegistry, type Same } from '../../openapi/common.ts';
import { initializeForm, TOPUP_REFERENCE, verifyForm, type InitializeResponse, type VerifyResponse } from './topup.schemas.ts';

// The service returns plain objects typed by InitializeResponse/VerifyResponse; these schemas
// describe them, and the Assert lines below fail the type check the day either side changes.
const initializeResponse = z.object({
  authorization_url: z.url().meta({ description: "Payment link at the processor's hosted page; send the payer there" }),
  reference: z.string().regex(TOPUP_REFERENCE).meta({ description: 'Keep it to verify and reconcile', example: 'TOP-42-9f86d081884c7d65' }),
  access_code: z.string().meta({ description: 'Processor access code' }),
  base_amount: z.number().int().meta({ description: 'Revenue part of the charge (units x unit_cost), kobo' }),
  vat_amount: z.number().int().meta({ description: 'VAT, kobo' }),
  service_charge: z.number().int().meta({ description: "Processor's fee passed through, kobo" }),
  total_amount: z.number().int().meta({ description: 'What the payer pays: base + VAT + service charge, kobo' }),
  units: z.number().int().meta({ description: 'Units requested' }),
  unit_cost: z.number().int().meta({ description: 'Price per unit, kobo' }),
  discount: z.null().meta({ description: 'Always null: no discount applies' }),
  bonus_units: z.number().int().meta({ description: 'Free units added on credit (hosted affiliate tenants, until the promotion ends); 0 otherwise' }),
  currency: z.literal('NGN').meta({ description: 'Every amount is an integer number of kobo (1/100 NGN)' }),
});
type _initializeMatches = Assert<Same<z.infer<typeof initializeResponse>, InitializeResponse>>;

const verifyResponse = z.object({
  message: z.enum(['Top-up successful', 'Top-up already credited']).meta({
    description: '`Top-up successful` on the call that credits; `Top-up already credited` when the webhook or an earlier verify did',
  }),
  units_added: z.number().int().meta({ description: 'Units credited, bonus included' }),
  new_balance: z.number().int().meta({ description: 'Wallet balance in units after the credit' }),
  price_paid: z.number().int().meta({ description: 'Base amount (revenue), kobo' }),
});
type _verifyMatches = Assert<Same<z.infer<typeof verifyResponse>, VerifyResponse>>;

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
      200: json(initializeResponse.meta({ id: 'TopupInitialization' }), 'Payment link created (SPEC 2.4)'),
      ...errors(401, 415, 422, 429, 502),
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
      200: json(verifyResponse.meta({ id: 'TopupVerification' }), 'Credited, now or earlier (SPEC 2.5)'),
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
