// The portal's only way to the service: the API's own routes under /portal/api, with the session
// cookie (sent by the browser, unreadable here) and the CSRF token (kept in memory, never stored).

export const API = '/portal/api';

let csrfToken: string | null = null;
const signedOutListeners = new Set<() => void>();

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

export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Whether the browser holds a session cookie; the cookie itself stays out of reach. */
export async function loadSession(): Promise<boolean> {
  const r = await fetch('/portal/session', { credentials: 'same-origin' });
  const body = (await r.json()) as { signed_in: boolean; csrf_token: string | null };
  csrfToken = body.csrf_token;
  return body.signed_in;
}

type Body = { json?: unknown; form?: Record<string, string>; text?: string; contentType?: string };

export async function call<T = any>(method: string, path: string, body: Body = {}, opts: { headers?: Record<string, string>; quiet401?: boolean } = {}): Promise<{ status: number; data: T; headers: Headers }> {
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
  const r = await fetch(`${API}${path}`, { method, headers, body: payload ?? null, credentials: 'same-origin' });
  const text = await r.text();
  let data: any = {};
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { detail: text };
    }
  }
  if (r.status === 401 && !opts.quiet401) for (const l of signedOutListeners) l();
  if (r.status >= 400) throw new ApiError(r.status, data);
  return { status: r.status, data: data as T, headers: r.headers };
}

export const get = <T = any>(path: string) => call<T>('GET', path).then((r) => r.data);

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
  const r = await fetch(`${API}${path}`, { headers: { Accept: accept }, credentials: 'same-origin' });
  if (!r.ok) {
    const body = await r.json().catch(() => ({}));
    if (r.status === 401) for (const l of signedOutListeners) l();
    throw new ApiError(r.status, body as Record<string, unknown>);
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
