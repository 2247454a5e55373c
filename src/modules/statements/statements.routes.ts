import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { monthPathParams } from '../../lib/lagos-month.ts';
import { negotiate, parsePathParams } from '../../lib/http.ts';
import { principalOf } from '../auth/index.ts';
import { statementCsv, statementPdf } from './statement-files.ts';
import { monthlyStatement } from './statement.ts';

const TYPES = ['application/json', 'text/csv', 'application/pdf'] as const;

/** GET /statements/{yyyy-mm}: JSON, CSV or PDF, as the Accept header asks. */
export function statementRoutes(ctx: AppContext): Router {
  const r = Router();
  r.get('/statements/:month', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const { month } = parsePathParams(monthPathParams, req.params);
    const chosen = negotiate(req, TYPES);
    const s = await monthlyStatement(ctx, principalOf(req), month);
    res.setHeader('Cache-Control', 'no-store');
    if (chosen === 'application/json') {
      res.json(s);
      return;
    }
    res.setHeader('Content-Disposition', `attachment; filename="statement-${s.month}.${chosen === 'text/csv' ? 'csv' : 'pdf'}"`);
    if (chosen === 'text/csv') res.type('text/csv; charset=utf-8').send(statementCsv(s));
    else res.type('application/pdf').send(await statementPdf(s));
  });
  return r;
}
