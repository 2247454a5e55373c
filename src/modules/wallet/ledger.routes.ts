import { Router, type Request } from 'express';
import type { AppContext } from '../../context.ts';
import { sendCsv, wantsCsv } from '../../lib/csv-export.ts';
import { parseInput } from '../../lib/http.ts';
import { CSV_HEADER } from './ledger.csv.ts';
import { ledgerFilter, ledgerPage } from './ledger.ts';
import { ledgerFilters, ledgerPageQuery } from './ledger.schemas.ts';
import { streamLedgerCsvLines } from './ledger.repository.ts';
import { usagePerDay, usageQuery } from './usage.ts';

/**
 * GET /transactions. `accountsKeeper` is the caller's check (administrators and the finance role, roles.ts): the
 * wallet module sits below authentication in the import graph, so the app hands the check in.
 */
export function ledgerRoutes(ctx: AppContext, guard: { accountsKeeper(req: Request): number }): Router {
  const r = Router();
  r.get('/transactions', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const orgId = guard.accountsKeeper(req);
    if (!wantsCsv(req)) {
      res.json(await ledgerPage(ctx.db, orgId, parseInput(ledgerPageQuery, req.query)));
      return;
    }
    const filter = ledgerFilter(orgId, parseInput(ledgerFilters, req.query));
    const release = await ctx.csvExports.take(orgId);
    try {
      await sendCsv(
        { logger: ctx.logger, limits: ctx.csvExports.limits },
        res,
        { filename: `transactions-${orgId}.csv`, header: CSV_HEADER, stream: (onStream) => streamLedgerCsvLines(ctx.exportDb, filter, onStream) },
        { orgId, list: 'transactions' },
      );
    } finally {
      release();
    }
  });
  r.get('/usage/daily', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const orgId = guard.accountsKeeper(req);
    const { days } = parseInput(usageQuery, req.query);
    res.json(await usagePerDay(ctx.db, orgId, days, ctx.clock.now()));
  });
  return r;
}
