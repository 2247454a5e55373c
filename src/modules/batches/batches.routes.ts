import express, { Router, type RequestHandler } from 'express';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, parsePathParams } from '../../lib/http.ts';
import { principalOf } from '../auth/index.ts';
import { batchCsvQuery, batchJsonBody, batchListQuery, batchPathParams, batchResultsQuery, consentSchema, type Consent } from './batches.schemas.ts';
import { BATCH_NOT_FOUND, cancelBatch, createBatch, getBatch, listBatches } from './batches.service.ts';
import { MAX_BODY, MAX_ROWS, rowsFromCsv, rowsFromJson, TOO_MANY_ROWS } from './rows.ts';
import { resultsPage, sendResultsCsv } from './results.ts';

const jsonBody = express.json({ limit: MAX_BODY });
const csvBody = express.text({ type: 'text/csv', limit: MAX_BODY });

/** JSON or CSV, each with its own parser; any other media type is 415 before a byte is read. */
const batchBody: RequestHandler = (req, res, next) => {
  if (req.is('application/json')) return jsonBody(req, res, next);
  if (req.is('text/csv')) return csvBody(req, res, next);
  next(new AppError('unsupported_media_type', 'Content-Type must be application/json or text/csv'));
};

function csvConsent(q: { consent_obtained_at?: string | undefined; consent_channel?: string | undefined; consent_notice_version?: string | undefined }): Consent | null {
  if (q.consent_obtained_at === undefined && q.consent_channel === undefined && q.consent_notice_version === undefined) return null;
  return parseInput(consentSchema, { obtained_at: q.consent_obtained_at, channel: q.consent_channel, notice_version: q.consent_notice_version });
}

/** A malformed batch id names no batch: the same 404 as another organisation's. */
const batchId = (params: unknown): string => parsePathParams(batchPathParams, params, new AppError('not_found', BATCH_NOT_FOUND)).id;

export function batchRoutes(ctx: AppContext): Router {
  const r = Router();
  const guard = [ctx.authenticate, ctx.rateLimit];

  r.post('/verify-nin/batches', ...guard, batchBody, async (req, res) => {
    const principal = principalOf(req);
    let input: Parameters<typeof createBatch>[1];
    if (req.is('text/csv')) {
      const q = parseInput(batchCsvQuery, req.query);
      const text = typeof req.body === 'string' ? req.body : '';
      input = { principal, rows: rowsFromCsv(text), defaultReason: q.reason ?? null, consent: csvConsent(q), requestId: req.id };
    } else {
      const body = parseInput(batchJsonBody, req.body);
      if (body.rows.length > MAX_ROWS) throw new AppError('payload_too_large', TOO_MANY_ROWS);
      input = { principal, rows: rowsFromJson(body.rows), defaultReason: body.reason, consent: body.consent ?? null, requestId: req.id };
    }
    res.status(202).json(await createBatch(ctx, input));
  });

  r.get('/verify-nin/batches', ...guard, async (req, res) => {
    res.json(await listBatches(ctx, principalOf(req), parseInput(batchListQuery, req.query)));
  });

  r.get('/verify-nin/batches/:id', ...guard, async (req, res) => {
    res.json(await getBatch(ctx, principalOf(req), batchId(req.params)));
  });

  r.get('/verify-nin/batches/:id/results', ...guard, async (req, res) => {
    const principal = principalOf(req);
    const id = batchId(req.params);
    // CSV unless JSON is asked for by name (Accept: application/json).
    if (req.accepts(['text/csv', 'application/json']) === 'application/json' && req.get('accept')?.includes('application/json')) {
      res.setHeader('Cache-Control', 'no-store');
      res.json(await resultsPage(ctx, principal, id, parseInput(batchResultsQuery, req.query)));
      return;
    }
    await sendResultsCsv(ctx, principal, id, res);
  });

  r.post('/verify-nin/batches/:id/cancel', ...guard, async (req, res) => {
    res.json(await cancelBatch(ctx, principalOf(req), batchId(req.params)));
  });
  return r;
}
