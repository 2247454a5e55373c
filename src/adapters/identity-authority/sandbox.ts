import { z } from 'zod';
import { callUpstream, joinUrl, shapeError, statusError, type UpstreamResponse } from './http.ts';
import { withoutToken } from './raw.ts';
import type { DemographyQuery, IdentityAuthority, NinQuery, PhoneQuery, Reason, UpstreamOutcome, VninQuery } from './types.ts';
import { UpstreamError } from './types.ts';

/**
 * Client for the "sandbox" dialect: our own identity-authority simulator
 * (src/simulators/identity-authority/README.md describes the API).
 */
export interface SandboxAuthorityConfig {
  baseUrl: string;
  /** Empty string: send no Authorization header (simulator started without a key). */
  apiKey: string;
  timeoutMs: number;
}

const UPSTREAM = 'sandbox identity authority';

const foundSchema = z.object({ status: z.literal(true), data: z.record(z.string(), z.unknown()) });
const notFoundSchema = z.object({ status: z.literal(false), message: z.literal('Record not found') });
// The simulator's four vNIN refusals (its README); all 404 with this envelope.
const vninRefusalSchema = z.object({ status: z.literal(false), message: z.enum(['vNIN not found', 'vNIN expired', 'vNIN issued for another enterprise', 'vNIN already used']) });
const reasonsSchema = z.object({
  data: z.array(z.object({ key: z.string(), label: z.string(), description: z.string() })),
});

export function createSandboxAuthority(cfg: SandboxAuthorityConfig): IdentityAuthority {
  const headers = (): Record<string, string> => {
    const h: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json' };
    if (cfg.apiKey !== '') h.authorization = `Bearer ${cfg.apiKey}`;
    return h;
  };

  async function call(path: string, body: unknown, signal?: AbortSignal): Promise<UpstreamResponse> {
    return callUpstream(
      joinUrl(cfg.baseUrl, path),
      { method: 'POST', headers: headers(), body: JSON.stringify(body) },
      { upstream: UPSTREAM, timeoutMs: cfg.timeoutMs, signal },
    );
  }
  async function lookup(path: string, what: string, body: unknown, signal?: AbortSignal): Promise<UpstreamOutcome> {
    return toOutcome(await call(path, body, signal), what);
  }

  return {
    lookupNin(q: NinQuery, signal?: AbortSignal) {
      return lookup('/v1/nin', 'NIN lookup', { nin: q.nin, reason: q.reason }, signal);
    },
    async lookupVnin(q: VninQuery, signal?: AbortSignal) {
      const res = await call('/v1/vnin', { vnin: q.vnin, reason: q.reason }, signal);
      if (res.status === 404) {
        const refused = vninRefusalSchema.safeParse(res.body);
        if (refused.success) return withoutToken({ kind: 'not_found' }, refused.data.message);
      }
      const outcome = toOutcome(res, 'vNIN lookup');
      return outcome.kind === 'found' ? withoutToken(outcome) : outcome;
    },
    lookupPhone(q: PhoneQuery, signal?: AbortSignal) {
      return lookup('/v1/phone', 'phone lookup', { phone: q.phone, reason: q.reason }, signal);
    },
    lookupDemography(q: DemographyQuery, signal?: AbortSignal) {
      const body = { firstname: q.firstName, lastname: q.lastName, dob: q.dob, gender: q.gender, reason: q.reason };
      return lookup('/v1/demography', 'demography lookup', body, signal);
    },
    async listReasons(signal?: AbortSignal): Promise<Reason[]> {
      const res = await callUpstream(
        joinUrl(cfg.baseUrl, '/v1/reasons'),
        { method: 'GET', headers: headers() },
        { upstream: UPSTREAM, timeoutMs: cfg.timeoutMs, signal },
      );
      if (res.status !== 200) throw statusError(UPSTREAM, res, 'reasons list');
      const parsed = reasonsSchema.safeParse(res.body);
      if (!parsed.success) throw shapeError(UPSTREAM, res.status, 'reasons list', parsed.error);
      return parsed.data.data;
    },
  };
}

function toOutcome(res: UpstreamResponse, what: string): UpstreamOutcome {
  if (res.status === 200) {
    const parsed = foundSchema.safeParse(res.body);
    if (!parsed.success) throw shapeError(UPSTREAM, res.status, what, parsed.error);
    return { kind: 'found', raw: parsed.data.data };
  }
  if (res.status === 404) {
    // Only the simulator's own not-found body counts: a bare 404 from a wrong base URL would
    // otherwise turn every lookup into a silent "not found".
    if (notFoundSchema.safeParse(res.body).success) return { kind: 'not_found' };
    throw new UpstreamError(`${UPSTREAM}: ${what} answered HTTP 404 without a record-not-found body`, {
      retryable: false,
      status: 404,
    });
  }
  throw statusError(UPSTREAM, res, what);
}
