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

/**
 * A card the processor will charge again without the payer (Paystack's `authorization` with
 * `reusable: true`). `code` is a card credential: keep it sealed, never log it.
 */
export type ReusableAuthorization = {
  code: string;
  /** The e-mail the authorization belongs to: a later charge must name it. */
  email: string;
  cardType: string;
  last4: string;
  bank: string | null;
  expMonth: string | null;
  expYear: string | null;
};

export type VerifyResult = {
  status: VerifyStatus;
  /** What the processor says was charged; compare with what was asked before crediting. 0 when not_found. */
  amountKobo: number;
  currency: string;
  paidAt: string | null;
  /** The card of a successful charge when the processor may charge it again; null otherwise. */
  authorization: ReusableAuthorization | null;
  /** The `data` object as received (the whole body when not_found), for the audit trail. */
  raw: unknown;
};

export type ChargeAuthorizationInput = {
  authorizationCode: string;
  email: string;
  amountKobo: number;
  reference: string;
  currency: string;
  metadata: Record<string, unknown>;
};

/**
 * What a charge of a saved authorization came to: `success`, `failed` (declined: `gatewayResponse` says
 * why) or, rarely, still `pending` (ask verify later). The processor answers at once.
 */
export type ChargeResult = { status: VerifyStatus; gatewayResponse: string; amountKobo: number; currency: string };

export type PaystackClient = RefundCalls & {
  initialize(input: InitializeInput): Promise<InitializeResult>;
  verify(reference: string): Promise<VerifyResult>;
  chargeAuthorization(input: ChargeAuthorizationInput): Promise<ChargeResult>;
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
  gateway_response: z.string().nullish(),
});

// Paystack's authorization object (https://paystack.com/docs/payments/recurring-charges/): only a
// card marked reusable may be charged again. Anything else about it is display.
const authorizationSchema = z.looseObject({
  authorization_code: z.string().regex(/^AUTH_[A-Za-z0-9]{1,64}$/),
  reusable: z.literal(true),
  last4: z.string().regex(/^[0-9]{4}$/),
  card_type: z.string().trim().min(1).max(40),
  bank: z.string().max(100).nullish(),
  exp_month: z.string().max(2).nullish(),
  exp_year: z.string().max(4).nullish(),
});
const customerSchema = z.looseObject({ email: z.string().min(3).max(320) });

function reusableAuthorization(data: Record<string, unknown>): ReusableAuthorization | null {
  const a = authorizationSchema.safeParse(data['authorization']);
  const c = customerSchema.safeParse(data['customer']);
  if (!a.success || !c.success) return null;
  return {
    code: a.data.authorization_code,
    email: c.data.email,
    cardType: a.data.card_type,
    last4: a.data.last4,
    bank: a.data.bank ?? null,
    expMonth: a.data.exp_month ?? null,
    expYear: a.data.exp_year ?? null,
  };
}

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
        return { status: 'not_found', amountKobo: 0, currency: '', paidAt: null, authorization: null, raw: body };
      }
      if (httpStatus !== 200 || !envelope.success || !envelope.data.status) {
        throw new ProcessorError('rejected', `processor refused verify (${httpStatus}): ${processorMessage(body)}`, { retryable: false, httpStatus });
      }
      const data = verifyDataSchema.safeParse(envelope.data.data);
      if (!data.success) throw new ProcessorError('bad_response', 'processor verify answer lacks status/amount/currency', { retryable: false, httpStatus });
      const status = toVerifyStatus(data.data.status);
      return {
        status,
        amountKobo: data.data.amount,
        currency: data.data.currency,
        paidAt: data.data.paid_at ?? data.data.paidAt ?? null,
        authorization: status === 'success' ? reusableAuthorization(data.data) : null,
        raw: envelope.data.data,
      };
    },

    // POST /transaction/charge_authorization (https://paystack.com/docs/api/transaction/#charge-authorization):
    // 200 "Charge attempted" with data.status the outcome; a 400 is a refused request (an unknown or
    // unusable authorization, an e-mail it does not belong to, a reused reference). The authorization
    // code goes in the body only, never into a message.
    async chargeAuthorization(input) {
      if (!Number.isSafeInteger(input.amountKobo) || input.amountKobo <= 0) throw new RangeError('amountKobo must be a positive integer');
      const { httpStatus, body } = await call('charge_authorization', 'POST', '/transaction/charge_authorization', {
        authorization_code: input.authorizationCode,
        email: input.email,
        amount: String(input.amountKobo),
        reference: input.reference,
        currency: input.currency,
        metadata: input.metadata,
      });
      const envelope = envelopeSchema.safeParse(body);
      if (httpStatus !== 200 || !envelope.success || !envelope.data.status) {
        const message = processorMessage(body);
        const duplicate = /duplicate transaction reference/i.test(message);
        throw new ProcessorError(duplicate ? 'duplicate_reference' : 'rejected', `processor refused charge_authorization (${httpStatus}): ${message}`, {
          retryable: false,
          httpStatus,
        });
      }
      const data = verifyDataSchema.safeParse(envelope.data.data);
      if (!data.success) throw new ProcessorError('bad_response', 'processor charge_authorization answer lacks status/amount/currency', { retryable: false, httpStatus });
      return {
        status: toVerifyStatus(data.data.status),
        gatewayResponse: (data.data.gateway_response ?? 'no reason given').slice(0, 200),
        amountKobo: data.data.amount,
        currency: data.data.currency,
      };
    },
  };
}
