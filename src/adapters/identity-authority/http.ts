import { UpstreamError } from './types.ts';

/**
 * The HTTP plumbing the dialect clients share: one deadline per call, and one place that decides
 * which failures are worth retrying. Each dialect still interprets its own 2xx/404 bodies.
 */
export interface UpstreamResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  body: unknown;
}

export interface CallOptions {
  /** Names the upstream in error messages, e.g. "dojah". */
  upstream: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export async function callUpstream(url: string, init: RequestInit, opts: CallOptions): Promise<UpstreamResponse> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  try {
    const res = await fetch(url, { ...init, signal });
    // The deadline covers the body too: a server can send headers and then stall.
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: parseJson(text) };
  } catch (err) {
    if (timeout.aborted) {
      throw new UpstreamError(`${opts.upstream}: no answer within ${opts.timeoutMs} ms`, { retryable: true, cause: err });
    }
    if (opts.signal?.aborted) {
      throw new UpstreamError(`${opts.upstream}: call aborted by caller`, { retryable: true, cause: err });
    }
    // fetch rejects with a TypeError for refused connections, resets and DNS failures. Only a refused
    // connection or an unknown host proves the request never left (a reset may follow a sent request).
    throw new UpstreamError(`${opts.upstream}: network error`, { retryable: true, cause: err, unsent: neverSent(err) });
  }
}

const UNSENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

function neverSent(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNSENT_CODES.has(code)) return true;
    const inner = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(inner) && inner.length > 0 && inner.every((x) => UNSENT_CODES.has(String((x as { code?: unknown }).code)))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The error for a status the dialect did not treat as an outcome. 429, 5xx and 408 (a timeout
 * reported by the server) are retryable; other 4xx mean our request is wrong and retrying it
 * unchanged cannot help.
 */
export function statusError(upstream: string, res: UpstreamResponse, what: string): UpstreamError {
  const { status } = res;
  const retryable = status === 429 || status === 408 || status >= 500;
  const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(res.headers.get('retry-after')) : undefined;
  return new UpstreamError(`${upstream}: ${what} answered HTTP ${status}`, { retryable, status, retryAfterMs });
}

export function shapeError(upstream: string, status: number, what: string, cause?: unknown): UpstreamError {
  return new UpstreamError(`${upstream}: ${what} answered HTTP ${status} with an unexpected body`, {
    retryable: false,
    status,
    cause,
  });
}

export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
