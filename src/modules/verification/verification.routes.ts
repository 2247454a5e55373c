import express, { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { callerGone, parseInput, requireContentType } from '../../lib/http.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { principalOf } from '../auth/index.ts';
import { parseIdempotencyKey } from './idempotency.ts';
import { consentSchema } from './consent.ts';
import { demographyBody, faceRequestBody, matchBody, ninBody, phoneBody, requeryBody, VNIN_INVALID, vninBody } from './verification.schemas.ts';
import { requeryOf, type Answer } from './answer.ts';
import { servedByRequery, verificationOf, verificationOfOrgQuery } from './verification.repository.ts';
import { registerPendingGauge } from './pending.ts';
import { printSlip } from './slip.ts';
import { startVerification, type VerificationAsk } from './entrance.ts';
import { FACE_CONSENT_REQUIRED, SELFIE_OR_LIVENESS } from './face-part.ts';
import { vninInstructions } from './vnin.ts';

/**
 * RFC 7240: `Prefer` holds comma-separated preferences, each a token with optional `=value` and
 * `;` parameters; tokens are case-insensitive. Only `respond-async` is honoured; others are ignored.
 */
export function prefersAsync(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((p) => p.split(';')[0]!.split('=')[0]!.trim().toLowerCase() === 'respond-async');
}

function send(res: Response, answer: Answer): void {
  // Answers carry personal data: no shared cache may keep them.
  res.setHeader('Cache-Control', 'no-store');
  if (answer.headers) for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
  res.status(answer.status).json(answer.body);
}

/**
 * A vNIN string that is not 16 letters and digits gets the contract's own sentence, whatever else is
 * wrong with it (a control character in it would otherwise be reported as such first).
 */
function vninFirst(body: unknown): unknown {
  const v = (body as { vnin?: unknown } | null)?.vnin;
  if (typeof v === 'string' && !/^[A-Za-z0-9]{16}$/.test(v)) throw new AppError('bad_request', VNIN_INVALID);
  return body;
}

export function verificationRoutes(ctx: AppContext): Router {
  const r = Router();
  const json = [requireContentType('json'), express.json({ limit: '16kb' })];
  // Authentication and rate limits come before the body is read, so anonymous or throttled
  // callers never get to exercise the parser and validation.
  const guard = [ctx.authenticate, ctx.rateLimit, ...json];
  // Every verification POST takes an optional consent statement; its dates follow the app's clock.
  const consent = { consent: consentSchema(ctx.clock).optional() };
  const nin = ninBody.extend(consent);
  const vnin = vninBody.extend(consent);
  const phone = phoneBody.extend(consent);
  const demography = demographyBody(ctx.clock).extend(consent);
  const match = matchBody(ctx.clock).extend(consent);
  registerPendingGauge(ctx.metrics, ctx.db);

  const verifyRoute = (parse: (body: unknown) => VerificationAsk) => async (req: Request, res: Response) => {
    const query = parse(req.body);
    const idempotencyKey = parseIdempotencyKey(req.get('idempotency-key'));
    const delivery = prefersAsync(req.get('prefer')) ? 'async' : 'sync';
    send(res, await startVerification(ctx, { delivery, query, idempotencyKey, asker: { kind: 'principal', principal: principalOf(req) }, requestId: req.id }));
  };

  r.post('/verify-nin', ...guard, verifyRoute((b) => ({ mode: 'nin', body: parseInput(nin, b) })));
  r.post('/verify-nin/vnin', ...guard, verifyRoute((b) => ({ mode: 'vnin', body: parseInput(vnin, vninFirst(b)) })));
  r.get('/verify-nin/vnin/instructions', ctx.authenticate, ctx.rateLimit, (_req, res) => {
    res.json(vninInstructions(ctx.config));
  });
  r.post('/verify-nin/phone', ...guard, verifyRoute((b) => ({ mode: 'phone', body: parseInput(phone, b) })));
  r.post('/verify-nin/demography', ...guard, verifyRoute((b) => ({ mode: 'demography', body: parseInput(demography, b) })));
  r.post('/verify-nin/match', ...guard, verifyRoute((b) => ({ mode: 'match', body: parseInput(match, vninFirst(b)) })));
  // A selfie or liveness frames make this body the one large JSON body of the API: up to 12 frames of
  // a liveness check (each 2 MiB at most decoded) are allowed 10 MiB together; larger is 413.
  const face = faceRequestBody.extend(consent);
  r.post('/verify-nin/face', ctx.authenticate, ctx.rateLimit, requireContentType('json'), express.json({ limit: '10mb' }), ctx.faceIntake, async (req, res) => {
    const body = parseInput(face, vninFirst(req.body));
    if ((body.selfie === undefined) === (body.liveness === undefined)) throw new AppError('bad_request', SELFIE_OR_LIVENESS);
    // A face is biometric data (NDPA): no face match without the person's consent.
    if (!body.consent) throw new AppError('bad_request', FACE_CONSENT_REQUIRED);
    const idempotencyKey = parseIdempotencyKey(req.get('idempotency-key'));
    const { selfie, liveness, ...asked } = body;
    send(
      res,
      await startVerification(ctx, {
        delivery: prefersAsync(req.get('prefer')) ? 'async' : 'sync',
        query: { mode: 'face', body: { ...asked, consent: body.consent } },
        face: liveness ? { kind: 'liveness', sessionId: liveness.session_id, frames: liveness.frames } : { kind: 'selfie', selfie: selfie! },
        idempotencyKey,
        asker: { kind: 'principal', principal: principalOf(req) },
        requestId: req.id,
        signal: callerGone(req),
      }),
    );
  });

  // The hottest read: the token is checked first, then (one Redis call) the deny-list and the rate
  // limits, then the principal is read in the row's own statement (alongReader, shared by the
  // requeries that arrive together) and refused exactly as on every other route, the counts given
  // back if it is. That statement also appends the requery's audit event when it serves the record,
  // so a read of personal data is on the trail before the record leaves without a statement of its
  // own; where it did not (its SQL admits a principal only where sure; a Redis Cluster, where the
  // counts come after the read), the event is appended here before answering: no event, no record.
  // Unlike the other routes, a signed token of a refused principal gets its (small) body parsed: the
  // reference is what the statement reads.
  const served = servedByRequery(ctx.config.encryptionKeys.map((k) => k.id));
  const readRequery = ctx.alongReader('requery', (ref, org) => verificationOfOrgQuery(ref, org), { served });
  r.post('/verify-nin/requery', ctx.authenticateClaims, ...json, async (req, res) => {
    const { reference_id } = parseInput(requeryBody, req.body);
    // True: counted and within the limits already (see AppContext); false: the usual order.
    const countedFirst = await ctx.countBeforeRead(req);
    const { row, recorded, at } = await readRequery(req, reference_id, { action: 'verification.requeried', target: reference_id });
    if (!countedFirst) await ctx.enforceRateLimit(req);
    // Answered as of the instant its statement judged it, when that statement was to record it.
    const answer = requeryOf(at ? { config: ctx.config, clock: { now: () => at } } : ctx, principalOf(req), reference_id, verificationOf(row));
    if (answer.status === 200 && !recorded) await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'verification.requeried', target: reference_id });
    send(res, answer);
  });

  r.get('/verify-nin/slip/:reference_id', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const { reference_id } = parseInput(requeryBody, { reference_id: req.params.reference_id });
    const pdf = await printSlip(ctx, principalOf(req), reference_id);
    await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'verification.slip_printed', target: reference_id });
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Disposition', `inline; filename="slip-${reference_id}.pdf"`);
    res.type('application/pdf').send(pdf);
  });
  return r;
}
