import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { sendCsv, wantsCsv } from '../../lib/csv-export.ts';
import { parseInput } from '../../lib/http.ts';
import { principalOf } from '../auth/index.ts';
import { listVerifications, streamVerificationCsv, VERIFICATION_CSV_HEADER } from './history.ts';
import { verificationFilters, verificationListQuery } from './history.schemas.ts';

export function verificationHistoryRoutes(ctx: AppContext): Router {
  const r = Router();
  r.get('/verifications', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    if (!wantsCsv(req)) {
      res.json(await listVerifications(ctx.db, ctx.config.encryptionKeys, principalOf(req), parseInput(verificationListQuery, req.query)));
      return;
    }
    const csv = streamVerificationCsv(ctx.exportDb, principalOf(req), parseInput(verificationFilters, req.query));
    const release = await ctx.csvExports.take(csv.orgId);
    try {
      const file = { filename: `verifications-${csv.orgId}.csv`, header: VERIFICATION_CSV_HEADER, stream: csv.stream };
      await sendCsv({ logger: ctx.logger, limits: ctx.csvExports.limits }, res, file, { orgId: csv.orgId, list: 'verifications' });
    } finally {
      release();
    }
  });
  return r;
}
