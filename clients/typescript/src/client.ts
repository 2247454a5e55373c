import { operations, type OperationId, type Operations, type Schemas } from './openapi.ts';

export type { OperationId, Operations, Schemas };

type SuccessStatus = '200' | '201' | '202' | '204';
type Responses<K extends OperationId> = Operations[K]['responses'];
/** The JSON body of any 2xx answer the document lists for this operation. */
export type Success<K extends OperationId> = Responses<K>[Extract<keyof Responses<K>, SuccessStatus>];
export type Body<K extends OperationId> = Operations[K]['body'];
export type Headers<K extends OperationId> = Operations[K]['headers'];

/** A non-2xx answer: `detail` is the service's message; quote `requestId` to support. */
export class ApiError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly body: unknown;
  readonly requestId: string | null;
  readonly operationId: OperationId;

  constructor(operationId: OperationId, status: number, body: unknown, requestId: string | null) {
    const detail = typeof body === 'object' && body !== null && typeof (body as { detail?: unknown }).detail === 'string' ? (body as { detail: string }).detail : `HTTP ${status}`;
    super(`${operationId}: ${status} ${detail}`);
    this.name = 'ApiError';
    this.operationId = operationId;
    this.status = status;
    this.detail = detail;
    this.body = body;
    this.requestId = requestId;
  }

  /** reference_id of a verification whose outcome is unknown (502/504): requery it after 30 s. */
  get referenceId(): string | undefined {
    const ref = (this.body as { reference_id?: unknown } | null)?.reference_id;
    return typeof ref === 'string' ? ref : undefined;
  }
}

export type ClientOptions = {
  /** The service root, e.g. https://api.example.com (the /v1 base is added per operation). */
  baseUrl: string;
  token?: string;
  fetch?: typeof fetch;
  /** Per-request time limit; verifications may take up to 30 s on the server side. */
  timeoutMs?: number;
};

export type CallOptions<K extends OperationId> = {
  headers?: Headers<K>;
  signal?: AbortSignal;
};

function encode(contentType: string | null, body: unknown): string | undefined {
  if (body === undefined || contentType === null) return undefined;
  if (contentType === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(body as Record<string, unknown>)) if (v !== undefined) form.set(k, String(v));
    return form.toString();
  }
  return JSON.stringify(body);
}

/** A typed client: every method's input and output types come from the generated openapi.ts. */
export function createClient(options: ClientOptions) {
  const root = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  let token = options.token;

  async function call<K extends OperationId>(operationId: K, body?: Body<K>, opts: CallOptions<K> = {}): Promise<{ status: number; data: Success<K>; requestId: string | null }> {
    const op = operations[operationId];
    const headers: Record<string, string> = { accept: 'application/json' };
    if (op.contentType && body !== undefined) headers['content-type'] = op.contentType;
    if (op.auth) {
      if (!token) throw new Error(`${operationId} needs a token: call login() first`);
      headers.authorization = `Bearer ${token}`;
    }
    for (const [k, v] of Object.entries((opts.headers ?? {}) as Record<string, string | undefined>)) if (v !== undefined) headers[k] = v;
    const signal = opts.signal ?? AbortSignal.timeout(options.timeoutMs ?? 45_000);
    const res = await doFetch(`${root}${op.base}${op.path}`, { method: op.method, headers, body: encode(op.contentType, body), signal });
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    const requestId = res.headers.get('x-request-id');
    if (!res.ok) throw new ApiError(operationId, res.status, parsed, requestId);
    return { status: res.status, data: parsed as Success<K>, requestId };
  }

  const data = <K extends OperationId>(operationId: K, body?: Body<K>, opts?: CallOptions<K>) => call(operationId, body, opts).then((r) => r.data);

  return {
    /** Any operation by its operationId, with the status and request id. */
    call,
    setToken(value: string | undefined) {
      token = value;
    },
    /** POST /login; keeps the token for the following calls. */
    async login(username: string, password: string): Promise<Schemas['TokenResponse']> {
      const t = await data('login', { username, password });
      token = t.access_token;
      return t;
    },
    me: () => data('getMe'),
    reasons: () => data('listUpstreamReasons'),
    /** Debits 1 unit on success (0 for fixture NINs). Pass an idempotencyKey to make a retry safe. */
    verifyNin: (body: Body<'verifyNin'>, o: { idempotencyKey?: string } = {}) => data('verifyNin', body, { headers: { 'Idempotency-Key': o.idempotencyKey } }),
    verifyPhone: (body: Body<'verifyPhone'>, o: { idempotencyKey?: string } = {}) => data('verifyPhone', body, { headers: { 'Idempotency-Key': o.idempotencyKey } }),
    verifyDemography: (body: Body<'verifyDemography'>, o: { idempotencyKey?: string } = {}) =>
      data('verifyDemography', body, { headers: { 'Idempotency-Key': o.idempotencyKey } }),
    /** Free; safe to retry. Resolves with a pending answer (202) while the verification runs. */
    requery: (referenceId: string) => data('requeryVerification', { reference_id: referenceId }),
    /** Organisation administrators only. */
    initializeTopup: (units: number) => data('initializeTopup', { units }),
    verifyTopup: (reference: string) => data('verifyTopup', { reference }),
  };
}

export type Client = ReturnType<typeof createClient>;
