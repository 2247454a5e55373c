import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { sendCsv, wantsCsv } from '../../lib/csv-export.ts';
import { negotiate, parseInput, parsePathParams } from '../../lib/http.ts';
import { principalOf } from '../auth/index.ts';
import { getTopup, listTopups, streamTopupCsv, TOPUP_CSV_HEADER } from './history.ts';
import { topupFilters, topupListQuery } from './history.schemas.ts';
import { invoicePdf } from './invoice.ts';
import { topupPathParams } from './topup.schemas.ts';

export function topupHistoryRoutes(ctx: AppContext): Router {
  const r = Router();
  r.get('/topups', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    if (!wantsCsv(req)) {
      res.json(await listTopups(ctx.db, principalOf(req), parseInput(topupListQuery, req.query)));
      return;
    }
    const csv = streamTopupCsv(ctx.exportDb, principalOf(req), parseInput(topupFilters, req.query));
    const release = await ctx.csvExports.take(csv.orgId);
    try {
      const file = { filename: `topups-${csv.orgId}.csv`, header: TOPUP_CSV_HEADER, stream: csv.stream };
      await sendCsv({ logger: ctx.logger, limits: ctx.csvExports.limits }, res, file, { orgId: csv.orgId, list: 'topups' });
    } finally {
      release();
    }
  });
  r.get('/topups/:reference', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const { reference } = parsePathParams(topupPathParams, req.params);
    // JSON only (its list, GET /topups, also speaks CSV; one top-up does not): anything else is 406, as the invoice.
    negotiate(req, ['application/json']);
    res.json(await getTopup(ctx.db, principalOf(req), reference));
  });
  r.get('/topups/:reference/invoice', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const { reference } = parsePathParams(topupPathParams, req.params);
    // A PDF only: its data is GET /topups/{reference}'s (invoice_number), so JSON or CSV is 406, as for a statement.
    negotiate(req, ['application/pdf']);
    const { number, pdf } = await invoicePdf(ctx, principalOf(req), reference);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Disposition', `attachment; filename="${number}.pdf"`);
    res.type('application/pdf').send(pdf);
  });
  return r;
}
