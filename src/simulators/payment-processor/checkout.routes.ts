import express, { Router } from 'express';
import { bodyOf, param } from './request.ts';
import { isTestCard, TEST_CARDS, transactionData, type Outcome, type SimTransaction, type TransactionStore } from './transactions.ts';
import { isWebhookMode, WEBHOOK_MODES } from './webhooks.ts';

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function formatNgn(kobo: number): string {
  const naira = Math.floor(kobo / 100).toLocaleString('en-US');
  return `NGN ${naira}.${String(kobo % 100).padStart(2, '0')}`;
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
.amount{font-size:2rem;font-weight:600}.sim{color:#a00;font-size:.8rem}button{font-size:1rem;padding:.5rem 1.5rem;margin-right:.5rem}</style>
</head><body><p class="sim">Payment processor simulator: no real money moves.</p>${body}</body></html>`;
}

/** The hosted checkout page a payer is sent to, with its Pay and Cancel buttons. */
export function checkoutRoutes(store: TransactionStore): Router {
  const r = Router();

  r.get('/checkout/:accessCode', (req, res) => {
    const tx = store.byAccessCode(param(req, 'accessCode'));
    if (!tx) {
      res.status(404).type('html').send(page('Not found', '<h1>Payment link not found</h1>'));
      return;
    }
    const summary = `<p>Pay <span class="amount">${escapeHtml(formatNgn(tx.amount))}</span></p><p>Reference: <code>${escapeHtml(tx.reference)}</code></p>`;
    if (tx.status !== 'abandoned' || tx.cancelled) {
      const state = tx.status === 'success' ? 'This payment is complete.' : 'This payment link is closed.';
      res.type('html').send(page('Checkout', `<h1>Checkout</h1>${summary}<p>${state}</p>`));
      return;
    }
    const modes = WEBHOOK_MODES.map((m) => `<option value="${m}">${m}</option>`).join('');
    const cards = Object.entries(TEST_CARDS)
      .map(([number, c]) => `<option value="${number}">${escapeHtml(number.replace(/(\d{4})(?=\d)/g, '$1 '))} (${escapeHtml(c.label)})</option>`)
      .join('');
    // No action attribute: the form posts back to this same address, whatever prefix a proxy adds.
    const form = `<form method="post">
<p><label>Card: <select name="card">${cards}</select></label></p>
<label>Webhook (simulator): <select name="webhook"><option value="">default</option>${modes}</select></label>
<p><button type="submit" name="action" value="pay">Pay</button><button type="submit" name="action" value="cancel">Cancel</button></p>
</form>`;
    res.type('html').send(page('Checkout', `<h1>Checkout</h1>${summary}${form}`));
  });

  r.post('/checkout/:accessCode', express.urlencoded({ extended: false }), (req, res) => {
    const wantsJson = req.accepts(['html', 'json']) === 'json';
    const answer = (httpStatus: number, message: string, tx?: SimTransaction): void => {
      if (wantsJson) {
        res.status(httpStatus).json(tx ? { status: true, message, data: transactionData(tx) } : { status: false, message });
        return;
      }
      let back = '';
      if (tx?.callbackUrl) {
        const u = new URL(tx.callbackUrl);
        u.searchParams.set('trxref', tx.reference);
        u.searchParams.set('reference', tx.reference);
        back = `<p><a href="${escapeHtml(u.toString())}">Return to merchant</a></p>`;
      }
      const amount = tx ? `<p>${escapeHtml(formatNgn(tx.amount))}, reference <code>${escapeHtml(tx.reference)}</code></p>` : '';
      res.status(httpStatus).type('html').send(page(message, `<h1>${escapeHtml(message)}</h1>${amount}${back}`));
    };
    const tx = store.byAccessCode(param(req, 'accessCode'));
    if (!tx) return answer(404, 'Payment link not found');
    const body = bodyOf(req);
    const webhook = body['webhook'];
    if (webhook !== undefined && webhook !== '' && !isWebhookMode(webhook)) return answer(400, `webhook must be one of ${WEBHOOK_MODES.join(', ')}`);
    const card = body['card'];
    if (card !== undefined && card !== '' && !isTestCard(card)) return answer(400, `card must be one of ${Object.keys(TEST_CARDS).join(', ')}`);
    let outcome: Outcome;
    if (body['action'] === 'pay') outcome = store.pay(tx, isWebhookMode(webhook) ? webhook : undefined, isTestCard(card) ? card : undefined);
    else if (body['action'] === 'cancel') outcome = store.cancel(tx);
    else return answer(400, 'action must be pay or cancel');
    if (!outcome.ok) return answer(outcome.httpStatus, outcome.message);
    answer(200, outcome.message, outcome.tx);
  });

  return r;
}
