import { Router, type Request } from 'express';
import type { AppContext } from '../../context.ts';
import { wantsCsv } from '../../lib/csv-export.ts';
import { parseInput } from '../../lib/http.ts';
import { auditFilters, auditPageQuery } from './audit.schemas.ts';
import { auditPage, sendAuditCsv } from './events.ts';

/**
 * GET /audit-events. `accountsKeeper` is the caller's check (administrators and the finance role, roles.ts): the audit
 * module sits below authentication in the import graph (sign-ins are audited), so the app hands it in.
 */
export function auditRoutes(ctx: AppContext, guard: { accountsKeeper(req: Request): number }): Router {
  const r = Router();
  r.get('/audit-events', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const orgId = guard.accountsKeeper(req);
    if (!wantsCsv(req)) {
      res.json(await auditPage(ctx.db, orgId, parseInput(auditPageQuery, req.query)));
      return;
    }
    await sendAuditCsv(ctx.db, orgId, parseInput(auditFilters, req.query), res);
  });
  return r;
}
