import { sealJson } from '../../lib/crypto.ts';
import { AppError, NIN_NOT_FOUND } from '../../lib/errors.ts';
import type { FixtureOutcome } from './fixtures.ts';
import { compareClaims } from './match.ts';
import * as idem from './idempotency.ts';
import { writeFixture, type FixtureRow } from './fixture-rows.ts';
import { expiresAt, newReferenceId, type Run, type VerifyDeps } from './run.ts';
import { reportCompleted } from './settle.ts';
import { subjectOfQuery } from './subject.ts';
import { acceptedAnswer, vninRefused, type Answer } from './answer.ts';
import type { FaceLookup } from './face-run.ts';
import { verdictOfVerification } from './verdict.ts';

/**
 * Reserved test-mode NINs and vNINs: no upstream call, no debit, a zero ledger line. Decided at once
 * however asked: waited for, its answer; asked asynchronously, 202 and the requery gives the outcome.
 * A face match's found fixture was compared before (face-run.ts): its row keeps that comparison.
 */
export async function runFixture(deps: VerifyDeps, run: Run, fixture: FixtureOutcome, delivery: 'sync' | 'async', face?: FaceLookup): Promise<Answer> {
  const { ref, kept } = await recordFixture(deps, run, fixture, delivery, face?.compared?.kept);
  if (face?.compared) await face.matched(face.compared.kept.face);
  if (delivery === 'async') return acceptedAnswer(ref);
  if (fixture.kind === 'not_found') throw fixture.refusal ? vninRefused(fixture.refusal) : new AppError('not_found', NIN_NOT_FOUND);
  if (face?.compared) return { status: 200, body: face.compared.body };
  const verdict = verdictOfVerification({ status: 'found', failure_code: null, mode: run.query.mode }, kept);
  return { status: 200, body: { data: { ...(run.query.mode === 'match' ? { reference_id: ref, ...kept } : { ...kept, reference_id: ref }) }, ...verdict } };
}

/** The fixture verification, decided on the spot, and its ledger line; resolves to its reference and what it keeps. */
async function recordFixture(
  deps: VerifyDeps,
  run: Run,
  fixture: FixtureOutcome,
  delivery: 'sync' | 'async',
  // A face match decides what it keeps (the comparison, the record unless match_only) before the row is written.
  faceKept?: object,
): Promise<{ ref: string; kept: object | null }> {
  const ref = run.ref ?? newReferenceId();
  const now = deps.clock.now();
  const ring = deps.config.encryptionKeys;
  const mode = run.query.mode;
  // A fixture vNIN is not kept either: its row holds the keyed hash, as a live one's does.
  const queryEnc = sealJson(ring, run.stored, ref);
  // A match-only verification keeps the comparison, never the record it was made against.
  const kept = fixture.kind !== 'found' ? null : faceKept ? faceKept : run.query.mode === 'match' ? compareClaims(run.query, fixture.record) : fixture.record;
  const recordEnc = kept ? sealJson(ring, kept, ref).data : null;
  const outcome = fixture.kind;
  const row: FixtureRow = {
    referenceId: ref,
    orgId: run.orgId,
    userId: run.userId,
    apiClientId: run.apiClientId,
    mode,
    reason: run.query.reason,
    status: outcome,
    failureCode: fixture.kind === 'not_found' ? (fixture.refusal ?? null) : null,
    queryEnc: queryEnc.data,
    recordEnc,
    consent: run.consent,
    subjectHash: subjectOfQuery(deps.config.SUBJECT_HASH_KEY, run.query),
    keyId: queryEnc.keyId,
    requestId: run.requestId,
    createdAt: now,
    expiresAt: expiresAt(deps.config, now),
    delivery,
  };
  // The row and its ledger line are one autocommit statement, shared with the fixture calls that
  // arrive beside it; an Idempotency-Key is bound to the same reference in the row's own transaction,
  // and so is an asynchronous one's `verification.completed` (it ends as it is written).
  const claim = run.claim;
  if (claim || delivery === 'async') {
    await deps.db.transaction(async (tx) => {
      await writeFixture(tx, row);
      if (claim) await idem.linkKey(tx, claim, ref);
      if (delivery === 'async') await reportCompleted(tx, { orgId: run.orgId, referenceId: ref, kind: mode, outcome, code: fixture.kind === 'not_found' ? fixture.refusal : undefined, kept });
    });
  } else {
    await writeFixture(deps.db, row);
  }
  deps.metrics.verifications.inc({ mode, outcome: `fixture_${outcome}` });
  return { ref, kept };
}
