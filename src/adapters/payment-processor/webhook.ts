import { z } from 'zod';

/**
 * Any processor event: what a webhook receiver can rely on before it knows the event type. Paystack
 * sends many event types to the same URL; the receiver acknowledges the ones it does not handle.
 */
export const paystackEventSchema = z.looseObject({
  event: z.string().min(1),
  data: z.unknown(),
});

export type PaystackEvent = z.infer<typeof paystackEventSchema>;

/**
 * The `charge.success` event. Only the fields the credit decision reads are typed; the rest pass
 * through untouched because Paystack adds fields without notice. The amount in an event is a claim
 * to be confirmed with a verify call, not a fact to credit on.
 */
export const chargeSuccessEventSchema = z.looseObject({
  event: z.literal('charge.success'),
  data: z.looseObject({
    id: z.number().int(),
    reference: z.string().min(1),
    amount: z.number().int().nonnegative(),
    currency: z.string().min(1),
    status: z.literal('success'),
    paid_at: z.string().nullish(),
    fees: z.number().int().nullish(),
    // Paystack returns metadata as it was sent: an object, a JSON string, or empty.
    metadata: z.unknown().optional(),
    customer: z.looseObject({ email: z.string().nullish() }).optional(),
  }),
});

export type ChargeSuccessEvent = z.infer<typeof chargeSuccessEventSchema>;
