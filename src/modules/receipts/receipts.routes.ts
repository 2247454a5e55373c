import { randomBytes } from 'node:crypto';
import express, { Router, type RequestHandler, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { addressBucket } from '../../lib/address-bucket.ts';
import { AppError } from '../../lib/errors.ts';
import { fromThisOrigin, negotiate, parseInput } from '../../lib/http.ts';
import { keyNamer } from '../../lib/key-names.ts';
import { consumeAll, createLimiter } from '../../lib/rate-limit.ts';
import { clientAddress, principalOf, requireOrgMember } from '../auth/index.ts';
import { deliverSoon, queueMail } from '../mail/index.ts';
import { readable, readableText } from './readable.ts';
import { renderNoReceipt, renderReceiptPage, type PageNote } from './receipt-page.ts';
import { renderReceiptPdf } from './receipt-pdf.ts';
import { RECEIPT_TOKEN_RE, receiptOf, receiptTokenHash } from './receipt.ts';
import * as repo from './receipts.repository.ts';
import { emailForm, referenceParam, type ConsentReceipt } from './receipts.schemas.ts';

/** A receipt's address names the token and, after a dot, what to answer: the page, its PDF or its JSON. */
const FILE_RE = /^([A-Za-z0-9_-]{22})(?:\.(pdf|json))?$/;
/** E-mails of one receipt, and from one address, within an hour: enough to retry a typo, too few to spam someone with. */
export const EMAILS_PER_RECEIPT = 3;
export const EMAILS_PER_ADDRESS = 10;

export const NO_RECEIPT: Record<'unknown' | 'erased' | 'no_consent', string> = {
  unknown: 'Unknown reference_id',
  erased: "This verification's receipt was erased with it (past its retention period, or the person's data was erased)",
  no_consent: 'This verification has no consent receipt: no consent was recorded with it (send `consent` with the verification)',
};

/**
 * Like the link page (the URL is the receipt's secret): not indexed, cached, framed or sent on as a
 * referrer to another site. `same-origin`, not `no-referrer`: under no-referrer a browser's form
 * names its origin `null`, and the e-mail form's origin check needs it. Its Content-Security-Policy
 * allows nothing but its own inline styles and posting back.
 */
const pageHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Robots-Tag', 'noindex, nofollow');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'no-store');
  next();
};
const csp = (nonce: string) => ["default-src 'none'", `style-src 'nonce-${nonce}'`, "img-src 'self'", "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"].join('; ');

/**
 * The person's receipt: GET /r/<token> (the page, or by Accept its JSON or PDF), /r/<token>.pdf,
 * /r/<token>.json, and POST /r/<token>/email (sent once to the address typed, which is not kept).
 */
