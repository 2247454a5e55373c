import { operations, type OperationId } from './operations.ts';
import type { Operations, Schemas } from './types.ts';

export type { OperationId, Operations, Schemas };

type SuccessStatus = '200' | '201' | '202' | '204';
type Responses<K extends OperationId> = Operations[K]['responses'];
/** The JSON body of any 2xx answer the document lists for this operation. */
export type Success<K extends OperationId> = Responses<K>[Extract<keyof Responses<K>, SuccessStatus>];
export type Body<K extends OperationId> = Operations[K]['body'];
export type Headers<K extends OperationId> = Operations[K]['headers'];
export type PathParams<K extends OperationId> = Operations[K]['path'];
export type Query<K extends OperationId> = Operations[K]['query'];

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

/** Options of the verification calls: an Idempotency-Key, and `Prefer: respond-async`. */
export type VerifyOptions = { idempotencyKey?: string; respondAsync?: boolean };

/** Without respondAsync a verification call answers the record; with it, 202 pending (or, on a replay, the record). */
export type VerifyCall<K extends OperationId> = {
  (body: Body<K>, o?: VerifyOptions & { respondAsync?: false }): Promise<Schemas['VerificationResponse']>;
  (body: Body<K>, o: VerifyOptions & { respondAsync: true }): Promise<Schemas['VerificationResponse'] | Schemas['VerificationAccepted']>;
};

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
  /** Values of the `{name}` segments of the operation's path. */
  path?: PathParams<K>;
  query?: Query<K>;
  signal?: AbortSignal;
};

