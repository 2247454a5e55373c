import express, { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { principalOf } from '../auth/index.ts';
import { parseIdempotencyKey } from './idempotency.ts';
import { demographyBody, ninBody, phoneBody, requeryBody } from './verification.schemas.ts';
import { requery, type Answer } from './answer.ts';
import { printSlip } from './slip.ts';
import { verify, type VerifyInput } from './verify.ts';

function send(res: Response, answer: Answer): void {
  // Answers carry personal data: no shared cache may keep them.
  res.setHeader('Cache-Control', 'no-store');
  if (answer.headers) for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
  res.status(answer.status).json(answer.body);
}

export function verificationRoutes(ctx: AppContext): Router {
  const r = Router();
  const json = [requireContentType('json'), express.json({ limit: '16kb' })];
  // Authentication and rate limits come before the body is read, so anonymous or throttled
  // callers never get to exercise the parser and validation.
  const guard = [ctx.authenticate, ctx.rateLimit, ...json];
  const demography = demographyBody(ctx.clock);

  const verifyRoute = (parse: (body: unknown) => VerifyInput) => async (req: Request, res: Response) => {
    const input = parse(req.body);
    const idempotencyKey = parseIdempotencyKey(req.get('idempotency-key'));
    send(res, await verify(ctx, { principal: principalOf(req), input, idempotencyKey, requestId: req.id }));
  };

  r.post('/verify-nin', ...guard, verifyRoute((b) => ({ mode: 'nin', body: parseInput(ninBody, b) })));
  r.post('/verify-nin/phone', ...guard, verifyRoute((b) => ({ mode: 'phone', body: parseInput(phoneBody, b) })));
  r.post('/verify-nin/demography', ...guard, verifyRoute((b) => ({ mode: 'demography', body: parseInput(demography, b) })));

  r.post('/verify-nin/requery', ...guard, async (req, res) => {
    const { reference_id } = parseInput(requeryBody, req.body);
    send(res, await requery(ctx, principalOf(req), reference_id));
  });

  r.get('/verify-nin/slip/:reference_id', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const { reference_id } = parseInput(requeryBody, { reference_id: req.params.reference_id });
    const pdf = await printSlip(ctx, principalOf(req), reference_id);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Disposition', `inline; filename="slip-${reference_id}.pdf"`);
    res.type('application/pdf').send(pdf);
  });
  return r;
}