export function receiptPageRoutes(ctx: AppContext): Router {
  const r = Router();
  const limits = {
    perReceipt: createLimiter(ctx.redis, { prefix: `${ctx.config.REDIS_PREFIX}:rl:receipt-mail`, points: EMAILS_PER_RECEIPT, durationSeconds: 3600 }),
    perAddress: createLimiter(ctx.redis, { prefix: `${ctx.config.REDIS_PREFIX}:rl:receipt-mail-address`, points: EMAILS_PER_ADDRESS, durationSeconds: 3600 }),
    addressKey: keyNamer(ctx.config.JWT_SECRET),
  };
  r.use('/r', pageHeaders);

  /** The receipt behind a token, while its verification is kept; null otherwise. */
  async function receiptBehind(token: string): Promise<ConsentReceipt | null> {
    if (!RECEIPT_TOKEN_RE.test(token)) return null;
    const row = await repo.findByTokenHash(ctx.db, receiptTokenHash(token));
    if (!row) return null;
    const receipt = await receiptOf(ctx, row.org_id, row.reference_id);
    return typeof receipt === 'string' ? null : receipt;
  }

  const html = (res: Response, status: number, render: (nonce: string) => string) => {
    const nonce = randomBytes(16).toString('base64');
    res.setHeader('Content-Security-Policy', csp(nonce));
    res.status(status).type('html').send(render(nonce));
  };

  r.get('/r/:file', async (req, res) => {
    const m = FILE_RE.exec(req.params.file);
    const receipt = m ? await receiptBehind(m[1]!) : null;
    const type = m?.[2] === 'pdf' ? 'application/pdf' : m?.[2] === 'json' ? 'application/json' : negotiate(req, ['text/html', 'application/json', 'application/pdf'] as const);
    if (!receipt) {
      if (type === 'text/html') return html(res, 404, renderNoReceipt);
      throw new AppError('not_found', 'No receipt here: it does not exist or was erased with its verification');
    }
    const path = `/r/${m![1]}`;
    if (type === 'application/json') return void res.json(receipt);
    if (type === 'application/pdf') {
      const pdf = await renderReceiptPdf(readable(receipt), { receiptId: receipt.receipt_id, link: `${ctx.config.publicBaseUrl}${path}` });
      res.setHeader('Content-Disposition', `inline; filename="receipt-${receipt.record_id}.pdf"`);
      return void res.type('application/pdf').send(pdf);
    }
    const note: PageNote = req.query.sent === '1' ? { kind: 'status', text: 'Sent. Check your inbox (and its spam folder) in a few minutes.' } : null;
    html(res, 200, (nonce) => renderReceiptPage(readable(receipt), { path, nonce, note }));
  });

  r.post('/r/:token/email', express.urlencoded({ extended: false, limit: '4kb' }), async (req, res) => {
    const token = String(req.params.token);
    const receipt = await receiptBehind(token);
    if (!receipt) return html(res, 404, renderNoReceipt);
    const path = `/r/${token}`;
    const again = (status: number, text: string, email?: string) =>
      html(res, status, (nonce) => renderReceiptPage(readable(receipt), { path, nonce, note: { kind: 'error', text }, ...(email ? { email } : {}) }));
    if (!fromThisOrigin(req)) return again(403, 'This form was sent from another site. Send it again from this page.');
    const typed = typeof (req.body as { email?: unknown } | undefined)?.email === 'string' ? (req.body as { email: string }).email.slice(0, 300) : '';
    const parsed = emailForm.safeParse({ email: typed });
    if (!parsed.success) return again(400, parsed.error.issues[0]?.message ?? 'Enter an e-mail address', typed);
    try {
      // Per receipt (its reference: no secret, no personal data in a key name) and per address (keyed hash, an IPv6 /64 as one).
      await consumeAll([
        [limits.perReceipt, receipt.record_id],
        [limits.perAddress, limits.addressKey(addressBucket(clientAddress(req)))],
      ]);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'rate_limited') throw err;
      return again(429, 'This receipt was sent too many times in the last hour. Try again later, or download the PDF.', parsed.data.email);
    }
    const link = `${ctx.config.publicBaseUrl}${path}`;
    // Sealed in the outbox like every e-mail; its body (with the address) is erased once sent.
    const outboxId = await queueMail(ctx.db, { encryptionKeys: ctx.config.encryptionKeys, publicBaseUrl: ctx.config.publicBaseUrl }, {
      dedupeKey: `consent-receipt-${receipt.record_id}-${randomBytes(6).toString('hex')}`,
      to: parsed.data.email,
      message: { template: 'consent_receipt', data: { controller: receipt.controller.party_name, document: readableText(receipt), link } },
    });
    await deliverSoon(ctx.producer, outboxId, ctx.logger, 'consent receipt e-mail');
    res.redirect(303, `${path}?sent=1`);
  });
  return r;
}

/** GET /verifications/{reference_id}/receipt: the organisation's copy of the person's receipt. */
export function receiptsRoutes(ctx: AppContext): Router {
  const r = Router();
  r.get('/verifications/:reference_id/receipt', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const orgId = requireOrgMember(principalOf(req));
    const ref = parseInput(referenceParam, { reference_id: req.params.reference_id }).reference_id;
    const receipt = await receiptOf(ctx, orgId, ref);
    if (typeof receipt === 'string') throw new AppError('not_found', NO_RECEIPT[receipt], { extra: { code: `receipt_${receipt}` } });
    res.setHeader('Cache-Control', 'no-store');
    res.json(receipt);
  });
  return r;
}