function urlOf(root: string, op: { base: string; path: string }, path: object = {}, query: object = {}): string {
  const params = path as Record<string, string | number>;
  const filled = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${op.path} needs the path parameter ${name}`);
    return encodeURIComponent(String(params[name]));
  });
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query as Record<string, unknown>)) if (v !== undefined) search.set(k, String(v));
  const qs = search.toString();
  return `${root}${op.base}${filled}${qs ? `?${qs}` : ''}`;
}

function encode(contentType: string | null, body: unknown): string | undefined {
  if (body === undefined || contentType === null) return undefined;
  if (contentType === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(body as Record<string, unknown>)) if (v !== undefined) form.set(k, String(v));
    return form.toString();
  }
  return JSON.stringify(body);
}

/** A typed client: every method's input and output types come from the generated openapi.ts (see types.ts). */
export function createClient(options: ClientOptions) {
  const root = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  let token = options.token;

  async function send<K extends OperationId>(operationId: K, body: Body<K> | undefined, opts: CallOptions<K>, accept: string): Promise<Response> {
    const op = operations[operationId];
    const headers: Record<string, string> = { accept };
    if (op.contentType && body !== undefined) headers['content-type'] = op.contentType;
    if (op.auth) {
      if (!token) throw new Error(`${operationId} needs a token: call login() first`);
      headers.authorization = `Bearer ${token}`;
    }
    for (const [k, v] of Object.entries((opts.headers ?? {}) as Record<string, string | undefined>)) if (v !== undefined) headers[k] = v;
    const signal = opts.signal ?? AbortSignal.timeout(options.timeoutMs ?? 45_000);
    return doFetch(urlOf(root, op, opts.path, opts.query), { method: op.method, headers, body: encode(op.contentType, body), signal });
  }

  async function fail(operationId: OperationId, res: Response): Promise<never> {
    const text = await res.text();
    let parsed: unknown = text || undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the raw text is the body.
    }
    throw new ApiError(operationId, res.status, parsed, res.headers.get('x-request-id'));
  }

  async function call<K extends OperationId>(operationId: K, body?: Body<K>, opts: CallOptions<K> = {}): Promise<{ status: number; data: Success<K>; requestId: string | null }> {
    const res = await send(operationId, body, opts, 'application/json');
    if (!res.ok) return fail(operationId, res);
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.status, data: parsed as Success<K>, requestId: res.headers.get('x-request-id') };
  }

  /** An operation that answers a file (the slip PDF): its bytes; errors are JSON as everywhere. */
  async function file<K extends OperationId>(operationId: K, accept: string, opts: CallOptions<K> = {}): Promise<Uint8Array> {
    const res = await send(operationId, undefined, opts, accept);
    if (!res.ok) return fail(operationId, res);
    return new Uint8Array(await res.arrayBuffer());
  }

  const verifyHeaders = (o: VerifyOptions) => ({ 'Idempotency-Key': o.idempotencyKey, ...(o.respondAsync ? { Prefer: 'respond-async' } : {}) });

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
    /** OAuth 2.0 client credentials grant (an API client's server); keeps the token for the following calls. */
    async loginClient(clientId: string, clientSecret: string): Promise<Schemas['TokenResponse']> {
      const t = await data('login', { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
      token = t.access_token;
      return t;
    },
    me: () => data('getMe'),
    /** Every earlier token of the user stops working, this client's included: log in again. */
    changePassword: (body: Body<'changePassword'>) => data('changePassword', body),
    /** Ends this client's token at once. */
    async logout(): Promise<void> {
      await call('logout');
      token = undefined;
    },
    /** Always 202, whether or not the username exists. */
    forgotPassword: (username: string) => data('forgotPassword', { username }),
    resetPassword: (body: Body<'resetPassword'>) => data('resetPassword', body),
    /** Organisation administrators (persons) only; the secret is in this answer only. */
    createApiClient: (body: Body<'createApiClient'>) => data('createApiClient', body),
    listApiClients: () => data('listApiClients'),
    /** The caller becomes the client's creator; a suspended client acts again once it has a new token. */
    adoptApiClient: (clientId: string) => data('adoptApiClient', undefined, { path: { client_id: clientId } }),
    deleteApiClient: async (clientId: string): Promise<void> => {
      await call('deleteApiClient', undefined, { path: { client_id: clientId } });
    },
    reasons: () => data('listUpstreamReasons'),
    /**
     * Debits 1 unit on success (0 for fixture NINs). Pass an idempotencyKey to make a retry safe.
     * With respondAsync the answer is 202 `{status: "pending", reference_id}` at once: requery until it ends.
     */
    verifyNin: ((body: Body<'verifyNin'>, o: VerifyOptions = {}) => data('verifyNin', body, { headers: verifyHeaders(o) })) as VerifyCall<'verifyNin'>,
    /**
     * A virtual NIN (16 letters and digits, use-once): debits 1 unit on success. A refused token is a
     * 404 with `code` (vnin_not_found, vnin_expired, vnin_wrong_enterprise, vnin_used): ask the person for a new one.
     */
    verifyVnin: ((body: Body<'verifyVnin'>, o: VerifyOptions = {}) => data('verifyVnin', body, { headers: verifyHeaders(o) })) as VerifyCall<'verifyVnin'>,
    /** Our enterprise code and the USSD string a person dials to make a vNIN for us. */
    vninInstructions: () => data('getVninInstructions'),
    verifyPhone: ((body: Body<'verifyPhone'>, o: VerifyOptions = {}) => data('verifyPhone', body, { headers: verifyHeaders(o) })) as VerifyCall<'verifyPhone'>,
    verifyDemography: ((body: Body<'verifyDemography'>, o: VerifyOptions = {}) => data('verifyDemography', body, { headers: verifyHeaders(o) })) as VerifyCall<'verifyDemography'>,
    /**
     * Free; safe to retry. Resolves with a pending answer (202) while the verification runs; an
     * asynchronous verification then resolves exactly as its verification call would have (`{data}`).
     */
    requery: (referenceId: string) => data('requeryVerification', { reference_id: referenceId }),
    /** Organisation administrators only. */
    initializeTopup: (units: number) => data('initializeTopup', { units }),
    verifyTopup: (reference: string) => data('verifyTopup', { reference }),
    /** Organisation administrators only: the organisation's users. */
    listTeam: () => data('listTeam'),
    /**
     * Invite a person by e-mail (organisation administrators): the e-mail's link, valid 72 hours and
     * usable once, lets them choose their password. The only way to add a user over the API.
     */
    inviteTeamMember: (body: Body<'inviteTeamMember'>) => data('inviteTeamMember', body),
    /** The organisation's invitations, newest first, with their state. */
    listTeamInvitations: () => data('listTeamInvitations'),
    /** Revoke an invitation not yet accepted. */
    revokeTeamInvitation: (id: number) => data('revokeTeamInvitation', undefined, { path: { id: String(id) } }),
    /** Disable or enable a user, or change their role. */
    updateTeamMember: (id: number, change: Body<'updateTeamMember'>) => data('updateTeamMember', change, { path: { id: String(id) } }),
    /** The printable slip of a found verification, as PDF bytes; free, team members too. */
    verificationSlip: (referenceId: string) => file('getVerificationSlip', 'application/pdf', { path: { reference_id: referenceId } }),
    /** Platform administrators only: one page of every organisation (pass next_cursor as cursor). */
    platformOrganisations: (query: Query<'listPlatformOrganisations'> = {}) => data('listPlatformOrganisations', undefined, { query }),
    platformOrganisation: (id: number) => data('getPlatformOrganisation', undefined, { path: { id: String(id) } }),
    /** Organisation administrators only: the ledger, newest first; pass `next_cursor` as `cursor` for the next page. */
    transactions: (query: Query<'listTransactions'> = {}) => data('listTransactions', undefined, { query }),
    /**
     * The whole filtered ledger as CSV (header row first), as a stream to pipe to a file: the server
     * sends it while it reads it, however many lines there are. No time limit unless `signal` sets one.
     */
    async transactionsCsv(query: Omit<Query<'listTransactions'>, 'limit' | 'cursor'> = {}, o: { signal?: AbortSignal } = {}): Promise<ReadableStream<Uint8Array>> {
      const res = await send('listTransactions', undefined, { query, signal: o.signal ?? new AbortController().signal }, 'text/csv');
      if (!res.ok) return fail('listTransactions', res);
      if (!res.body) throw new Error('listTransactions: the CSV answer has no body');
      return res.body;
    },
    /** Organisation administrators only. */
    topups: (query: Query<'listTopups'> = {}) => data('listTopups', undefined, { query }),
    topup: (reference: string) => data('getTopup', undefined, { path: { reference } }),
    /** Every member of the organisation; no personal data (requery a reference_id to read its record). */
    verifications: (query: Query<'listVerifications'> = {}) => data('listVerifications', undefined, { query }),
    /** Organisation administrators only: the audit trail, newest first; pass `next_cursor` as `cursor` for the next page. */
    auditEvents: (query: Query<'listAuditEvents'> = {}) => data('listAuditEvents', undefined, { query }),
  };
}

export type Client = ReturnType<typeof createClient>;
