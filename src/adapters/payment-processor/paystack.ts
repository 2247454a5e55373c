import { z } from 'zod';
import { createRefundCalls, type RefundCalls } from './refunds.ts';
import { createTransport, envelopeSchema, ProcessorError, processorMessage } from './transport.ts';

export { ProcessorError, type ProcessorErrorCode } from './transport.ts';
export type { Refund, RefundStatus } from './refunds.ts';

/**
 * Client for the Paystack transaction API (https://api.paystack.co) and for the sandbox simulator,
 * which speaks the same paths, headers and envelopes. Amounts are integer kobo on both sides.
 */

export type PaystackClientOptions = {
  /** `https://api.paystack.co` in production, the simulator's address in the sandbox. */
  baseUrl: string;
  secretKey: string;
  /** Per request, covering the connection and the whole body. */
  timeoutMs: number;
};

export type InitializeInput = {
  email: string;
  amountKobo: number;
  reference: string;
  currency: string;
  metadata: Record<string, unknown>;
  callbackUrl?: string | undefined;
};

export type InitializeResult = { authorizationUrl: string; accessCode: string; reference: string };

export type VerifyStatus = 'success' | 'failed' | 'abandoned' | 'ongoing' | 'pending' | 'reversed' | 'not_found';

export type VerifyResult = {
  status: VerifyStatus;
  /** What the processor says was charged; compare with what was asked before crediting. 0 when not_found. */
  amountKobo: number;
  currency: string;
  paidAt: string | null;
  /** The `data` object as received (the whole body when not_found), for the audit trail. */
  raw: unknown;
};

export type PaystackClient = RefundCalls & {
  initialize(input: InitializeInput): Promise<InitializeResult>;
  verify(reference: string): Promise<VerifyResult>;
};

const initializeDataSchema = z.looseObject({
  authorization_url: z.string().min(1),
  access_code: z.string().min(1),
  reference: z.string().min(1),
});

const verifyDataSchema = z.looseObject({
  status: z.string(),
  amount: z.number().int().nonnegative(),
  currency: z.string(),
  paid_at: z.string().nullish(),
  paidAt: z.string().nullish(),
});

// Paystack also reports `processing` and `queued` (bank transfer, USSD): not settled yet, so both
// read as pending. Anything else unknown reads as pending too: it must never be mistaken for success.
const KNOWN_STATUSES = new Set<string>(['success', 'failed', 'abandoned', 'ongoing', 'pending', 'reversed']);

function toVerifyStatus(s: string): VerifyStatus {
  return KNOWN_STATUSES.has(s) ? (s as VerifyStatus) : 'pending';
}

export function createPaystackClient(opts: PaystackClientOptions): PaystackClient {
  const call = createTransport(opts);
  return {
    ...createRefundCalls(call),

    async initialize(input) {
      if (!Number.isSafeInteger(input.amountKobo) || input.amountKobo <= 0) throw new RangeError('amountKobo must be a positive integer');
      const payload: Record<string, unknown> = {
        email: input.email,
        // Paystack documents amount as a string in the currency's subunit.
        amount: String(input.amountKobo),
        reference: input.reference,
        currency: input.currency,
        metadata: input.metadata,
      };
      if (input.callbackUrl) payload['callback_url'] = input.callbackUrl;
      const { httpStatus, body } = await call('initialize', 'POST', '/transaction/initialize', payload);
      const envelope = envelopeSchema.safeParse(body);
      if (httpStatus !== 200 || !envelope.success || !envelope.data.status) {
        const message = processorMessage(body);
        const duplicate = /duplicate transaction reference/i.test(message);
        throw new ProcessorError(duplicate ? 'duplicate_reference' : 'rejected', `processor refused initialize (${httpStatus}): ${message}`, {
          retryable: false,
          httpStatus,
        });
      }
      const data = initializeDataSchema.safeParse(envelope.data.data);
      if (!data.success) throw new ProcessorError('bad_response', 'processor initialize answer lacks authorization_url/access_code', { retryable: false, httpStatus });
      return { authorizationUrl: data.data.authorization_url, accessCode: data.data.access_code, reference: data.data.reference };
    },

    async verify(reference) {
      const { httpStatus, body } = await call('verify', 'GET', `/transaction/verify/${encodeURIComponent(reference)}`);
      const envelope = envelopeSchema.safeParse(body);
      // Paystack has answered an unknown reference with 400 "Transaction reference not found" and,
      // more recently, with 404; both mean the processor never saw this reference.
      if (httpStatus === 404 || (httpStatus === 400 && /reference not found/i.test(processorMessage(body)))) {
        return { status: 'not_found', amountKobo: 0, currency: '', paidAt: null, raw: body };
      }
      if (httpStatus !== 200 || !envelope.success || !envelope.data.status) {
        throw new ProcessorError('rejected', `processor refused verify (${httpStatus}): ${processorMessage(body)}`, { retryable: false, httpStatus });
      }
      const data = verifyDataSchema.safeParse(envelope.data.data);
      if (!data.success) throw new ProcessorError('bad_response', 'processor verify answer lacks status/amount/currency', { retryable: false, httpStatus });
      return {
        status: toVerifyStatus(data.data.status),
        amountKobo: data.data.amount,
        currency: data.data.currency,
        paidAt: data.data.paid_at ?? data.data.paidAt ?? null,
        raw: envelope.data.data,
      };
    },
  };
}
