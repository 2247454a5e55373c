import { createHash } from 'node:crypto';
import { verifyPaystackSignature } from '../../adapters/payment-processor/signature.ts';
import { chargeSuccessEventSchema, paystackEventSchema } from '../../adapters/payment-processor/webhook.ts';
import { jobIds } from '../../jobs/catalog.ts';
import { AppError } from '../../lib/errors.ts';
import type { TopupDeps } from './deps.ts';
import * as repo from './topup.repository.ts';
import { TOPUP_REFERENCE } from './topup.schemas.ts';

/**
 * Authenticates, stores and acknowledges one processor notification. Crediting happens in a job,
 * never here: the processor only needs a quick 200, and the job re-verifies the charge anyway.
 */
export async function receiveProcessorEvent(deps: TopupDeps, rawBody: Buffer, signature: string | undefined, requestId?: string): Promise<void> {
  // During a change of processor key, events signed with the key being replaced still count.
  const c = deps.config;
  const signed = verifyPaystackSignature(rawBody, signature, c.PAYSTACK_SECRET_KEY) || (c.PAYSTACK_SECRET_KEY_PREVIOUS !== '' && verifyPaystackSignature(rawBody, signature, c.PAYSTACK_SECRET_KEY_PREVIOUS));
  if (!signed) {
    throw new AppError('unauthorized', 'Invalid signature');
  }
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new AppError('bad_request', 'Malformed JSON body');
  }
  const event = paystackEventSchema.safeParse(json);
  if (!event.success) throw new AppError('bad_request', 'Body is not a processor event');
  // Every accepted event is stored as jsonb, which cannot hold NUL characters or lone surrogates.
  if (!storableJson(json)) throw new AppError('bad_request', 'Body contains characters that cannot be stored');

  // The digest of the signed bytes: a retried delivery is byte-identical, so it maps to the same key.
  const eventKey = createHash('sha256').update(rawBody).digest('hex');
  const reference = referenceOf(event.data.data);

  const charge = chargeSuccessEventSchema.safeParse(json);
  // A dispute or a refund may mean a credited payment was reversed: the job asks the processor.
  const reversal = REVERSAL_EVENTS.has(event.data.event) && reference !== null && TOPUP_REFERENCE.test(reference);
  let creditable = false;
  let outcome: string | null = 'ignored';
  const subject = charge.success ? charge.data.data.reference : reversal ? reference : null;
  if (subject !== null && TOPUP_REFERENCE.test(subject)) {
    const known = await repo.findTopup(deps.db, subject);
    creditable = known !== null;
    outcome = known ? null : 'unknown_reference';
  }
  const stored = await repo.insertProcessorEvent(deps.db, {
    eventKey,
    event: event.data.event.slice(0, 100),
    reference,
    payload: withoutPersonalData(event.data),
    outcome,
  });
  if (outcome === 'unknown_reference' && stored) deps.logger.warn({ reference, eventKey }, 'charge.success for an unknown top-up reference');
  // Enqueued even for a duplicate: the first delivery may have been stored and then failed to enqueue.
  // The job id, built from the event key, makes BullMQ drop the copy while the first job is known.
  if (creditable && subject !== null) {
    await deps.producer.enqueue('topup.credit', { reference: subject, source: charge.success ? 'webhook' : 'reversal', requestId }, { jobId: jobIds.creditFromWebhook(eventKey) });
  }
}

const REVERSAL_EVENTS = new Set(['charge.dispute.create', 'charge.dispute.resolve', 'refund.processed']);

/** Charges name their transaction in `reference`, refunds in `transaction_reference`, disputes in `transaction.reference`. */
function referenceOf(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  const tx = typeof d['transaction'] === 'object' && d['transaction'] !== null ? (d['transaction'] as Record<string, unknown>) : {};
  const ref = d['reference'] ?? d['transaction_reference'] ?? tx['reference'];
  return typeof ref === 'string' && ref.length <= 100 ? ref : null;
}

function storableJson(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (typeof value === 'string') return value.isWellFormed() && !value.includes('\u0000');
  if (Array.isArray(value)) return value.every((v) => storableJson(v, depth + 1));
  if (value && typeof value === 'object') return Object.entries(value).every(([k, v]) => storableJson(k, depth + 1) && storableJson(v, depth + 1));
  return true;
}

/** The customer and card objects hold personal data the audit trail does not need. */
function withoutPersonalData(event: { event: string; data: unknown }): unknown {
  if (typeof event.data !== 'object' || event.data === null) return event;
  const { customer: _customer, authorization: _authorization, ...data } = event.data as Record<string, unknown>;
  return { ...event, data };
}
