import { randomBytes } from 'node:crypto';
import express, { Router, type RequestHandler, type Response } from 'express';
import type { AppContext } from '../../../context.ts';
import { keyNamer } from '../../../lib/key-names.ts';
import { requireContentType } from '../../../lib/http.ts';
import { createLimiter } from '../../../lib/rate-limit.ts';
import { getOrganisation, organisationSettings } from '../../organisations/index.ts';
import { listReasons } from '../../reasons/index.ts';
import * as repo from '../links.repository.ts';
import { TOKEN_RE } from '../links.schemas.ts';
import { goneReason, tokenHash } from '../links.service.ts';
import { pageAssets, sendCompressed } from './assets.ts';
import { csrfKeys, issueCsrf } from './csrf.ts';
import { MESSAGES, renderGone, renderPage } from './render.ts';
import { goneError, livenessSessionOnPage, submitOnPage, type LinkOrganisation } from './submit.ts';

/**
 * Every answer of the page: not to be indexed, cached, framed or sent on as a referrer (the URL is
 * the link's secret); the camera for this origin only. Its own Content-Security-Policy replaces
 * helmet's: nothing but this origin's stylesheet and the one script carrying this response's nonce,
 * no inline code, no other origin to connect to, forms that post only here.
 */
const pageHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Robots-Tag', 'noindex, nofollow');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Permissions-Policy', 'camera=(self), microphone=(), geolocation=(), payment=(), usb=()');
  next();
};

function csp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    // The selfie's preview is a data: URL drawn from the camera or the chosen file.
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The person's page: GET /v/<token> (the steps), POST /v/<token>/submit (the verification), and its
 * two assets. Served by the API process, outside the versioned API; no session, no cookie.
 */
export function linkPageRoutes(ctx: AppContext): Router {
  const r = Router();
  const assets = pageAssets();
  const submitDeps = {
    ctx,
    csrf: csrfKeys(ctx.config.jwtSecrets),
    limits: {
      perLink: createLimiter(ctx.redis, { prefix: `${ctx.config.REDIS_PREFIX}:rl:link`, points: ctx.config.LINK_SUBMISSIONS_PER_LINK, durationSeconds: ctx.config.LINK_RATE_WINDOW_SECONDS }),
      perAddress: createLimiter(ctx.redis, { prefix: `${ctx.config.REDIS_PREFIX}:rl:link-address`, points: ctx.config.LINK_SUBMISSIONS_PER_ADDRESS, durationSeconds: ctx.config.LINK_RATE_WINDOW_SECONDS }),
      addressKey: keyNamer(ctx.config.JWT_SECRET),
    },
    sessionLimits: {
      perLink: createLimiter(ctx.redis, { prefix: `${ctx.config.REDIS_PREFIX}:rl:link-liveness`, points: ctx.config.LINK_SUBMISSIONS_PER_LINK, durationSeconds: ctx.config.LINK_RATE_WINDOW_SECONDS }),
      perAddress: createLimiter(ctx.redis, { prefix: `${ctx.config.REDIS_PREFIX}:rl:link-liveness-address`, points: ctx.config.LINK_SUBMISSIONS_PER_ADDRESS, durationSeconds: ctx.config.LINK_RATE_WINDOW_SECONDS }),
    },
  };
  const names = { css: assets.css.name, js: assets.js.name };

  r.use('/v', pageHeaders);

  r.get('/v/assets/:file', (req, res, next) => {
    const a = assets.byName.get(req.params.file);
    if (!a) return next();
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    sendCompressed(req, res, a.type, a);
  });

  /** The link behind a token as it stands at `now`, with its organisation; null when none (or its organisation is gone). */
  async function linkOf(token: string, now: Date): Promise<{ link: repo.LinkRow; org: LinkOrganisation } | null> {
    if (!TOKEN_RE.test(token)) return null;
    const link = await repo.findLinkByToken(ctx.db, tokenHash(token), now);
    if (!link) return null;
    const org = await getOrganisation(ctx.db, link.org_id);
    if (!org || org.deleted_at) return null;
    const { support_contact: supportContact } = await organisationSettings(ctx.db, link.org_id);
    return { link, org: { name: org.name, subscriptionActive: org.subscription_active, maxInFlight: org.max_in_flight, supportContact } };
  }

  const html = (res: Response, status: number, body: string, nonce: string, req: express.Request) => {
    res.setHeader('Content-Security-Policy', csp(nonce));
    // The page carries a CSRF token: no cache may keep it.
    res.setHeader('Cache-Control', 'no-store');
    res.status(status);
    sendCompressed(req, res, 'html', { raw: Buffer.from(body, 'utf8') });
  };

  r.get('/v/:token', async (req, res) => {
    const nonce = randomBytes(16).toString('base64');
    const now = ctx.clock.now();
    const found = await linkOf(req.params.token, now);
    if (!found) return html(res, 404, renderGone('not_found', { nonce, assets: { css: names.css } }), nonce, req);
    const { link, org } = found;
    const gone = goneReason(link, now);
    if (gone) return html(res, 410, renderGone(gone, { nonce, assets: { css: names.css }, org: { name: org.name, supportContact: org.supportContact } }), nonce, req);
    const reasonLabel = (await listReasons(ctx)).find((x) => x.key === link.reason)?.label ?? link.reason;
    const page = renderPage({
      org: org.name,
      purpose: link.purpose,
      reasonLabel,
      requireFace: link.require_face,
      liveness: link.liveness,
      enterpriseCode: ctx.config.nimcEnterpriseCode,
      csrf: issueCsrf(submitDeps.csrf, link.id, now),
      nonce,
      assets: names,
      supportContact: org.supportContact,
    });
    html(res, 200, page, nonce, req);
  });

  /** The link a POST of the page is for, or its answer sent (404; a link that takes no more submissions is thrown as its 410). */
  async function postedLink(req: express.Request, res: Response): Promise<{ link: repo.LinkRow; org: LinkOrganisation } | null> {
    res.setHeader('Cache-Control', 'no-store');
    const now = ctx.clock.now();
    const found = await linkOf(String(req.params.token), now);
    if (!found) {
      res.status(404).json({ detail: MESSAGES.gone.not_found, code: 'not_found', step: 'result' });
      return null;
    }
    const gone = goneReason(found.link, now);
    if (gone) throw goneError(gone);
    return found;
  }

  // A selfie makes this body large: 2 MiB decoded is under 3 MB as base64 (as POST /verify-nin/face);
  // a liveness check's frames (at most 12) up to 10 MiB, as the API takes them.
  r.post('/v/:token/submit', requireContentType('json'), express.json({ limit: '10mb' }), ctx.faceIntake, async (req, res) => {
    const found = await postedLink(req, res);
    if (found) res.json(await submitOnPage(submitDeps, req, found.link, found.org));
  });

  r.post('/v/:token/liveness-session', requireContentType('json'), express.json({ limit: '4kb' }), async (req, res) => {
    const found = await postedLink(req, res);
    if (found) res.status(201).json(await livenessSessionOnPage(submitDeps, req, found.link, found.org));
  });

  return r;
}
