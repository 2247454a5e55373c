import { createHmac } from 'node:crypto';
import { openJson, type KeyRing } from '../../lib/crypto.ts';
import { keyRing } from './sealing.ts';
import type { VninRefusal } from '../../adapters/identity-authority/index.ts';
import type { Config } from '../../config.ts';
import { AppError } from '../../lib/errors.ts';
import { VNIN_INVALID, type StoredQuery, type VerificationQuery, type VerificationRow } from './verification.schemas.ts';

/**
 * Virtual NINs (README: vNIN). The token is use-once at the authority and must not be stored: it
 * lives in this process's memory and, sealed, in its lookup job's payload while the lookup runs.
 * Wherever a vNIN must be recognised later (the row's stored query, the Idempotency-Key comparison)
 * an HMAC under VNIN_HASH_KEY stands in for it.
 */

export const VNIN_VALIDITY_HOURS = 72;

/** Letters and digits only; lower case is upper-cased. Anything else is the contract's 400. */
export function normaliseVnin(raw: string): string {
  if (!/^[A-Za-z0-9]{16}$/.test(raw)) throw new AppError('bad_request', VNIN_INVALID);
  return raw.toUpperCase();
}

export function vninHash(config: Pick<Config, 'VNIN_HASH_KEY'>, vnin: string): string {
  return createHmac('sha256', config.VNIN_HASH_KEY).update(`vnin:${vnin}`).digest('hex');
}

/** Whether a query carries a token (whatever its mode): it is then use-once and never stored. */
export function carriesVnin(query: VerificationQuery): query is Extract<VerificationQuery, { vnin: string }> {
  return 'vnin' in query && typeof query.vnin === 'string';
}

/** What may be kept of a query: everything, except a vNIN, which becomes its keyed hash. */
export function storedQueryOf(config: Pick<Config, 'VNIN_HASH_KEY'>, query: VerificationQuery): StoredQuery {
  if (!carriesVnin(query)) return query as StoredQuery;
  const { vnin, ...rest } = query;
  return { ...rest, vninHash: vninHash(config, vnin) } as StoredQuery;
}

const ASK_AGAIN = 'ask the person for a new one';

/** The 404 of each refusal; `vnin_not_found`'s detail is fixed by the contract. */
export const VNIN_REFUSAL_DETAIL: Record<VninRefusal, string> = {
  vnin_not_found: 'vNIN not found',
  vnin_expired: `vNIN has expired (a vNIN is valid for ${VNIN_VALIDITY_HOURS} hours); ${ASK_AGAIN}`,
  vnin_wrong_enterprise: `vNIN was made for another verifier's enterprise code; ${ASK_AGAIN}, made for ours (GET /verify-nin/vnin/instructions)`,
  vnin_used: `vNIN has already been used (a vNIN can be looked up once); ${ASK_AGAIN}`,
};

export function isVninRefusal(code: string | null | undefined): code is VninRefusal {
  return code !== null && code !== undefined && code in VNIN_REFUSAL_DETAIL;
}

/** A lookup that may have reached the authority failed: the token may be spent, so it is not retried. */
export const VNIN_FAILED = `Identity authority unavailable, nothing was charged; the vNIN may have been used up: ${ASK_AGAIN}`;

/** A vNIN lookup that cannot run again because its token is gone (erased from its lost job). */
export const VNIN_LOST_DETAIL = 'vNIN lookup lost before an answer; the token is not kept, so it cannot be retried';

/** GET /verify-nin/vnin/instructions: how a person makes a vNIN for us. */
export function vninInstructions(config: Pick<Config, 'nimcEnterpriseCode'>) {
  const code = config.nimcEnterpriseCode;
  return {
    enterprise_code: code,
    ussd: `*346*3*<NIN>*${code}#`,
    validity_hours: VNIN_VALIDITY_HOURS,
    steps: [
      `On the phone number linked to the NIN, dial *346*3*<NIN>*${code}# (the 11-digit NIN in place of <NIN>); the vNIN arrives by SMS.`,
      `Or, in the NIMC MWS mobile app, choose "Get Virtual NIN" and enter the enterprise code ${code}.`,
      'The vNIN is 16 letters and digits (e.g. AB012345678910YZ); give it to us within 72 hours.',
      'A vNIN can be looked up once; for another verification, make a new one.',
    ],
  };
}

/**
 * Whether a stored verification looked its person up by vNIN: a vNIN verification, or a match-only
 * one by vNIN (its stored query keeps the token's hash). Such a lookup is never repeated.
 */
export function rowByVnin(ring: KeyRing, row: Pick<VerificationRow, 'mode' | 'query_enc' | 'key_id' | 'reference_id'>): boolean {
  if (row.mode === 'vnin') return true;
  if ((row.mode !== 'match' && row.mode !== 'face') || !row.query_enc || !row.key_id) return false;
  const q = openJson<Record<string, unknown>>(keyRing(ring, row.key_id), { keyId: row.key_id, data: row.query_enc }, row.reference_id);
  return typeof q.vninHash === 'string';
}
