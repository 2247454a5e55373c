import { randomBytes } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { insertEvent } from './webhooks.repository.ts';
import type { WebhookEventType } from './webhooks.schemas.ts';

/** What each event says: references, statuses and counts, never personal data (issue 32). */
export type WebhookEventData = {
  'verification.completed': { reference_id: string; kind: string; status: 'found' | 'not_found' | 'failed' | 'refused'; code?: string } & Verdict;
  'batch.completed': BatchData;
  'batch.paused': BatchData & { reason: string | null };
  'batch.cancelled': BatchData;
  'topup.credited': { reference: string; units: number; bonus_units: number; new_balance: number };
  'wallet.low_balance': { balance: number; line: number };
  ping: { endpoint_id: string };
  // reference_id null: the organisation could not take the submission (`code` says why), no verification was made.
  'verification_link.submitted': { link_id: string; client_ref: string | null; reference_id: string | null; status: 'found' | 'not_found' | 'failed' | 'refused'; code?: string; face: FaceSummary | null } & Verdict;
};
/** The verification's verdict (verification/verdict.ts writes the rule; docs/webhooks.md lists the reasons). */
type Verdict = { verdict: 'verified' | 'not_verified' | null; verdict_reasons: string[] };
/** A face comparison's result without personal data (verification/verdict.ts faceSummary). */
type FaceSummary = { status: 'compared' | 'no_reference_photo'; match: boolean | null; confidence: number | null; liveness: string; liveness_check?: object | undefined };
type BatchData = { batch_id: string; status: string; counts: { rows: number; invalid: number; found: number; not_found: number; failed: number; cancelled: number; pending: number } };

export const newEventId = (): string => `evt_${randomBytes(12).toString('hex')}`;

/**
 * The door the other modules call inside the transaction of the change an event reports (the outbox:
 * the event commits with the change or not at all, whatever Redis does). Writes the event and one
 * delivery per enabled endpoint of the organisation subscribed to its type, or nothing when none is;
 * the workers deliver it after COMMIT. The body is fixed here, once: every try sends the same bytes
 * with the same id. Returns the event id, or null when no endpoint listens.
 */
export async function recordWebhookEvent<T extends WebhookEventType>(
  tx: CommonQueryMethods,
  e: { orgId: number; type: T; data: WebhookEventData[T]; endpointId?: string },
): Promise<string | null> {
  const id = newEventId();
  const body = JSON.stringify({ id, type: e.type, created_at: new Date().toISOString(), data: e.data });
  return insertEvent(tx, { id, orgId: e.orgId, type: e.type, body, endpointId: e.endpointId });
}
