import { z } from 'zod';
import { paystackEventSchema } from '../../adapters/payment-processor/webhook.ts';
import { bearer, errorResponse, errors, formBody, json, jsonBody, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { initializeForm, initializeResponse, TOPUP_REFERENCE, topupPrice, verifyForm, verifyResponse } from './topup.schemas.ts';

const pendingError = z
  .object({ detail: z.string(), reference: z.string().regex(TOPUP_REFERENCE) })
  .meta({ id: 'TopupPendingError', description: 'Nothing was credited yet; call verify again later (the webhook may credit meanwhile).' });

const webhookAck = z.object({ status: z.literal('ok') });

/** The operations' own rules, markdown (shown under each operation at /docs; the tag's guide is topup.guide.md). */
const INITIALIZE = md(
  'Organisation administrators and the `finance` role (team members: 403), with a form (`application/x-www-form-urlencoded`) field `units`. Prices the units, creates a payment link at the processor and returns it with a reference;',
  'the wallet is credited when the processor notifies the service of the payment (nothing is credited yet).',
  '',
  'Refused with 400 `units must be a positive integer multiple of 100` (150, 0, -100),',
  '400 `units is below the plan minimum of N units`, 422 for a missing or non-numeric value. 200:',
  '```json',
  '{"authorization_url": "http://127.0.0.1:4020/checkout/ac_...", "reference": "TOP-1-0f3c9a7d21b4e8c6",',
  ' "access_code": "ac_...", "base_amount": 1000000, "vat_amount": 75000, "service_charge": 26523,',
  ' "total_amount": 1101523, "units": 100, "unit_cost": 10000, "discount": null, "bonus_units": 0, "currency": "NGN"}',
  '```',
  'All amounts in kobo. `base_amount = units x unit_cost`; `vat_amount` = 7.5% of base; `service_charge` is the',
  'processor\'s fee grossed up so that, after Paystack keeps 1.5% + NGN 100 (the NGN 100 waived under NGN 2,500,',
  'the fee capped at NGN 2,000), we still receive base + VAT; `total_amount` is what the payer is charged.',
  '`discount` is always `null` (no discount scheme exists); `bonus_units` (extra field) is what a hosted',
  'affiliate tenant receives on top, up to and including 15 June 2026 (Lagos time): 5,000-6,999 units +30,',
  '7,000-9,999 +50, 10,000+ +100. Processor unreachable: 503; processor refused: 502 (nothing charged either way).',
);

const QUOTE = md(
  'Organisation administrators and the `finance` role (API clients need the `topup`',
  'scope): the price `initialize` would compute for `N` units, with nothing written and no processor',
  'call: 200 with the same price fields (`base_amount`, `vat_amount`, `service_charge`, `total_amount`,',
  '`units`, `unit_cost`, `discount`, `bonus_units`, `currency`), the same 400s for units that are not a',
  'positive multiple of 100 or below the plan minimum, 422 when `units` is missing or not a number. The',
  'portal\'s top-up page shows it before sending the payer to the checkout.',
);

const VERIFY = md(
  'Organisation administrators and the `finance` role (team members: 403), with a form (`application/x-www-form-urlencoded`) field `reference`. Optional: confirms the payment with the processor at once instead of waiting for its',
  'notification; safe to repeat and to race with the notification (a reference is credited exactly once). Answers',
  '200 `{"message": "Top-up successful" | "Top-up already credited",',
  '"units_added", "new_balance", "price_paid"}` (`units_added` includes bonus units; `price_paid` is the base',
  'amount). 400 `Payment not successful (status: abandoned); nothing was credited`; 400',
  '`Paid amount does not match the top-up; nothing was credited`; 403 for another organisation\'s reference;',
  '404 `Top-up reference not found`; 504 `{detail, reference}` if the credit job did not finish in',
  '`TOPUP_WAIT_MS`. A payment that is not successful is never closed by a verify call: the payer may still pay.',
);

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
    description: INITIALIZE,
    security: bearer,
    request: { body: formBody(InitializeForm) },
    responses: {
      200: json(initializeResponse.meta({ id: 'TopupInitialization' }), 'Payment link created'),
      ...errors(401, 415, 422, 429, 502),
      400: errorResponse('units is not a positive multiple of 100 or is below the minimum'),
      403: errorResponse('The caller is neither an organisation administrator nor a finance officer'),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/topup/quote',
    operationId: 'quoteTopup',
    tags: [TAGS.topup],
    summary: 'Price a top-up without starting it',
    description: QUOTE,
    security: bearer,
    request: { query: z.object({ units: z.string().regex(/^\d+$/).meta({ description: 'Units, a multiple of 100 at or above the minimum', example: '500' }) }) },
    responses: {
      200: json(topupPrice.extend({ currency: z.literal('NGN') }).meta({ id: 'TopupQuote' }), 'The price'),
      ...errors(401, 422, 429),
      400: errorResponse('units is not a positive multiple of 100 or is below the minimum'),
      403: errorResponse('The caller is neither an organisation administrator nor a finance officer'),
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/topup/verify',
    operationId: 'verifyTopup',
    tags: [TAGS.topup],
    summary: 'Confirm a top-up payment now',
    description: VERIFY,
    security: bearer,
    request: { body: formBody(VerifyForm) },
    responses: {
      200: json(verifyResponse.meta({ id: 'TopupVerification' }), 'Credited, now or earlier'),
      ...errors(401, 415, 422, 429),
      400: errorResponse('Not a top-up reference, payment not successful, or amount mismatch; nothing credited'),
      403: errorResponse('The caller is neither an organisation administrator nor a finance officer, or the reference belongs to another organisation'),
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
