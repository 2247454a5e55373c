import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { openJson, sealJson, type KeyRing } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import * as repo from './verification.repository.ts';
import { idempotencyKeyHeader, type IdempotencyRow } from './verification.schemas.ts';

/**
 * Idempotency-Key on the verification POSTs. A key is claimed by inserting its row before any
 * work; the claim is tied to its verification (reference_id) in the transaction that creates the
 * verification, so a key can start at most one charge. Final answers (2xx, 402, 404) are kept,
 * encrypted, for the replay window and replayed with `Idempotent-Replayed: true`.
 */
export const REPLAY_WINDOW_MS = 24 * 3600 * 1000;
// A claim that never reached its verification (the process died in between) is taken over after
// this long; the verification transaction is well under it, and linkIdempotencyKey still refuses
// a second link if the first request was merely slow.
const ABANDONED_AFTER_MS = 60_000;

export const IN_PROGRESS = 'A request with this Idempotency-Key is in progress';
export const DIFFERENT_REQUEST = 'Idempotency-Key was used with a different request';

export type Answer = { status: number; body: Record<string, unknown>; headers?: Record<string, string> };

/** keyId: the key the request fingerprint is computed with (the answer is sealed with the active key). */
export type Claim = { orgId: number; key: string; endpoint: string; requestHash: string; keyId: string };

export function parseIdempotencyKey(value: string | undefined): string | null {
  const parsed = idempotencyKeyHeader.safeParse(value);
  if (!parsed.success) throw new AppError('bad_request', parsed.error.issues[0]!.message);
  return parsed.data ?? null;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const hashKeys = new WeakMap<Buffer, Buffer>();

function keyEntry(ring: KeyRing, keyId: string) {
  const entry = ring.find((k) => k.id === keyId);
  if (!entry) throw new Error(`encryption key ${keyId} is not configured`);
  return entry;
}

/**
 * Keyed hash of the validated body: a plain SHA-256 of an 11-digit NIN is reversed by brute force,
 * so the stored fingerprint must not be computable without the service's key.
 */
export function requestHash(ring: KeyRing, keyId: string, endpoint: string, body: unknown): string {
  const entry = keyEntry(ring, keyId);
  let k = hashKeys.get(entry.key);
  if (!k) {
    k = Buffer.from(hkdfSync('sha256', entry.key, Buffer.alloc(0), 'idempotency-request-hash', 32));
    hashKeys.set(entry.key, k);
  }
  return createHmac('sha256', k).update(canonical({ endpoint, body })).digest('hex');
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export const aad = (orgId: number, key: string) => `idempotency:${orgId}:${key}`;

export type ClaimResult =
  | { kind: 'claimed'; claim: Claim }
  | { kind: 'replay'; answer: Answer }
  /** Claimed earlier by a request that started a verification but never stored its answer. */
  | { kind: 'linked'; claim: Claim; referenceId: string };

/**
 * Claims `key` for this request or explains why not: a stored answer to replay, a claim already
 * tied to a verification, or a 409 (another request in flight, or a different request body).
 */
export async function claimKey(
  db: CommonQueryMethods,
  ring: KeyRing,
  c: { orgId: number; key: string; endpoint: string; body: unknown; now: Date },
): Promise<ClaimResult> {
  const activeKeyId = ring[0]!.id;
  const fresh: Claim = { orgId: c.orgId, key: c.key, endpoint: c.endpoint, keyId: activeKeyId, requestHash: requestHash(ring, activeKeyId, c.endpoint, c.body) };
  const claimed = await repo.claimIdempotencyKey(db, {
    ...fresh,
    now: c.now,
    expiredBefore: new Date(c.now.getTime() - REPLAY_WINDOW_MS),
    abandonedBefore: new Date(c.now.getTime() - ABANDONED_AFTER_MS),
  });
  if (claimed) return { kind: 'claimed', claim: fresh };

  const row = await repo.findIdempotencyKey(db, c.orgId, c.key);
  // Deleted between the two statements (its request failed): the caller may simply retry.
  if (!row) throw new AppError('conflict', IN_PROGRESS);
  const existing = claimOf(ring, c, row);
  if (!sameHash(existing.requestHash, row.request_hash)) throw new AppError('conflict', DIFFERENT_REQUEST);
  if (row.status_code !== null && row.response_enc) {
    const body = openJson<Record<string, unknown>>(ring, { keyId: row.key_id ?? existing.keyId, data: row.response_enc }, aad(c.orgId, c.key));
    return { kind: 'replay', answer: { status: row.status_code, body, headers: { 'Idempotent-Replayed': 'true' } } };
  }
  if (row.reference_id) return { kind: 'linked', claim: existing, referenceId: row.reference_id };
  throw new AppError('conflict', IN_PROGRESS);
}

/** The stored claim, with this request's hash recomputed under the key the claim was hashed with. */
function claimOf(ring: KeyRing, c: { orgId: number; key: string; endpoint: string; body: unknown }, row: IdempotencyRow): Claim {
  const keyId = row.hash_key_id ?? row.key_id ?? ring[0]!.id;
  return { orgId: c.orgId, key: c.key, endpoint: c.endpoint, keyId, requestHash: requestHash(ring, keyId, c.endpoint, c.body) };
}

/** Only answers that cannot change on a retry are kept; anything else frees the key. */
export function isFinal(status: number): boolean {
  return (status >= 200 && status < 300) || status === 402 || status === 404;
}

export async function storeAnswer(db: CommonQueryMethods, ring: KeyRing, claim: Claim, answer: Answer): Promise<void> {
  const sealed = sealJson(ring, answer.body, aad(claim.orgId, claim.key));
  await repo.storeIdempotentResponse(db, {
    orgId: claim.orgId,
    key: claim.key,
    requestHash: claim.requestHash,
    statusCode: answer.status,
    responseEnc: sealed.data,
    keyId: sealed.keyId,
  });
}

/**
 * Frees a claim so a retry can run. `unlinkedOnly` when the outcome is unknown: a claim already
 * tied to a verification stays, so the retry resolves to that verification instead of a new one.
 */
export async function releaseKey(db: CommonQueryMethods, claim: Claim, opts: { unlinkedOnly: boolean } = { unlinkedOnly: false }): Promise<void> {
  await repo.releaseIdempotencyKey(db, { ...claim, unlinkedOnly: opts.unlinkedOnly });
}

export async function linkKey(db: CommonQueryMethods, claim: Claim, referenceId: string): Promise<void> {
  const linked = await repo.linkIdempotencyKey(db, { ...claim, referenceId });
  // Another request with the same key won the claim meanwhile; this transaction is rolled back.
  if (!linked) throw new AppError('conflict', IN_PROGRESS);
}

export function answerOfError(err: AppError): Answer {
  return { status: err.status, body: { detail: err.detail, ...err.extra } };
}
