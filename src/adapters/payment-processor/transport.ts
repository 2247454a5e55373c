import { z } from 'zod';

/**
 * The HTTP exchange every processor call shares: the secret key header, one timeout over connection
 * and body, and the mapping of faults to ProcessorError. Paths and envelopes are the caller's.
 */

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

export const envelopeSchema = z.looseObject({ status: z.boolean(), message: z.string().optional(), data: z.unknown().optional() });

export type RawResponse = { httpStatus: number; body: unknown };

export type Call = (op: string, method: 'GET' | 'POST', path: string, payload?: unknown) => Promise<RawResponse>;

/** Paystack's own `message`, short and free of personal data, is what goes into error messages. */
export function processorMessage(body: unknown): string {
  const parsed = envelopeSchema.safeParse(body);
  const message = parsed.success ? parsed.data.message : undefined;
  return (message ?? 'no message').slice(0, 200);
}

export function createTransport(opts: { baseUrl: string; secretKey: string; timeoutMs: number }): Call {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');

  return async function call(op, method, path, payload) {
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
  };
}
