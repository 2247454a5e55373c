import type { Request } from 'express';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { z } from 'zod';
import type { AppContext } from '../../../context.ts';
import { addressBucket } from '../../../lib/address-bucket.ts';
import { AppError } from '../../../lib/errors.ts';
import { callerGone, parseInput } from '../../../lib/http.ts';
import { consumeAll } from '../../../lib/rate-limit.ts';
import { clientAddress } from '../../auth/index.ts';
import { createSession } from '../../liveness/index.ts';
import { issueReceipt } from '../../receipts/index.ts';
import { newReferenceId } from '../../verification/index.ts';
import { verifyForLink, type LinkOutcome } from '../link-run.ts';
import * as repo from '../links.repository.ts';
import { goneReason, type GoneReason } from '../links.service.ts';
import { settleSubmission, type PendingSubmission, type SubmissionEnd } from '../submissions.ts';
import { turnAway } from '../turned-away.ts';
import { checkCsrf, fromThisOrigin, type CsrfKeys } from './csrf.ts';
import { consentText, fill, MESSAGES, NOTICE_VERSION, ussdOf } from './render.ts';

/** Where the page goes back to with an answer: the step the person can act on. */
export type Step = 'consent' | 'vnin' | 'selfie' | 'send' | 'result';

export type LinkOrganisation = { name: string; subscriptionActive: boolean; maxInFlight: number | null; supportContact: string | null };

export type SubmitDeps = {
  ctx: AppContext;
  csrf: CsrfKeys;
  /** Per link, and per address (its keyed hash: no address in a Redis key name). */
  limits: { perLink: RateLimiterRedis; perAddress: RateLimiterRedis; addressKey: (address: string) => string };
  /** The liveness sessions the page asks for, counted as the submissions are, in counters of their own. */
  sessionLimits: { perLink: RateLimiterRedis; perAddress: RateLimiterRedis };
};

/** The CSRF token and the origin, as every POST of the page checks them. */
function checkForm(d: SubmitDeps, req: Request, link: repo.LinkRow, now: Date): void {
  if (!fromThisOrigin(req) || !checkCsrf(d.csrf, link.id, (req.body as { csrf?: unknown } | undefined)?.csrf, now)) {
    throw refusal('forbidden', MESSAGES.errors.reload, 'csrf', 'send');
  }
}

/** Both limits, from this request's address; beyond, the 429 in the person's words. */
async function withinLimits(limits: { perLink: RateLimiterRedis; perAddress: RateLimiterRedis }, addressKey: (a: string) => string, req: Request, linkId: string, words: (text: string, vars?: Record<string, string | number>) => string): Promise<void> {
  try {
    await consumeAll([
      [limits.perLink, linkId],
      // An IPv6 /64 counts as one address: one subscriber holds a whole /64.
      [limits.perAddress, addressKey(addressBucket(clientAddress(req)))],
    ]);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'rate_limited') throw err;
    throw tooMany(err, words);
  }
}

/** What the page needs of a liveness session: its id, the poses in its order, and when it ends. */
export type PageSession = { session_id: string; challenges: string[]; expires_at: string };

/**
 * POST /v/<token>/liveness-session: a liveness session for the link's organisation (free, counted
 * against its LIVENESS_OPEN_SESSIONS_PER_ORG), for a link that asks for liveness. Checked as the
 * submission is (CSRF token, origin, limits per link and per address); each try of the check takes one.
 */
export async function livenessSessionOnPage(d: SubmitDeps, req: Request, link: repo.LinkRow, org: LinkOrganisation): Promise<PageSession> {
  const { ctx } = d;
  const now = ctx.clock.now();
  const words = (text: string, vars: Record<string, string | number> = {}) => fill(text, { org: org.name, ussd: ussdOf(ctx.config.nimcEnterpriseCode), ...vars });
  checkForm(d, req, link, now);
  if (!link.liveness) throw refusal('bad_request', MESSAGES.errors.reload, 'liveness_not_asked', 'send');
  await withinLimits(d.sessionLimits, d.limits.addressKey, req, link.id, words);
  try {
    const s = await createSession(ctx, link.org_id);
    return { session_id: s.id, challenges: s.challenges, expires_at: s.expires_at };
  } catch (err) {
    // The organisation's open sessions are all taken: to the person, a wait like any other limit.
    if (err instanceof AppError && err.code === 'rate_limited') throw tooMany(err, words);
    throw err;
  }
}

