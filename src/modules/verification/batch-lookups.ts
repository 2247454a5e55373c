import { sql, UniqueIntegrityConstraintViolationError, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { jobIds, JOBS } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { FairShare } from '../../lib/fair-share.ts';
import { enqueueBackgroundLookup } from './background.ts';
import { subjectOfQuery } from './subject.ts';
import { openJson, sealJson, type KeyRing } from '../../lib/crypto.ts';
import { holdUnit, recordFixtureCalls } from '../wallet/index.ts';
import type { Consent } from './consent.ts';
import { fixtureOutcome, fixtureVninOutcome } from './fixtures.ts';
import type { PersonRecord } from './person.ts';
import { expiresAt, newReferenceId } from './run.ts';
import { keyRing } from './sealing.ts';
import { settle } from './settle.ts';
import type { StoredVninQuery, VerificationQuery } from './verification.schemas.ts';
import { storedQueryOf } from './vnin.ts';
import { consentValue } from './verification.repository.ts';

// The verification side of a batch: each distinct identifier of a batch becomes one verification,
// created (and its unit held) only when it is queued for the authority, named by its batch and
// lookup so that a unique index lets it happen once.

/** The failure code of a batch lookup ended by its batch's cancellation. */
export const BATCH_CANCELLED = 'batch_cancelled';

export type BatchLookupStart = {
  batchId: string;
  lookupIdx: number;
  orgId: number;
  userId: number | null;
  apiClientId: number | null;
  /**
   * A vNIN lookup whose token was lost while it waited (Redis lost it, or it outlived a vNIN's
   * validity) comes with the token's hash only: its verification is queued like the others and
   * its job, finding no token, ends it failed with its unit given back.
   */
  query: Extract<VerificationQuery, { mode: 'nin' | 'phone' | 'vnin' }> | StoredVninQuery;
  consent: Consent | null;
  requestId: string | null;
  now: Date;
};

/** What the verification row keeps of a batch query: a vNIN only as its keyed hash. */
function storedOf(config: Config, query: BatchLookupStart['query']) {
  return 'vninHash' in query ? query : storedQueryOf(config, query);
}

type Deps = { db: CommonQueryMethods; config: Config };

const refRow = z.object({ reference_id: z.string() });

/** The verification of a batch lookup already queued (a feeder that died before noting it). */
export async function findBatchVerification(db: CommonQueryMethods, batchId: string, lookupIdx: number): Promise<string | null> {
  return db.maybeOneFirst(sql.type(refRow)`SELECT reference_id FROM verifications WHERE batch_id = ${batchId} AND batch_lookup = ${lookupIdx}`);
}

/**
 * A live batch lookup: its pending verification and its held unit, in one statement (the wallet's
 * hold). `no_units` when the wallet has no spendable unit (nothing written); `exists` when the
 * lookup was already queued (its reference returned).
 */
export async function startBatchLookup(
  deps: Deps,
  l: BatchLookupStart,
): Promise<
  { kind: 'held'; referenceId: string; sealedQuery: { keyId: string; data: string } | null } | { kind: 'no_units' } | { kind: 'exists'; referenceId: string; sealedQuery: { keyId: string; data: string } | null }
> {
  const ref = newReferenceId();
  const ring = deps.config.encryptionKeys;
  const q = sealJson(ring, storedOf(deps.config, l.query), ref);
  // The job's copy: the query itself, a vNIN's token included (it lives there only).
  const forJob = 'vnin' in l.query ? sealJson(ring, l.query, ref) : 'vninHash' in l.query ? null : q;
  try {
    const held = await holdUnit(deps.db, l.orgId, sql.fragment`
      INSERT INTO verifications
        (reference_id, org_id, user_id, api_client_id, mode, reason, fixture, status, holds_unit, consent, query_enc, key_id, subject_hash, request_id, created_at, expires_at, delivery, batch_id, batch_lookup)
      SELECT ${ref}, hold.org_id, ${l.userId}, ${l.apiClientId}, ${l.query.mode}, ${l.query.reason}, false, 'pending', true, ${consentValue(l.consent)},
             ${sql.binary(q.data)}, ${q.keyId}, ${subjectValue(deps.config, l.query)}, ${l.requestId}, ${sql.timestamp(l.now)}, ${sql.timestamp(expiresAt(deps.config, l.now))}, 'batch', ${l.batchId}, ${l.lookupIdx}
      FROM hold`);
    if (!held) return { kind: 'no_units' };
    return { kind: 'held', referenceId: ref, sealedQuery: forJob ? { keyId: forJob.keyId, data: forJob.data.toString('base64') } : null };
  } catch (err) {
    if (!(err instanceof UniqueIntegrityConstraintViolationError)) throw err;
    const existing = await findBatchVerification(deps.db, l.batchId, l.lookupIdx);
    if (!existing) throw err;
    // Written by a feeder that died before marking its lookup queued, so before any job held the
    // token: the job queued now may carry it (sealed to the existing reference).
    const again = 'vnin' in l.query ? sealJson(ring, l.query, existing) : null;
    return { kind: 'exists', referenceId: existing, sealedQuery: again ? { keyId: again.keyId, data: again.data.toString('base64') } : null };
  }
}

/**
 * A vNIN lookup whose token was lost while it waited (its copy in Redis is gone): it cannot be asked
 * for, so its verification is recorded as ended at once, failed `lookup_abandoned`, with nothing
 * held, queued or charged. Returns its reference (the existing one when recorded before).
 */
export async function recordLostBatchVnin(deps: Deps, l: BatchLookupStart & { query: StoredVninQuery }): Promise<string> {
  const ref = newReferenceId();
  const q = sealJson(deps.config.encryptionKeys, l.query, ref);
  try {
    await deps.db.query(sql.unsafe`
      INSERT INTO verifications
        (reference_id, org_id, user_id, api_client_id, mode, reason, fixture, status, failure_code, holds_unit, consent, query_enc, key_id, request_id, created_at, completed_at, expires_at, delivery, batch_id, batch_lookup)
      VALUES (${ref}, ${l.orgId}, ${l.userId}, ${l.apiClientId}, 'vnin', ${l.query.reason}, false, 'failed', 'lookup_abandoned', false, ${consentValue(l.consent)},
              ${sql.binary(q.data)}, ${q.keyId}, ${l.requestId}, ${sql.timestamp(l.now)}, ${sql.timestamp(l.now)}, ${sql.timestamp(expiresAt(deps.config, l.now))}, 'batch', ${l.batchId}, ${l.lookupIdx})`);
    return ref;
  } catch (err) {
    if (!(err instanceof UniqueIntegrityConstraintViolationError)) throw err;
    const existing = await findBatchVerification(deps.db, l.batchId, l.lookupIdx);
    if (!existing) throw err;
    return existing;
  }
}

/**
 * A fixture NIN of a batch: decided at once, free, with its zero ledger line (the wallet writes it),
 * as a single fixture call is. Null when the value is no fixture.
 */
export async function recordBatchFixture(deps: Deps, l: BatchLookupStart): Promise<{ referenceId: string; status: 'found' | 'not_found'; code: string | null } | null> {
  const fixture = 'nin' in l.query ? fixtureOutcome(l.query.nin) : 'vnin' in l.query ? fixtureVninOutcome(l.query.vnin) : null;
  if (!fixture) return null;
  const ref = newReferenceId();
  const ring = deps.config.encryptionKeys;
  const q = sealJson(ring, storedOf(deps.config, l.query), ref);
  const record = fixture.kind === 'found' ? sealJson(ring, fixture.record, ref).data : null;
  // A fixture vNIN's refusal (vnin_not_found, ...) is kept as a live one is, for requery and results.
  const code = fixture.kind === 'not_found' ? (fixture.refusal ?? null) : null;
  const details = { fixture: true, outcome: fixture.kind, mode: l.query.mode, reason: l.query.reason, batch_id: l.batchId };
  try {
    await recordFixtureCalls(deps.db, {
      records: sql.fragment`
        INSERT INTO verifications
          (reference_id, org_id, user_id, api_client_id, mode, reason, fixture, status, failure_code, holds_unit, consent, query_enc, record_enc, key_id, subject_hash, request_id, created_at, completed_at, expires_at, delivery, batch_id, batch_lookup)
        VALUES (${ref}, ${l.orgId}, ${l.userId}, ${l.apiClientId}, ${l.query.mode}, ${l.query.reason}, true, ${fixture.kind}, ${code}, false, ${consentValue(l.consent)},
                ${sql.binary(q.data)}, ${record ? sql.binary(record) : null}, ${q.keyId}, ${subjectValue(deps.config, l.query)}, ${l.requestId}, ${sql.timestamp(l.now)}, ${sql.timestamp(l.now)},
                ${sql.timestamp(expiresAt(deps.config, l.now))}, 'batch', ${l.batchId}, ${l.lookupIdx})
        RETURNING reference_id, org_id, ${sql.jsonb(details)} AS details`,
    });
  } catch (err) {
    if (!(err instanceof UniqueIntegrityConstraintViolationError)) throw err;
    const existing = await findBatchVerification(deps.db, l.batchId, l.lookupIdx);
    if (!existing) throw err;
    return { referenceId: existing, status: fixture.kind, code };
  }
  return { referenceId: ref, status: fixture.kind, code };
}

/**
 * Queues a batch lookup in the background lane (below every synchronous lookup, in turn with other
 * organisations' background lookups), waiting out authority outages like an asynchronous lookup
 * until ASYNC_MAX_WAIT_HOURS after it was queued. The job id makes a second add a no-op.
 */
export async function enqueueBatchLookup(
  deps: { producer: Producer; fairShare: FairShare },
  o: { referenceId: string; orgId: number; batchId: string; queuedAt: Date; sealedQuery?: { keyId: string; data: string }; vnin?: boolean },
): Promise<void> {
  // A vNIN's job holds its token: erased as the lookup starts, and the job leaves Redis when done.
  await enqueueBackgroundLookup(
    deps,
    {
      referenceId: o.referenceId,
      orgId: o.orgId,
      delivery: 'batch',
      acceptedAt: o.queuedAt.getTime(),
      batchId: o.batchId,
      ...(o.sealedQuery ? { query: o.sealedQuery } : {}),
      ...(o.vnin ? { useOnce: true as const } : {}),
    },
    { removeWhenDone: o.vnin === true },
  );
}

/**
 * Cancels a queued batch lookup whose job is not running at this moment (waiting its turn, or
 * waiting out an authority outage): the job is removed (a job a worker holds cannot be, and is left
 * to finish), then the verification ends failed `batch_cancelled` with its unit given back. True
 * when it was cancelled here.
 */
export async function cancelQueuedBatchLookup(deps: Deps & { producer: Producer; fairShare: FairShare }, o: { referenceId: string; orgId: number }): Promise<boolean> {
  const job = await deps.producer.queue(JOBS['verification.lookup'].queue).getJob(jobIds.lookup(o.referenceId));
  if (job) {
    try {
      await job.remove();
    } catch {
      return false;
    }
  }
  const decision = { kind: 'failed' as const, code: BATCH_CANCELLED, detail: 'batch cancelled before the lookup started' };
  const cancelled = (await settle(deps.db, deps.config.encryptionKeys, { referenceId: o.referenceId, keyId: null, decision, attempts: 0 })) !== null;
  // Its place in the background lane goes too (best effort: a lost one goes stale by itself).
  await deps.fairShare.background.finish({ orgId: o.orgId, referenceId: o.referenceId }).catch(() => undefined);
  return cancelled;
}

const outcomeRow = z.object({
  reference_id: z.string(),
  status: z.enum(['pending', 'found', 'not_found', 'failed', 'expired']),
  failure_code: z.string().nullable(),
  fixture: z.boolean(),
  record_enc: z.instanceof(Buffer).nullable(),
  key_id: z.string().nullable(),
  created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v)),
});

