import { Router, type Request } from 'express';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput } from '../../lib/http.ts';
import { sendLedgerCsv, ledgerPage } from './ledger.ts';
import { ledgerFilters, ledgerPageQuery } from './ledger.schemas.ts';

// Each export holds a connection of the export pool (4, see src/runtime.ts) for as long as its
// client reads: one more export is refused at once rather than left waiting for a connection.
const MAX_EXPORTS_IN_FLIGHT = 4;
// A client that stops reading holds that connection: after this long without progress it is cut.
const EXPORT_STALL_MS = 60_000;

/**
 * GET /transactions. `orgAdmin` is the caller's check (organisation administrators only): the
 * wallet module sits below authentication in the import graph, so the app hands the check in.
 */
export function ledgerRoutes(ctx: AppContext, guard: { orgAdmin(req: Request): number }): Router {
  const r = Router();
  let exportsInFlight = 0;

  r.get('/transactions', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const orgId = guard.orgAdmin(req);
    if (req.accepts(['application/json', 'text/csv']) !== 'text/csv') {
      res.json(await ledgerPage(ctx.db, orgId, parseInput(ledgerPageQuery, req.query)));
      return;
    }
    const filters = parseInput(ledgerFilters, req.query);
    if (exportsInFlight >= MAX_EXPORTS_IN_FLIGHT) {
      throw new AppError('rate_limited', 'Too many CSV exports in progress; retry shortly', { headers: { 'Retry-After': '5' } });
    }
    exportsInFlight++;
    res.setTimeout(EXPORT_STALL_MS, () => res.destroy());
    try {
      await sendLedgerCsv(ctx, orgId, filters, res);
    } finally {
      exportsInFlight--;
    }
  });
  return r;
}