const body = z.object({
  csrf: z.string().max(200),
  consent: z.boolean(),
  vnin: z.string().max(64),
  // A data: URL of the selfie; the face match's own limit (2 MiB decoded) is checked as the API checks it.
  selfie: z.string().optional(),
  // A link with liveness: the session the page asked for (POST /v/<token>/liveness-session) and the
  // frames it took; judged as `POST /verify-nin/face` judges them (their own rules are checked there).
  liveness: z
    .object({
      session_id: z.string().max(100),
      frames: z.array(z.object({ step: z.enum(['front', 'turn_left', 'turn_right', 'look_up']), image: z.string(), captured_at_ms: z.number() })).max(12),
    })
    .optional(),
});

const VNIN = /^[A-Z0-9]{16}$/;
const LIVENESS_SESSION_REFUSALS = new Set(['liveness_session_expired', 'liveness_session_used', 'liveness_session_not_found']);
const VNIN_REFUSALS = new Set(['vnin_used', 'vnin_expired', 'vnin_not_found', 'vnin_wrong_enterprise']);
/**
 * A face worker not answering in time or failing: at the selfie's check (503) or at the comparison (the
 * verification failed); or the organisation's face matches all taken (429 `face_in_flight_cap`,
 * nothing charged): to the person the same comparison that cannot be made just now, not a limit on
 * their own tries.
 */
const FACE_FAULTS = new Set(['face_timeout', 'face_failed', 'face_unavailable', 'face_in_flight_cap']);

/** An answer for the page: the person's own words, what it is (`code`), and the step to go back to. */
function refusal(status: AppError['code'], words: string, code: string, step: Step, headers?: Record<string, string>): AppError {
  return new AppError(status, words, { extra: { code, step }, ...(headers ? { headers } : {}) });
}

/**
 * The 410 of a link that takes no more submissions, in the person's words. A link whose maker may no
 * longer make links answers as a revoked one, to the letter: for the person it was withdrawn.
 */
export function goneError(why: GoneReason): AppError {
  const said = why === 'suspended' ? 'revoked' : why;
  return refusal('gone', MESSAGES.gone[said], said, 'result');
}

/**
 * A person's submission on a link's page (POST /v/<token>/submit): the CSRF token and origin, the
 * limits, one use of the link taken with the submission recorded `pending` under a reference chosen
 * here, then the verification exactly as the API would run it, under that reference. The
 * submission's settlement records what came of it (submissions.ts): its end, the use kept (the
 * verification found the person, so it was charged) or given back, and the webhook event. Should this
 * process stop on the way, the links sweep settles it from the verification. Answers the words for
 * the person (a result page, or a refusal with the step to go back to); never the record.
 */
