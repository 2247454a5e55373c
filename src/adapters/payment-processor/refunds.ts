import { z } from 'zod';
import { envelopeSchema, ProcessorError, processorMessage, type Call } from './transport.ts';

/**
 * Paystack's refund API: `POST /refund` with the transaction's reference (no amount: the whole
 * transaction), `GET /refund/:id`, `GET /refund?reference=` to list a transaction's refunds.
 * Paystack takes no idempotency key for refunds; what makes a repeated request harmless is that a
 * transaction cannot be refunded beyond its amount. A second full refund is refused as already
 * reversed, and `refund` then answers the refund that exists: the transaction reference is the key.
 */

/** Paystack's refund states; `processed` is money returned, `failed` is none returned. */
export type RefundStatus = 'pending' | 'processing' | 'processed' | 'failed';

export type Refund = { id: string; status: RefundStatus; amountKobo: number; currency: string };

export type RefundCalls = {
  /** Refunds the whole transaction once; a repeat answers the refund already made. */
  refund(input: { reference: string; merchantNote?: string }): Promise<Refund>;
  /** Null when the processor does not know the id. */
  fetchRefund(id: string): Promise<Refund | null>;
  /** The transaction's refund that is not failed (else its latest), or null when it has none. */
  findRefund(reference: string): Promise<Refund | null>;
};

const refundDataSchema = z.looseObject({
  id: z.union([z.number().int(), z.string().min(1)]),
  status: z.string(),
  amount: z.number().int().nonnegative(),
  currency: z.string(),
});

// Anything unknown (Paystack also has `needs-attention`) reads as still pending: never as processed.
const KNOWN = new Set<string>(['pending', 'processing', 'processed', 'failed']);

function toRefund(data: unknown, op: string, httpStatus: number): Refund {
  const parsed = refundDataSchema.safeParse(data);
  if (!parsed.success) throw new ProcessorError('bad_response', `processor ${op} answer lacks id/status/amount/currency`, { retryable: false, httpStatus });
  const d = parsed.data;
  return { id: String(d.id), status: KNOWN.has(d.status) ? (d.status as RefundStatus) : 'pending', amountKobo: d.amount, currency: d.currency };
}

const ALREADY_REFUNDED = /fully reversed|already been refunded|refund already/i;

export function createRefundCalls(call: Call): RefundCalls {
  async function findRefund(reference: string): Promise<Refund | null> {
    const { httpStatus, body } = await call('list refunds', 'GET', `/refund?reference=${encodeURIComponent(reference)}`);
    const envelope = envelopeSchema.safeParse(body);
    if (httpStatus !== 200 || !envelope.success || !envelope.data.status || !Array.isArray(envelope.data.data)) {
      throw new ProcessorError('rejected', `processor refused to list refunds (${httpStatus}): ${processorMessage(body)}`, { retryable: false, httpStatus });
    }
    const refunds = envelope.data.data.map((d) => toRefund(d, 'list refunds', httpStatus));
    // Paystack lists newest first.
    return refunds.find((r) => r.status !== 'failed') ?? refunds[0] ?? null;
  }

  return {
    findRefund,

    async refund(input) {
      const payload: Record<string, unknown> = { transaction: input.reference };
      if (input.merchantNote) payload['merchant_note'] = input.merchantNote;
      const { httpStatus, body } = await call('refund', 'POST', '/refund', payload);
      const envelope = envelopeSchema.safeParse(body);
      if (httpStatus === 200 && envelope.success && envelope.data.status) return toRefund(envelope.data.data, 'refund', httpStatus);
      const message = processorMessage(body);
      if (httpStatus === 400 && ALREADY_REFUNDED.test(message)) {
        const existing = await findRefund(input.reference);
        if (existing) return existing;
      }
      throw new ProcessorError('rejected', `processor refused refund (${httpStatus}): ${message}`, { retryable: false, httpStatus });
    },

    async fetchRefund(id) {
      const { httpStatus, body } = await call('fetch refund', 'GET', `/refund/${encodeURIComponent(id)}`);
      if (httpStatus === 404) return null;
      const envelope = envelopeSchema.safeParse(body);
      if (httpStatus !== 200 || !envelope.success || !envelope.data.status) {
        throw new ProcessorError('rejected', `processor refused to fetch refund (${httpStatus}): ${processorMessage(body)}`, { retryable: false, httpStatus });
      }
      return toRefund(envelope.data.data, 'fetch refund', httpStatus);
    },
  };
}