export type BatchOutcome = { status: 'pending' | 'found' | 'not_found' | 'failed' | 'expired'; failureCode: string | null; fixture: boolean; record: PersonRecord | null; queuedAt: Date };

/** Where the verifications of a batch stand; with `records`, found ones come with the person record. */
export async function batchOutcomes(deps: { db: CommonQueryMethods; ring: KeyRing }, refs: readonly string[], o: { records: boolean }): Promise<Map<string, BatchOutcome>> {
  const out = new Map<string, BatchOutcome>();
  if (refs.length === 0) return out;
  const recordCol = o.records ? sql.fragment`record_enc` : sql.fragment`NULL::bytea AS record_enc`;
  const rows = await deps.db.any(sql.type(outcomeRow)`
    SELECT reference_id, status, failure_code, fixture, ${recordCol}, key_id, created_at
    FROM verifications WHERE reference_id = ANY(${sql.array([...refs], 'text')})`);
  for (const r of rows) {
    const record = r.record_enc && r.key_id ? openJson<PersonRecord>(keyRing(deps.ring, r.key_id), { keyId: r.key_id, data: r.record_enc }, r.reference_id) : null;
    out.set(r.reference_id, { status: r.status, failureCode: r.failure_code, fixture: r.fixture, record, queuedAt: r.created_at });
  }
  return out;
}


/** Whom a batch row concerns when its query names a NIN (a phone's or vNIN's subject is learnt from the record). */
function subjectValue(config: Pick<Config, 'SUBJECT_HASH_KEY'>, query: BatchLookupStart['query']) {
  const h = query.mode === 'nin' ? subjectOfQuery(config.SUBJECT_HASH_KEY, query) : null;
  return h === null ? null : sql.binary(h);
}
