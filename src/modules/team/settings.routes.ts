import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { allowFirst, principalOf, requireOrgMember, requirePersonOrgAdmin } from '../auth/index.ts';
import { organisationSettings, settingsPatch, updateOrganisationSettings } from '../organisations/index.ts';

/**
 * GET /me/organisation (every member: the rules they work under) and PATCH /me/organisation
 * (administrators who are persons: an API key cannot switch a safeguard such as required consent off).
 */
export function settingsRoutes(ctx: AppContext): Router {
  const r = Router();
  const guard = [ctx.authenticate, ctx.rateLimit];

  r.get('/me/organisation', ...guard, async (req, res) => {
    const orgId = requireOrgMember(principalOf(req));
    res.json(await organisationSettings(ctx.db, orgId));
  });

  r.patch('/me/organisation', ...guard, allowFirst(requirePersonOrgAdmin), requireContentType('json'), express.json({ limit: '4kb' }), async (req, res) => {
    const p = principalOf(req);
    const orgId = requirePersonOrgAdmin(p);
    const patch = parseInput(settingsPatch, req.body);
    const saved = await ctx.db.transaction(async (tx) => {
      const s = await updateOrganisationSettings(tx, orgId, patch);
      // The new values, except the address, TIN, alert addresses and support contact: a sole trader's
      // address and a person's e-mail or phone are personal data, and the trail cannot be erased. Their
      // names are in `changed`.
      const { address: _address, tin: _tin, alert_emails: _alertEmails, support_contact: _supportContact, ...values } = patch;
      await recordAudit(tx, { ...auditContext(p), action: 'organisation.settings_changed', target: `org:${orgId}`, details: { changed: Object.keys(patch), ...values } });
      return s;
    });
    res.json(saved);
  });
  return r;
}
