import { z } from 'zod';

/** The events an endpoint may subscribe to (or `*`: every one). */
export const EVENT_TYPES = ['verification.completed', 'batch.completed', 'batch.paused', 'batch.cancelled', 'topup.credited', 'wallet.low_balance', 'ping', 'verification_link.submitted'] as const;
export type WebhookEventType = (typeof EVENT_TYPES)[number];
const subscription = z.enum(['*', ...EVENT_TYPES]);

export const ENDPOINT_ID_RE = /^we_[0-9a-f]{24}$/;
export const DELIVERY_ID_RE = /^\d{1,18}$/;

const url = z.string().trim().min(1, 'url must not be empty').max(2048, 'url is too long');
const events = z.array(subscription).min(1, 'events: name at least one event, or "*"').max(10);

export const createEndpointBody = z.object({
  url: url.meta({ description: 'https, on a name that resolves only to public addresses. In the sandbox also `http` on loopback or this machine\'s addresses, except the stack\'s own ports (API, simulators, mail sink, metrics, PostgreSQL, Redis); the identity simulator\'s test receiver `http://127.0.0.1:4010/sandbox/hooks/{name}` is accepted', example: 'https://example.com/hooks/idverify' }),
  events: events.meta({ description: 'The event types to receive, or `["*"]` for all' }),
  description: z.string().trim().max(200, 'description is too long').optional(),
});

export const patchEndpointBody = z
  .object({
    url: url.optional(),
    events: events.optional(),
    enabled: z.boolean().optional().meta({ description: 'false stops deliveries (the pending ones fail); true starts them again for new events' }),
    description: z.string().trim().max(200, 'description is too long').nullable().optional(),
  })
  .refine((b) => b.url !== undefined || b.events !== undefined || b.enabled !== undefined || b.description !== undefined, 'name at least one of url, events, enabled, description');

export const endpoint = z.object({
  id: z.string().meta({ example: 'we_5f2a9c0d1e3b4a6f7c8d9e0a' }),
  url: z.string(),
  events: z.array(subscription),
  description: z.string().nullable(),
  enabled: z.boolean(),
  disabled_reason: z.enum(['gone', 'failing']).nullable().meta({ description: 'Why the service switched it off: `gone` (the receiver answered 410), `failing` (every try failed for 3 days); null otherwise' }),
  created_at: z.string(),
});

export const endpointWithSecret = endpoint.extend({
  secret: z.string().meta({ description: 'The signing secret, shown once, in this answer: `whsec_` and the standard padded base64 of 32 random bytes. `Idverify-Signature` is keyed with the whole string; Standard Webhooks (`webhook-signature`) with the bytes the base64 after `whsec_` encodes', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8RZMXmQ3Oj8=' }),
});

export const endpointList = z.object({ data: z.array(endpoint) });

export const delivery = z.object({
  id: z.string().meta({ description: 'The delivery id (a redelivery is a new delivery of the same event)' }),
  event_id: z.string().meta({ example: 'evt_0c1d2e3f4a5b6c7d8e9f0a1b' }),
  type: z.enum(EVENT_TYPES),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  next_attempt_at: z.string().nullable().meta({ description: 'When it is tried next; null once delivered or failed' }),
  delivered_at: z.string().nullable(),
  created_at: z.string(),
});

export const deliveryPage = z.object({ data: z.array(delivery), next_cursor: z.string().nullable() });
