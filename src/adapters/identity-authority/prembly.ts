/**
 * Prembly IdentityPass client. What the public material says, and what this file relies on:
 *
 * - NIN: `POST {URL}/identitypass/verification/vnin`, JSON `{ "number_nin": "<nin>" }` (the page's
 *   test data: `number` or `number_nin`), headers `app-id` and `x-api-key` (the secret key),
 *   https://docs.prembly.com/docs/nin-and-virtual-nin-copy (test/fixtures/providers/prembly). The
 *   base URL is the host; one that already ends in `/identitypass` is taken as it is, so
 *   configurations written for the earlier path keep working.
 * - The answer's envelope, as in Prembly's SDK (github.com/prembly/prembly_java,
 *   LookUpVirtualNINResponse.java, NinData.java): `{ status: boolean, detail: string,
 *   response_code: "00", nin_data: {...}, verification: { status: "VERIFIED", reference } }`. The
 *   page's own response example could not be copied, so this part is not checked against it.
 *   Answers carrying the record under `data` instead of `nin_data` are read too.
 * - The record (`nin_data`) uses NIMC keys: firstname, middlename, surname, birthdate, gender,
 *   telephoneno, photo, residence_address, residence_Town, residence_lga, residence_state,
 *   self_origin_state, self_origin_lga, nin.
 * - Phone: `POST {URL}/identitypass/verification/phone_number/advance`, JSON `{ "number": "<phone>" }`,
 *   record under `data`. No documentation page for it was found: the path is the NIN page's family
 *   (`/identitypass/verification/...`) with the suffix of the SDK's older
 *   `/api/v2/biometrics/merchant/data/verification/phone_number/advance` (PremblyApiUrls.java).
 * - Custom response codes, https://docs.prembly.com/docs/response-codes-and-verification-status :
 *   00 found; 01 record not found; 02 "verification can't be completed by this time, kindly retry
 *   later"; 03 insufficient wallet balance. They come "in the response_code field of the JSON body,
 *   even when HTTP status is 200", on top of the HTTP status.
 * - vNIN: the same path and answers ("The responses for both NIN and vNIN are the same"), the
 *   16-character token sent as `number`. Prembly publishes no refusal bodies for a vNIN; the four
 *   refusals are read from the not-found answer's `detail` (expired, another enterprise, used).
 * - No demography search and no reasons endpoint are documented.
 *
 * Not verified against a live account: the exact base URL per environment is configuration.
 */
import { callUpstream, isRecord, joinUrl, shapeError, statusError, type UpstreamResponse } from './http.ts';
import { withoutToken, withQueriedNin, withSpecAliases } from './raw.ts';
import { DEFAULT_REASONS } from './reasons.ts';
import type { DemographyQuery, IdentityAuthority, NinQuery, PhoneQuery, Reason, UpstreamOutcome, VninQuery } from './types.ts';
import { UpstreamError } from './types.ts';

export interface PremblyAuthorityConfig {
  baseUrl: string;
  apiKey: string;
  appId?: string | undefined;
  timeoutMs: number;
}

const UPSTREAM = 'prembly';

/** Prembly-only keys and the person-record aliases they are copied to. */
const KEY_ALIASES: Record<string, string> = {
  residence_address: 'residence_AdressLine1',
  residence_Town: 'town',
  residence_state: 'state',
  birthlga: 'birthLga',
  birthstate: 'birthState',
};

export function createPremblyAuthority(cfg: PremblyAuthorityConfig): IdentityAuthority {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/json',
    'x-api-key': cfg.apiKey,
  };
  if (cfg.appId) headers['app-id'] = cfg.appId;

  async function call(path: string, body: unknown, signal?: AbortSignal): Promise<UpstreamResponse> {
    return callUpstream(
      joinUrl(apiRoot(cfg.baseUrl), path),
      { method: 'POST', headers, body: JSON.stringify(body) },
      { upstream: UPSTREAM, timeoutMs: cfg.timeoutMs, signal },
    );
  }
  async function post(path: string, what: string, body: unknown, signal?: AbortSignal): Promise<UpstreamOutcome> {
    return toOutcome(await call(path, body, signal), what);
  }

  return {
    async lookupNin(q: NinQuery, signal?: AbortSignal) {
      return withQueriedNin(await post('/verification/vnin', 'NIN lookup', { number_nin: q.nin }, signal), q.nin);
    },
    async lookupVnin(q: VninQuery, signal?: AbortSignal) {
      // The same path as the NIN: a 16-character `number` is a vNIN. A refusal is Prembly's not-found
      // (response_code 01) whose `detail` says which.
      const res = await call('/verification/vnin', { number: q.vnin }, signal);
      const outcome = toOutcome(res, 'vNIN lookup');
      return withoutToken(outcome, isRecord(res.body) ? res.body.detail : undefined);
    },
    lookupPhone(q: PhoneQuery, signal?: AbortSignal) {
      return post('/verification/phone_number/advance', 'phone lookup', { number: q.phone }, signal);
    },
    async lookupDemography(_q: DemographyQuery): Promise<UpstreamOutcome> {
      throw new UpstreamError(`${UPSTREAM}: demography lookup not supported`, { retryable: false });
    },
    async listReasons(): Promise<Reason[]> {
      return DEFAULT_REASONS.map((r) => ({ ...r }));
    },
  };
}

/** Prembly's paths live under `/identitypass`; a base URL that already names it is not doubled. */
function apiRoot(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return /\/identitypass$/i.test(trimmed) ? trimmed : `${trimmed}/identitypass`;
}

function toOutcome(res: UpstreamResponse, what: string): UpstreamOutcome {
  const body = isRecord(res.body) ? res.body : undefined;
  const code = typeof body?.response_code === 'string' ? body.response_code : undefined;

  if (code === '01') return { kind: 'not_found' };
  if (code === '02') {
    throw new UpstreamError(`${UPSTREAM}: ${what} unavailable (response_code 02)`, { retryable: true, status: res.status });
  }
  if (code === '03') {
    // An empty wallet at Prembly does not refill itself between retries.
    throw new UpstreamError(`${UPSTREAM}: ${what} refused, insufficient wallet balance (response_code 03)`, {
      retryable: false,
      status: res.status,
    });
  }
  if (res.status === 404 && body?.status === false) return { kind: 'not_found' };
  if (res.status < 200 || res.status > 299) throw statusError(UPSTREAM, res, what);

  const person = body?.nin_data ?? body?.data;
  if (body?.status !== true || !isRecord(person)) throw shapeError(UPSTREAM, res.status, what);
  return { kind: 'found', raw: premblyRaw(person, body.verification) };
}

function premblyRaw(person: Record<string, unknown>, verification: unknown): Record<string, unknown> {
  const raw = withSpecAliases(person, KEY_ALIASES);
  // Prembly's verification reference is the upstream-issued id the person record calls transaction_id.
  if (raw.transaction_id === undefined && isRecord(verification) && typeof verification.reference === 'string') {
    raw.transaction_id = verification.reference;
  }
  return raw;
}
