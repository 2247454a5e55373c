import type { Words } from './format.ts';

/** `failingHours`: how long every delivery failed; `lastError`: the last try's status or error, as logged. */
export type WebhookDisabledData = { organisation: string; endpointId: string; failingHours: number; lastError: string };

export function webhookDisabled(d: WebhookDisabledData): Words {
  const text = [
    `Every delivery to the webhook endpoint ${d.endpointId} failed for ${d.failingHours} hours (last: ${d.lastError}), so it has been disabled.`,
    '',
    'Fix the receiver, then switch it on again with PATCH /v1/webhook-endpoints/' + d.endpointId + ' {"enabled": true};',
    'past events can be sent again with POST /v1/webhook-endpoints/deliveries/{delivery_id}/redeliver.',
    '',
  ].join('\n');
  return { subject: `Webhook endpoint ${d.endpointId} of ${d.organisation} disabled`, text };
}
