import type { z } from 'zod';
import { AppError, describe } from '../../lib/errors.ts';
import { requireOrgMember, type Principal } from '../auth/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { requireKnownReason } from '../reasons/index.ts';
import { answerOf, type Answer } from './answer.ts';
import { acceptedAnswer, runAsyncLive, runFixtureAsync } from './async-run.ts';
import { fixtureOutcome, fixtureVninOutcome } from './fixtures.ts';
import { runFixture } from './fixture-run.ts';
import * as idem from './idempotency.ts';
import { runLive } from './live-run.ts';
import type { VerifyDeps } from './run.ts';
import * as repo from './verification.repository.ts';
import { CONSENT_REQUIRED, type Consent } from './consent.ts';
import type { demographyBody, matchBody, ninBody, phoneBody, VerificationQuery, vninBody } from './verification.schemas.ts';
import { carriesVnin, normaliseVnin, rowByVnin, storedQueryOf } from './vnin.ts';

export type { VerifyDeps } from './run.ts';

export const SUBSCRIPTION_REQUIRED = 'An active subscription is required for live verifications (fixture NINs work without one)';

type WithConsent<T> = T & { consent?: Consent | undefined };

export type VerifyInput =
  | { mode: 'nin'; body: WithConsent<z.infer<typeof ninBody>> }
  | { mode: 'vnin'; body: WithConsent<z.infer<typeof vninBody>> }
  | { mode: 'phone'; body: WithConsent<z.infer<typeof phoneBody>> }
  | { mode: 'demography'; body: WithConsent<z.infer<ReturnType<typeof demographyBody>>> }
  | { mode: 'match'; body: WithConsent<z.infer<ReturnType<typeof matchBody>>> };

export const MATCH_NEEDS_ONE_IDENTIFIER = 'Send exactly one of nin or vnin';

function toQuery(input: VerifyInput): VerificationQuery {
  switch (input.mode) {
    case 'nin':
      return { mode: 'nin', nin: input.body.nin, reason: input.body.reason };
    case 'vnin':
      return { mode: 'vnin', vnin: normaliseVnin(input.body.vnin), reason: input.body.reason };
    case 'phone':
      return { mode: 'phone', phone: input.body.phone_no, reason: input.body.reason };
    case 'demography': {
      const b = input.body;
      return { mode: 'demography', firstName: b.first_name, lastName: b.last_name, dob: b.date_of_birth, gender: b.gender, reason: b.reason };
    }
    case 'match': {
      const b = input.body;
      if ((b.nin === undefined) === (b.vnin === undefined)) throw new AppError('bad_request', MATCH_NEEDS_ONE_IDENTIFIER);
      const claims = { reason: b.reason, fname: b.fname, lname: b.lname, dob: b.dob, gender: b.gender, phone: b.phone };
      return b.nin !== undefined ? { mode: 'match', nin: b.nin, ...claims } : { mode: 'match', vnin: normaliseVnin(b.vnin!), ...claims };
    }
  }
}

/** A match-only verification looks its identifier up like the NIN or vNIN call would. */
function fixtureOf(query: VerificationQuery) {
  if (query.mode === 'nin' || (query.mode === 'match' && 'nin' in query)) return fixtureOutcome(query.nin);
  if (query.mode === 'vnin' || (query.mode === 'match' && 'vnin' in query)) return fixtureVninOutcome(query.vnin);
  return null;
}

/**
 * POST /verify-nin, /verify-nin/vnin, /verify-nin/phone, /verify-nin/demography. Returns the answer to send; every
 * refusal is thrown as an AppError. Order matters: nothing is written before the reason and the
 * subscription are checked, and the Idempotency-Key is claimed before anything is written.
 */
