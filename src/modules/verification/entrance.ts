import type { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { requireOrgMember, type Principal } from '../auth/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { requireKnownReason } from '../reasons/index.ts';
import type { Answer } from './answer.ts';
import { CONSENT_REQUIRED, type Consent } from './consent.ts';
import { faceFingerprint, faceToMatch, type FacePart } from './face-part.ts';
import { faceBeforeLookup } from './face-run.ts';
import type { LivenessFrameInput } from '../liveness/index.ts';
import { fixtureOf } from './fixtures.ts';
import { refuseSelfieWhenLivenessRequired } from './liveness-required.ts';
import * as idem from './idempotency.ts';
import type { VerifyDeps, Who } from './run.ts';
import { startLookup, type LookupAgain, type LookupStarted, type NewLookup, type StartDeps, type Started, type StartedAgain } from './start.ts';
import type { demographyBody, faceRequestBody, matchBody, ninBody, phoneBody, VerificationQuery, vninBody } from './verification.schemas.ts';
import { afterFailure, deliverLookup, resumeLinked, SUBSCRIPTION_REQUIRED } from './verify.ts';
import { carriesVnin, normaliseVnin, storedQueryOf } from './vnin.ts';

// The one way to start a verification: one typed request (what to look up, how it is delivered, an
// optional face, the Idempotency-Key, who asks) to one function. The routes, the batches' feeder and
// the links' page call it; the files behind it (face-run, verify, live-run, async-run, fixture-run, start)
// are its steps, never entered from elsewhere. See docs/architecture.md, "Adding a verification mode".

type WithConsent<T> = T & { consent?: Consent | undefined };

/** What to look up, as its route validated it (a mode's schema, verification.schemas.ts). */
export type VerificationAsk =
  | { mode: 'nin'; body: WithConsent<z.infer<typeof ninBody>> }
  | { mode: 'vnin'; body: WithConsent<z.infer<typeof vninBody>> }
  | { mode: 'phone'; body: WithConsent<z.infer<typeof phoneBody>> }
  | { mode: 'demography'; body: WithConsent<z.infer<ReturnType<typeof demographyBody>>> }
  | { mode: 'match'; body: WithConsent<z.infer<ReturnType<typeof matchBody>>> }
  // The face itself comes as the request's `face` part; a face is biometric data, so consent is required.
  | { mode: 'face'; body: Omit<z.infer<typeof faceRequestBody>, 'selfie'> & { consent: Consent } };

/** The face part (face-part.ts): a selfie, or a liveness session's frames. */
export type { FacePart, LivenessFrameInput };

/** The maker of a verification link, as its row names them: the verification is recorded as theirs. */
export type LinkMaker = { userId: number | null; apiClientId: number | null; clientId: string | null };

/**
 * Who asks. A signed-in principal (a user or an API client); or a verification link, an asker of its
 * own kind: a person on the link's page, for the link's organisation, recorded (rows, audit) as the
 * link's maker, with the organisation's subscription and in-flight cap as read with the link.
 */
export type Asker =
  | { kind: 'principal'; principal: Principal }
  | { kind: 'link'; orgId: number; maker: LinkMaker; subscriptionActive: boolean; maxInFlight: number | null };

/**
 * A verification asked by a principal (`sync`, or `async` for `Prefer: respond-async`) or on a link's
 * page (`link`: waited for like `sync`, under the reference `ref` the links module chose first, so that
 * whatever happens it finds its verification; `signal` aborts when the person's page went away).
 */
export type AskedVerification = {
  delivery: 'sync' | 'async' | 'link';
  query: VerificationAsk;
  face?: FacePart;
  idempotencyKey: string | null;
  asker: Asker;
  requestId: string;
  ref?: string;
  signal?: AbortSignal;
};

/**
 * A batch's row (`delivery: 'batch'`): its query was validated and normalised when the batch was
 * uploaded, and it is asked by the batch's maker as recorded; or a lookup started before, `again`.
 * No Idempotency-Key: a batch is made idempotent as a whole (batches module).
 */
export type BatchVerification = NewLookup | LookupAgain;

export type VerificationRequest = AskedVerification | BatchVerification;

function whoOf(asker: Asker): Who {
  if (asker.kind === 'link') return { orgId: asker.orgId, ...asker.maker, subscriptionActive: asker.subscriptionActive, maxInFlight: asker.maxInFlight };
  const p = asker.principal;
  return { orgId: requireOrgMember(p), userId: p.userId, apiClientId: p.apiClientId, clientId: p.clientId, subscriptionActive: p.subscriptionActive, maxInFlight: p.maxInFlight };
}

export const MATCH_NEEDS_ONE_IDENTIFIER = 'Send exactly one of nin or vnin';

/** The validated body as the query the authority is asked (and stored, a vNIN as its keyed hash). */
function queryOf(ask: VerificationAsk): VerificationQuery {
  switch (ask.mode) {
    case 'nin':
      return { mode: 'nin', nin: ask.body.nin, reason: ask.body.reason };
    case 'vnin':
      return { mode: 'vnin', vnin: normaliseVnin(ask.body.vnin), reason: ask.body.reason };
    case 'phone':
      return { mode: 'phone', phone: ask.body.phone_no, reason: ask.body.reason };
    case 'demography': {
      const b = ask.body;
      return { mode: 'demography', firstName: b.first_name, lastName: b.last_name, dob: b.date_of_birth, gender: b.gender, reason: b.reason };
    }
    case 'match': {
      const b = ask.body;
      if ((b.nin === undefined) === (b.vnin === undefined)) throw new AppError('bad_request', MATCH_NEEDS_ONE_IDENTIFIER);
      const claims = { reason: b.reason, fname: b.fname, lname: b.lname, dob: b.dob, gender: b.gender, phone: b.phone };
      return b.nin !== undefined ? { mode: 'match', nin: b.nin, ...claims } : { mode: 'match', vnin: normaliseVnin(b.vnin!), ...claims };
    }
    case 'face': {
      const b = ask.body;
      if ((b.nin === undefined) === (b.vnin === undefined)) throw new AppError('bad_request', MATCH_NEEDS_ONE_IDENTIFIER);
      const matchOnly = b.match_only;
      return b.nin !== undefined ? { mode: 'face', nin: b.nin, reason: b.reason, matchOnly } : { mode: 'face', vnin: normaliseVnin(b.vnin!), reason: b.reason, matchOnly };
    }
  }
}

/**
 * Starts a verification. Asked (`sync`, `async`, `link`): returns the answer to send, every refusal
 * thrown as an AppError. Order matters: the request's own checks (the identifier, the selfie's
 * encoding, the reason, the subscription, a required consent) before anything is written, then the
 * Idempotency-Key (claimed here and nowhere else), then the run. A batch's row: how it started
 * (start.ts, LookupStarted).
 */
export async function startVerification(deps: StartDeps, req: NewLookup): Promise<Started>;
export async function startVerification(deps: StartDeps, req: LookupAgain): Promise<StartedAgain>;
export async function startVerification(deps: VerifyDeps, req: AskedVerification): Promise<Answer>;
export async function startVerification(deps: VerifyDeps | StartDeps, req: VerificationRequest): Promise<Answer | LookupStarted> {
  if (req.delivery !== 'batch') return startAsked(deps as VerifyDeps, req);
  return 'again' in req ? startLookup(deps, req) : startLookup(deps, req);
}

async function startAsked(deps: VerifyDeps, req: AskedVerification): Promise<Answer> {
  const who = whoOf(req.asker);
  const query = queryOf(req.query);
  // What may be kept of the query (a vNIN as its keyed hash), made once beside the query itself: the
  // Idempotency-Key's body and a fixture's row take it from here.
  const stored = storedQueryOf(deps.config, query);
  if (query.mode === 'face' && req.face === undefined) throw new Error('a face verification needs its face part');
  // Told before anything is claimed, held or queued (its size, its encoding, its image format).
  const face = query.mode === 'face' && req.face ? faceToMatch(req.face) : null;
  // Fingerprinted as it is decoded, only when an Idempotency-Key will compare it.
  const fingerprint = face && req.idempotencyKey !== null ? faceFingerprint(face) : {};
  const consent = req.query.body.consent ?? null;
  await requireKnownReason(deps, query.reason);
  const fixture = fixtureOf(query);
  if (!fixture && !who.subscriptionActive) {
    deps.metrics.verifications.inc({ mode: query.mode, outcome: 'subscription_inactive' });
    throw new AppError('forbidden', SUBSCRIPTION_REQUIRED);
  }
  // An organisation that requires liveness takes no face match with a plain selfie (fixtures included).
  if (query.mode === 'face') await refuseSelfieWhenLivenessRequired(deps, who.orgId, req.face);
  // Before anything is held or asked: an organisation that requires consent gets no live lookup without it.
  if (!fixture && consent === null && (await organisationSettings(deps.db, who.orgId)).require_consent) {
    deps.metrics.verifications.inc({ mode: query.mode, outcome: 'consent_missing' });
    throw new AppError('bad_request', CONSENT_REQUIRED);
  }

  let claim: idem.Claim | null = null;
  if (req.idempotencyKey !== null) {
    const c = await idem.claimKey(deps.db, deps.config.encryptionKeys, {
      orgId: who.orgId,
      key: req.idempotencyKey,
      endpoint: query.mode,
      // A vNIN is compared by its keyed hash: the token is not kept, not even hashed under another key.
      // Consent is part of what was asked: the same key with another consent is another request; so is
      // a selfie, whose SHA-256 enters the request's keyed hash (all that is kept of the body).
      body: {
        ...stored,
        ...(consent ? { consent } : {}),
        ...fingerprint,
      },
      now: deps.clock.now(),
    });
    if (c.kind === 'replay') {
      deps.metrics.verifications.inc({ mode: query.mode, outcome: 'replayed' });
      return c.answer;
    }
    if (c.kind === 'linked') return resumeLinked(deps, c.claim, c.referenceId);
    claim = c.claim;
  }

  const respondAsync = req.delivery === 'async';
  const maxInFlight = who.maxInFlight ?? deps.config.ORG_MAX_IN_FLIGHT;
  const run = { orgId: who.orgId, userId: who.userId, apiClientId: who.apiClientId, query, stored, consent, claim, requestId: req.requestId, maxInFlight, ...(req.ref ? { ref: req.ref } : {}) };
  try {
    // A face match's own checks (its wallet, its selfie or liveness, a fixture's comparison) come before its lookup.
    const faceLookup = face ? await faceBeforeLookup(deps, who, { run, face, fixture, signal: req.signal }) : undefined;
    const answer = await deliverLookup(deps, run, fixture, respondAsync, faceLookup);
    // Asynchronous: the key is linked to the verification and its 202 is not kept, so a replay
    // reads the verification (202 while it waits, the final answer once it has ended).
    if (claim && !respondAsync) await idem.storeAnswer(deps.db, deps.config.encryptionKeys, claim, answer);
    return answer;
  } catch (err) {
    if (claim) await afterFailure(deps, claim, err, carriesVnin(query));
    throw err;
  }
}
