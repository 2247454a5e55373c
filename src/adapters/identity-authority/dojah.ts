/**
 * Dojah KYC client. What the public material says, and what this file relies on
 * (test/fixtures/providers/dojah holds the examples, each with the address it was copied from):
 *
 * - Headers: `AppId: <app id>` and `Authorization: <secret key>`, the key without "Bearer"
 *   ("Use <key> not Bearer <key>", https://dojah.mintlify.app/docs/nigeria/lookup-phone-number and
 *   https://docs.dojah.io/docs/nigeria/verify-nin-with-selfie-image).
 * - NIN: `GET {baseUrl}/api/v1/kyc/nin?nin=<nin>` ("Lookup NIN" of Dojah's documentation). Answer 200:
 *   `{ "entity": { first_name, last_name, middle_name, gender: "Male", photo, date_of_birth: "1982-01-01",
 *   email, phone_number, employment_status, marital_status } }`, without the NIN itself.
 * - Phone: `GET {baseUrl}/api/v1/kyc/phone_number?phone_number=<phone>`, answer 200
 *   `{ "entity": { first_name, last_name, middle_name, date_of_birth, phone_number, photo, gender, customer } }`
 *   (https://dojah.mintlify.app/docs/nigeria/lookup-phone-number, "Phone Number Advance").
 * - Statuses, https://docs.dojah.io/overview/response-codes : 404 "Records/parameters not found"
 *   (and "URL not recognized"), 424 "Third Party service Failure", 429 rate limit, 5xx. A 424 is
 *   the government source failing behind Dojah, so it is retried like a 5xx.
 * - Error bodies come as `{ "error": "<text>" }`, e.g. `{ "error": "vnin not found" }`
 *   (https://api-docs.dojah.io/docs/virtual-nin; no NIN not-found body is published). A 404 with
 *   such a body, or a 400 whose error says "not found", is read as no record.
 * - vNIN: `GET {baseUrl}/api/v1/kyc/vnin?vnin=<token>`, answer 200 `{ "entity": { vnin, firstname,
 *   middlename, surname, user_id, gender: "M", mobile, dateOfBirth, photo } }` (no NIN), not found
 *   `{ "error": "vnin not found" }` (https://api-docs.dojah.io/docs/virtual-nin). The other refusals
 *   (expired, another enterprise, used) are read from that error's text.
 * - No demography search and no reasons endpoint are documented.
 */
import { callUpstream, isRecord, joinUrl, shapeError, statusError, type UpstreamResponse } from './http.ts';
import { withoutToken, withQueriedNin, withSpecAliases } from './raw.ts';
import { DEFAULT_REASONS } from './reasons.ts';
import type { DemographyQuery, IdentityAuthority, NinQuery, PhoneQuery, Reason, UpstreamOutcome, VninQuery } from './types.ts';
import { UpstreamError } from './types.ts';

export interface DojahAuthorityConfig {
  baseUrl: string;
  apiKey: string;
  appId: string;
  timeoutMs: number;
}

const UPSTREAM = 'dojah';

/** Dojah's snake_case keys and the person-record aliases they are copied to. */
const KEY_ALIASES: Record<string, string> = {
  first_name: 'firstname',
  middle_name: 'middlename',
  last_name: 'surname',
  date_of_birth: 'dateOfBirth',
  phone_number: 'telephoneno',
  residential_address: 'address',
  state_of_origin: 'self_origin_state',
  lga_of_origin: 'self_origin_lga',
  reference_id: 'transaction_id',
};

export function createDojahAuthority(cfg: DojahAuthorityConfig): IdentityAuthority {
  const headers = { accept: 'application/json', AppId: cfg.appId, Authorization: cfg.apiKey };

  async function call(path: string, query: Record<string, string>, signal?: AbortSignal): Promise<UpstreamResponse> {
    // The URL carries the query: it is never logged, and errors name the upstream only.
    const url = `${joinUrl(cfg.baseUrl, path)}?${new URLSearchParams(query).toString()}`;
    return callUpstream(url, { method: 'GET', headers }, { upstream: UPSTREAM, timeoutMs: cfg.timeoutMs, signal });
  }
  async function get(path: string, what: string, query: Record<string, string>, signal?: AbortSignal): Promise<UpstreamOutcome> {
    return toOutcome(await call(path, query, signal), what);
  }

  return {
    async lookupNin(q: NinQuery, signal?: AbortSignal) {
      return withQueriedNin(await get('/api/v1/kyc/nin', 'NIN lookup', { nin: q.nin }, signal), q.nin);
    },
    async lookupVnin(q: VninQuery, signal?: AbortSignal) {
      // "Virtual NIN Lookup": the entity echoes the token and carries no NIN; refusals are its
      // not-found (404 `{"error": ...}`) with the reason in the text.
      const res = await call('/api/v1/kyc/vnin', { vnin: q.vnin }, signal);
      const outcome = toOutcome(res, 'vNIN lookup');
      return withoutToken(outcome, isRecord(res.body) ? res.body.error : undefined);
    },
    lookupPhone(q: PhoneQuery, signal?: AbortSignal) {
      return get('/api/v1/kyc/phone_number', 'phone lookup', { phone_number: q.phone }, signal);
    },
    async lookupDemography(_q: DemographyQuery): Promise<UpstreamOutcome> {
      throw new UpstreamError(`${UPSTREAM}: demography lookup not supported`, { retryable: false });
    },
    async listReasons(): Promise<Reason[]> {
      return DEFAULT_REASONS.map((r) => ({ ...r }));
    },
  };
}

function toOutcome(res: UpstreamResponse, what: string): UpstreamOutcome {
  const body = isRecord(res.body) ? res.body : undefined;
  if (res.status === 200) {
    if (!body || !isRecord(body.entity)) throw shapeError(UPSTREAM, res.status, what);
    return { kind: 'found', raw: withSpecAliases(body.entity, KEY_ALIASES) };
  }
  const error = typeof body?.error === 'string' ? body.error : undefined;
  // A bare 404 (no Dojah error body) means a wrong URL, not a missing person.
  if (res.status === 404 && error !== undefined) return { kind: 'not_found' };
  if (res.status === 400 && error !== undefined && /not\s+found/i.test(error)) return { kind: 'not_found' };
  if (res.status === 424) {
    throw new UpstreamError(`${UPSTREAM}: ${what} answered HTTP 424, a failure of the source behind it`, { retryable: true, status: 424 });
  }
  throw statusError(UPSTREAM, res, what);
}