export async function verify(
  deps: VerifyDeps,
  req: { principal: Principal; input: VerifyInput; idempotencyKey: string | null; requestId: string; respondAsync?: boolean; ref?: string },
): Promise<Answer> {
  const orgId = requireOrgMember(req.principal);
  const query = toQuery(req.input);
  const consent = req.input.body.consent ?? null;
  await requireKnownReason(deps, query.reason);
  const fixture = fixtureOf(query);
  if (!fixture && !req.principal.subscriptionActive) {
    deps.metrics.verifications.inc({ mode: query.mode, outcome: 'subscription_inactive' });
    throw new AppError('forbidden', SUBSCRIPTION_REQUIRED);
  }
  // Before anything is held or asked: an organisation that requires consent gets no live lookup without it.
  if (!fixture && consent === null && (await organisationSettings(deps.db, orgId)).require_consent) {
    deps.metrics.verifications.inc({ mode: query.mode, outcome: 'consent_missing' });
    throw new AppError('bad_request', CONSENT_REQUIRED);
  }

  let claim: idem.Claim | null = null;
  if (req.idempotencyKey !== null) {
    const c = await idem.claimKey(deps.db, deps.config.encryptionKeys, {
      orgId,
      key: req.idempotencyKey,
      endpoint: query.mode,
      // A vNIN is compared by its keyed hash: the token is not kept, not even hashed under another key.
      // Consent is part of what was asked: the same key with another consent is another request.
      body: consent ? { ...storedQueryOf(deps.config, query), consent } : storedQueryOf(deps.config, query),
      now: deps.clock.now(),
    });
    if (c.kind === 'replay') {
      deps.metrics.verifications.inc({ mode: query.mode, outcome: 'replayed' });
      return c.answer;
    }
    if (c.kind === 'linked') return resumeLinked(deps, c.claim, c.referenceId);
    claim = c.claim;
  }

  const maxInFlight = req.principal.maxInFlight ?? deps.config.ORG_MAX_IN_FLIGHT;
  const run = { orgId, userId: req.principal.userId, apiClientId: req.principal.apiClientId, query, consent, claim, requestId: req.requestId, maxInFlight, ...(req.ref ? { ref: req.ref } : {}) };
  try {
    // Asynchronous: the key is linked to the verification and its 202 is not kept, so a replay
    // reads the verification (202 while it waits, the final answer once it has ended).
    if (req.respondAsync) return fixture ? await runFixtureAsync(deps, run, fixture) : await runAsyncLive(deps, run);
    const answer = fixture ? await runFixture(deps, run, fixture) : await runLive(deps, run);
    if (claim) await idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, answer);
    return answer;
  } catch (err) {
    if (claim) await afterFailure(deps, claim, err, carriesVnin(query));
    throw err;
  }
}

export async function afterFailure(deps: VerifyDeps, claim: idem.Claim, err: unknown, byVnin: boolean): Promise<void> {
  try {
    // An unexpected fault (PostgreSQL or Redis gone mid-request): the verification may exist.
    if (!(err instanceof AppError)) return idem.releaseKey(deps.db, claim, { unlinkedOnly: true });
    // Lost the key to a concurrent request: the claim is that request's, leave it alone.
    if (err.code === 'conflict') return;
    if (idem.isFinal(err.status)) return idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, idem.answerOfError(err));
    // A vNIN whose lookup may have reached the authority is spent: a retry with the key replays the
    // 502 rather than look the token up again (503s mean the call never left and stay retryable).
    if (byVnin && err.code === 'upstream_failed') return idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, idem.answerOfError(err));
    // A 504 keeps its claim: the claim is linked to a verification that may still be charged,
    // and a retry with the same key must resolve to that verification, not start a second one.
    if (err.code === 'timeout') return;
    return idem.releaseKey(deps.db, claim);
  } catch (storeErr) {
    deps.logger.warn({ err: describe(storeErr) }, 'idempotency key not updated');
  }
}

/** A retry of a request whose verification was started but whose answer was never stored. */
export async function resumeLinked(deps: VerifyDeps, claim: idem.Claim, referenceId: string): Promise<Answer> {
  const row = await repo.findVerification(deps.db, referenceId, claim.orgId);
  const replayed = { 'Idempotent-Replayed': 'true' };
  if (row?.status === 'pending' && row.delivery !== 'sync') return acceptedAnswer(referenceId, replayed);
  if (!row || row.status === 'pending') throw new AppError('conflict', idem.IN_PROGRESS, { extra: { reference_id: referenceId } });
  let answer: Answer;
  try {
    answer = answerOf(deps, row, 'verify');
  } catch (err) {
    // A vNIN lookup that may have reached the authority is spent, as in afterFailure: its 502 is kept.
    const spent = err instanceof AppError && err.code === 'upstream_failed' && rowByVnin(deps.config.encryptionKeys, row);
    if (!(err instanceof AppError) || (!idem.isFinal(err.status) && !spent)) {
      await idem.releaseKey(deps.db, claim);
      throw err;
    }
    answer = idem.answerOfError(err);
  }
  await idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, answer);
  return { ...answer, headers: replayed };
}