export async function submitOnPage(d: SubmitDeps, req: Request, link: repo.LinkRow, org: LinkOrganisation): Promise<PageResult> {
  const { ctx } = d;
  const now = ctx.clock.now();
  const words = (text: string, vars: Record<string, string | number> = {}) => fill(text, { org: org.name, ussd: ussdOf(ctx.config.nimcEnterpriseCode), ...vars });
  checkForm(d, req, link, now);
  const b = parseInput(body, req.body);
  if (b.consent !== true) throw refusal('bad_request', MESSAGES.errors.consent, 'consent_missing', 'consent');
  const vnin = b.vnin.replace(/\s+/g, '').toUpperCase();
  if (!VNIN.test(vnin)) throw refusal('bad_request', MESSAGES.errors.vnin_format, 'vnin_format', 'vnin');
  if (link.liveness && !b.liveness) throw refusal('bad_request', MESSAGES.liveness.needed, 'liveness_missing', 'selfie');
  if (link.require_face && !link.liveness && !b.selfie) throw refusal('bad_request', MESSAGES.selfie.needed, 'selfie_missing', 'selfie');
  const face = !link.require_face ? 'none' : link.liveness ? 'liveness' : 'selfie';

  const address = clientAddress(req);
  await withinLimits(d.limits, d.limits.addressKey, req, link.id, words);

  const submission: PendingSubmission = { linkId: link.id, orgId: link.org_id, clientRef: link.client_ref, referenceId: newReferenceId() };
  if (!(await repo.takeUse(ctx.db, { linkId: link.id, referenceId: submission.referenceId, at: now }))) {
    // Revoked, expired, used up or its maker disabled since the page was read; or every use is held by submissions in flight.
    const current = await repo.findLink(ctx.db, link.org_id, link.id, now);
    throw goneError((current && goneReason(current, now)) ?? 'used_up');
  }

  let outcome: LinkOutcome;
  try {
    outcome = await verifyForLink(ctx, {
      orgId: link.org_id,
      maker: { userId: link.created_by_user, apiClientId: link.created_by_client, clientId: link.created_by_client_id },
      subscriptionActive: org.subscriptionActive,
      maxInFlight: org.maxInFlight,
      reason: link.reason,
      vnin,
      selfie: face === 'selfie' ? b.selfie! : null,
      livenessRequired: face === 'liveness',
      ...(face === 'liveness' ? { liveness: { sessionId: b.liveness!.session_id, frames: b.liveness!.frames } } : {}),
      consent: {
        obtained_at: now.toISOString(),
        channel: 'web',
        notice_version: NOTICE_VERSION,
        given_by: 'person',
        address,
        // As the browser names itself, without control characters (it is stored as text), and bounded.
        user_agent: (req.get('user-agent') ?? '').replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 300),
        text: consentText(org.name, link.purpose, link.require_face),
      },
      requestId: req.id,
      ref: submission.referenceId,
      signal: callerGone(req),
    });
  } catch (err) {
    // An unexpected fault (PostgreSQL or Redis gone): a verification may have been recorded, so the
    // submission stays pending for the sweep to settle from whatever was.
    if (!(err instanceof AppError)) throw err;
    // The organisation could not take it (its wallet could not pay; it may not verify): kept on the
    // link as refused, with its event and the e-mail to the organisation (turned-away.ts).
    if (err.code === 'insufficient_units' || err.code === 'forbidden') {
      await turnAway(ctx, submission, err.code === 'insufficient_units' ? 'insufficient_units' : 'organisation_cannot_verify');
      throw forThePerson(err, words, face);
    }
    // Refused before anything was recorded or charged (the selfie, the limits): the submission goes
    // and its use comes back.
    await settleOnPage(d, submission, { kind: 'refused' });
    throw forThePerson(err, words, face);
  }

  // Still pending when the page stopped waiting: the submission keeps its use (the verification may
  // yet be charged) and stays pending; the sweep settles it once the verification ends.
  if (outcome.status !== 'pending') await settleOnPage(d, submission, { kind: 'ended', status: outcome.status, code: outcome.code, ...(link.require_face ? { face: outcome.face } : {}) });
  // Every outcome here recorded a verification with the person's consent (verifyForLink rethrows when
  // none was): found, not found, failed or not decided yet, the person gets the receipt of their
  // consent (/r/<token>), kept as long as the verification (docs/receipts.md). A submission turned
  // away or refused before anything was recorded (above) has no verification, so no receipt.
  const receipt = await issueReceipt(ctx.db, { referenceId: outcome.referenceId, purpose: link.purpose, at: now });
  // Found (verified or not) or not decided yet: the result page says which, and what comes next.
  if (outcome.status === 'pending' || outcome.status === 'found') return { ...resultOf(outcome, words), receipt };
  // Not found or failed: the step to act on, with the reference to quote and the receipt.
  throw withReceipt(forThePerson(outcome.error ?? new AppError('upstream_failed', 'verification failed'), words, face), {
    reference_id: outcome.referenceId,
    reference: words(MESSAGES.result.reference, { ref: outcome.referenceId }),
    receipt,
  });
}

/** The person's answer when a verification was recorded: the same refusal, naming its reference and receipt. */
function withReceipt(err: AppError, kept: { reference_id: string; reference: string; receipt: string }): AppError {
  return new AppError(err.code, err.detail, { extra: { ...err.extra, ...kept }, ...(err.headers ? { headers: err.headers } : {}) });
}

/**
 * What the result page says (200): the verdict (verdict.ts, as the organisation's webhook carries
 * it), a heading, what happened, what the person can do or what happens next, and the reference to
 * quote. Never the record.
 */
export type PageResult = { verdict: 'verified' | 'not_verified' | null; heading: string; detail: string; next: string; reference_id: string; reference: string; receipt?: string };

