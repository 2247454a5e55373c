// The portal's only way to the service: the API's own routes under /portal/api, with the session
// cookie (sent by the browser, unreadable here) and the CSRF token (kept in memory, never stored).

// The API's shapes are the OpenAPI document's, generated into clients/typescript (`npm run gen:client`):
// the pages name them as `Schemas['Batch']`, never a copy of their own. Imported as types only, so not
// a byte of the client reaches the portal's bundle.
export type { Schemas } from '../../clients/typescript/src/types.ts';

export const API = '/portal/api';

let csrfToken: string | null = null;
const signedOutListeners = new Set<() => void>();
/** When the session's token expires, in this page's clock (performance-free: Date.now() at the answer plus the seconds left). */
let sessionEndsAt: number | null = null;
const sessionListeners = new Set<(endsAt: number | null) => void>();

/** What a person reads when the request never got an answer (offline, DNS, a dropped connection). */
export const NETWORK_FAILURE = 'Could not reach the service. Check your connection and try again.';
/** A gateway's own error page (not the API's JSON) while the service restarts or is overloaded. */
export const SERVICE_UNAVAILABLE = 'The service is not answering right now. Try again in a minute.';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly body: Record<string, unknown>;
  constructor(status: number, body: Record<string, unknown>) {
    super(typeof body.detail === 'string' ? body.detail : `Request failed (${status})`);
    this.status = status;
    this.code = typeof body.code === 'string' ? body.code : undefined;
    this.body = body;
  }
}

/** The request left no answer to read: said in plain words, not the browser's "Failed to fetch". */
export class NetworkError extends Error {
  constructor() {
    super(NETWORK_FAILURE);
  }
}

/** fetch, with a failure to connect turned into a NetworkError. */
async function reach(input: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(input, init);
  } catch (err) {
    // An abort is the page's own decision, not the network's.
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new NetworkError();
  }
}

/** An error answer's body: the API's JSON, or, from a gateway in front of it, plain words. */
function errorBody(status: number, text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>;
  } catch {
    // Not JSON: not the API's own answer.
  }
  return { detail: status >= 500 ? SERVICE_UNAVAILABLE : `Request failed (${status})` };
}

/** The session's end, known from the sign-in answer or GET /portal/session (`expires_in` seconds). */
export function setSessionExpiry(secondsLeft: number | null | undefined): void {
  sessionEndsAt = typeof secondsLeft === 'number' ? Date.now() + secondsLeft * 1000 : null;
  for (const l of sessionListeners) l(sessionEndsAt);
}

export function sessionExpiry(): number | null {
  return sessionEndsAt;
}

export function onSessionExpiry(listener: (endsAt: number | null) => void): () => void {
  sessionListeners.add(listener);
  return () => sessionListeners.delete(listener);
}

/** The session is over (its time is up): every page is told, as by a 401. */
export function sessionEnded(): void {
  for (const l of signedOutListeners) l();
}

export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Whether the browser holds a session cookie; the cookie itself stays out of reach. */
export async function loadSession(): Promise<boolean> {
  const r = await reach('/portal/session', { credentials: 'same-origin' });
  if (!r.ok) throw new ApiError(r.status, errorBody(r.status, await r.text()));
  // GET /portal/session is the portal's own route (src/modules/portal/session.ts), not the API's:
  // it is in no OpenAPI document, so its shape is declared here.
  const body = (await r.json()) as { signed_in: boolean; csrf_token: string | null; expires_in?: number | null };
  csrfToken = body.csrf_token;
  setSessionExpiry(body.expires_in);
  return body.signed_in;
}

type Body = { json?: unknown; form?: Record<string, string>; text?: string; contentType?: string };

export async function call<T = unknown>(method: string, path: string, body: Body = {}, opts: { headers?: Record<string, string>; quiet401?: boolean } = {}): Promise<{ status: number; data: T; headers: Headers }> {
  const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
  let payload: string | undefined;
  if (body.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body.json);
  } else if (body.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    payload = new URLSearchParams(body.form).toString();
  } else if (body.text !== undefined) {
    headers['Content-Type'] = body.contentType ?? 'text/plain';
    payload = body.text;
  }
  if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  const r = await reach(`${API}${path}`, { method, headers, body: payload ?? null, credentials: 'same-origin' });
  const text = await r.text();
  if (r.status === 401 && !opts.quiet401) for (const l of signedOutListeners) l();
  if (r.status >= 400) throw new ApiError(r.status, errorBody(r.status, text));
  let data: any = {};
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { detail: text };
    }
  }
  return { status: r.status, data: data as T, headers: r.headers };
}

export const get = <T = unknown>(path: string) => call<T>('GET', path).then((r) => r.data);

/** A query string from the filters that are set. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Units with digits grouped by commas: 1,234 units. */
export function formatUnits(n: number): string {
  return `${n.toLocaleString('en-US')} units`;
}

const NAIRA = new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN' });

/** Kobo (the API's integers) as a person reads money: ₦11,015.23. The portal's only money format. */
export function formatNaira(kobo: number): string {
  return NAIRA.format(kobo / 100);
}

/** Fetches a CSV with the session and hands it to the browser as a file (a link cannot send Accept). */
export function downloadCsv(path: string, filename: string): Promise<void> {
  return download(path, filename, 'text/csv');
}

/** Fetches a file of the given type with the session and hands it to the browser (a link cannot send Accept). */
export async function download(path: string, filename: string, accept: string): Promise<void> {
  const r = await reach(`${API}${path}`, { headers: { Accept: accept }, credentials: 'same-origin' });
  if (!r.ok) {
    const body = errorBody(r.status, await r.text().catch(() => ''));
    if (r.status === 401) for (const l of signedOutListeners) l();
    throw new ApiError(r.status, body);
  }
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Signs in with the API's password grant; the token goes into the HttpOnly cookie, never to this
 * page, which keeps the CSRF token and when the session ends.
 */
export async function passwordSignIn(username: string, password: string, otp: string): Promise<{ requirePasswordChange: boolean }> {
  const form: Record<string, string> = { grant_type: 'password', username, password };
  if (otp) form.otp = otp;
  // Not the API's TokenResponse: the portal's bridge keeps the token in its cookie and answers with
  // the CSRF token instead (src/modules/portal/session.ts), an answer no OpenAPI document describes.
  const r = await call<{ csrf_token: string; expires_in: number; require_password_change: boolean }>('POST', '/login', { form }, { quiet401: true });
  setCsrfToken(r.data.csrf_token);
  setSessionExpiry(r.data.expires_in);
  return { requirePasswordChange: r.data.require_password_change };
}
