/**
 * Every business failure the API can answer with. One table maps codes to HTTP statuses, so a
 * service or a job result never picks a status itself.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  insufficient_units: 402,
  forbidden: 403,
  not_found: 404,
  not_acceptable: 406,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation: 422,
  rate_limited: 429,
  internal: 500,
  upstream_failed: 502,
  unavailable: 503,
  timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  /** Extra top-level fields of the error body (reference_id, errors). Never personal data. */
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, detail: string, opts: { extra?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    super(detail);
    this.code = code;
    this.detail = detail;
    this.extra = opts.extra;
    this.headers = opts.headers;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const INSUFFICIENT_UNITS = 'Insufficient units in organisation wallet';
export const NIN_NOT_FOUND = 'NIN not found';

/** Error summary for logs: name, message and stack, never the values of a failed query. */
export function describe(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { type: err.name, message: err.message.slice(0, 500), stack: err.stack?.split('\n').slice(0, 8).join('\n') };
  return { message: String(err).slice(0, 200) };
}
