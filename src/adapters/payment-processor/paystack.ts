import { z } from 'zod';

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

export type PaystackClient = {
  initialize(input: InitializeInput): Promise<InitializeResult>;
  verify(reference: string): Promise<VerifyResult>;
};

export type ProcessorErrorCode = 'timeout' | 'network' | 'invalid_key' | 'duplicate_reference' | 'rejected' | 'server_error' | 'bad_response';

/**
 * A call to the processor that produced no usable answer. `retryable` says whether the same call may
 * simply be repeated later (timeouts, network faults, 429 and 5xx); the rest need a code or
 * configuration change. After a timeout on initialize the transaction may exist at the processor, so
 * repeating it with the same reference can come back as `duplicate_reference`.
 */
export class ProcessorError extends Error {
  readonly retryable: boolean;
  readonly code: ProcessorErrorCode;
  readonly httpStatus: number | undefined;

  constructor(code: ProcessorErrorCode, message: string, opts: { retryable: boolean; httpStatus?: number; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ProcessorError';
    this.code = code;
    this.retryable = opts.retryable;
    this.httpStatus = opts.httpStatus;
  }
}

const envelopeSchema = z.looseObject({ status: z.boolean(), message: z.string().optional(), data: z.unknown().optional() });

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

type RawResponse = { httpStatus: number; body: unknown };

/** Paystack's own `message`, short and free of personal data, is what goes into error messages. */
function processorMessage(body: unknown): string {
  const parsed = envelopeSchema.safeParse(body);
  const message = parsed.success ? parsed.data.message : undefined;
  return (message ?? 'no message').slice(0, 200);
}

export function createPaystackClient(opts: PaystackClientOptions): PaystackClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');

  async function call(op: 'initialize' | 'verify', method: 'GET' | 'POST', path: string, payload?: unknown): Promise<RawResponse> {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.secretKey}`, accept: 'application/json' };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    let httpStatus: number;
    let text: string;
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: payload === undefined ? null : JSON.stringify(payload),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      httpStatus = res.status;
      // Reading the body is inside the try: the timeout also covers a response that stalls mid-body.
      text = await res.text();
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new ProcessorError(timedOut ? 'timeout' : 'network', `processor ${op}: ${timedOut ? 'timed out' : 'network error'}`, {
        retryable: true,
        cause: err,
      });
    }
    if (httpStatus >= 500 || httpStatus === 429) {
      throw new ProcessorError('server_error', `processor ${op} answered ${httpStatus}`, { retryable: true, httpStatus });
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ProcessorError('bad_response', `processor ${op} answered ${httpStatus} without JSON`, { retryable: false, httpStatus });
    }
    if (httpStatus === 401) {
      throw new ProcessorError('invalid_key', `processor refused the secret key: ${processorMessage(body)}`, { retryable: false, httpStatus });
    }
    return { httpStatus, body };
  }

  return {
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