function resultOf(o: LinkOutcome, words: (text: string, vars?: Record<string, string | number>) => string): PageResult {
  const r = MESSAGES.result;
  const { verdict, verdict_reasons: reasons } = o.verdict;
  const said = (heading: string, detail: string, next: string): PageResult => ({
    verdict,
    heading,
    detail: words(detail, { face_done: o.face?.match === true ? r.face_done : '' }),
    next: words(next),
    reference_id: o.referenceId,
    reference: words(r.reference, { ref: o.referenceId }),
  });
  if (verdict === null) return said(r.pending_heading, r.pending, r.pending_next);
  if (verdict === 'verified') return said(r.verified_heading, r.verified, r.verified_next);
  // Not verified: the first reason the person can understand decides the words.
  if (reasons.includes('no_reference_photo')) return said(r.not_verified_heading, r.no_reference_photo, r.no_photo_next);
  if (reasons.includes('face_no_match')) return said(r.not_verified_heading, r.face_no_match, r.retry_next);
  return said(r.not_verified_heading, r.not_verified, r.ask_next);
}

/** The page's settlement; the sweep got there first only if this request outlived its grace period. */
async function settleOnPage(d: SubmitDeps, s: PendingSubmission, end: SubmissionEnd): Promise<void> {
  if (!(await settleSubmission(d.ctx.db, s, end))) d.ctx.logger.warn({ referenceId: s.referenceId, linkId: s.linkId }, 'link submission already settled by the sweep');
}

/** A limit's 429 as the person reads it: how long to wait, in whole minutes from its Retry-After ("a minute" for one). */
export function tooMany(err: AppError, words: (text: string, vars?: Record<string, string | number>) => string): AppError {
  const seconds = Number(err.headers?.['Retry-After'] ?? '60');
  const minutes = Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds / 60)) : 1;
  const text = minutes === 1 ? MESSAGES.errors.too_many_one : words(MESSAGES.errors.too_many, { minutes });
  return refusal('rate_limited', text, 'rate_limited', 'send', err.headers);
}

/** What the API would have answered, as the page says it: the person's words and the step to act on. */
function forThePerson(err: AppError, words: (text: string, vars?: Record<string, string | number>) => string, face: 'none' | 'selfie' | 'liveness'): AppError {
  const code = typeof err.extra?.code === 'string' ? err.extra.code : null;
  const e = MESSAGES.errors;
  const l = MESSAGES.liveness;
  // The frames did not pass (nothing looked up, nothing charged): the page offers the check again,
  // with a new session, at most twice more (link.browser.js counts).
  if (code === 'liveness_failed') return refusal('validation', l.failed, code, 'selfie');
  // The session ran out, or was judged already: the check again, with a new one.
  if (code !== null && LIVENESS_SESSION_REFUSALS.has(code)) return refusal(err.code, l.expired, code, 'selfie');
  if (face === 'liveness' && (err.code === 'bad_request' || err.code === 'payload_too_large')) return refusal(err.code, l.unreadable, 'liveness_unreadable', 'selfie');
  if (code !== null && code.startsWith('selfie_') && code in e) return refusal('validation', e[code as keyof typeof e], code, 'selfie');
  if (code !== null && VNIN_REFUSALS.has(code)) return refusal('not_found', words(e[code as keyof typeof e]), code, 'vnin');
  // The face worker did not answer in time or failed (before the lookup, or after it): NIMC was
  // reached, or not needed yet; what failed is the comparison.
  if (code !== null && FACE_FAULTS.has(code)) return refusal(err.code, words(e.face_unavailable), code, 'send', err.headers);
  // The organisation requires liveness but this link takes a plain selfie: nothing the person can
  // change; the organisation must offer a link with liveness.
  if (code === 'liveness_required') return refusal('validation', words(e.liveness_required), code, 'result');
  switch (err.code) {
    case 'not_found':
      return refusal('not_found', words(e.not_found), 'not_found', 'vnin');
    case 'insufficient_units':
    case 'forbidden':
      return refusal(err.code, words(e.org_unavailable), 'org_unavailable', 'result');
    case 'rate_limited':
      return tooMany(err, words);
    // The selfie as sent could not be taken (not base64, over 2 MiB): the page takes another.
    case 'bad_request':
    case 'payload_too_large':
      if (face === 'selfie') return refusal(err.code, e.selfie_unreadable, 'selfie_unreadable', 'selfie');
      return refusal(err.code, words(e.try_later), 'try_later', 'send');
    default:
      return refusal(err.code, words(e.try_later), code ?? 'try_later', 'send', err.headers);
  }
}
