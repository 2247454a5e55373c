import { randomBytes } from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { bodyOf, param } from './request.ts';
import { refundData, type RefundStore } from './refunds.ts';
import { parseAmount, transactionData, webhookModeOf, type SimTransaction, type TransactionStore } from './transactions.ts';
import { WEBHOOK_MODES } from './webhooks.ts';

// Paystack: "Only -, ., = and alphanumeric characters allowed" in a reference.
const REFERENCE = /^[A-Za-z0-9.=-]{1,100}$/;

/** The part of Paystack's API the service calls: initialize, verify and refunds. */
export function paystackRoutes(o: { store: TransactionStore; refunds: RefundStore; secretKey: string; checkoutBase: () => string }): Router {
  const r = Router();

  // Paystack answers every API error with this envelope, including a missing or wrong key.
  const paystackAuth = (req: Request, res: Response, next: NextFunction): void => {
    if (req.get('authorization') !== `Bearer ${o.secretKey}`) {
      res.status(401).json({ status: false, message: 'Invalid key' });
      return;
    }
    next();
  };

  r.post('/transaction/initialize', paystackAuth, express.json(), (req, res) => {
    const body = bodyOf(req);
    const email = body['email'];
    if (typeof email !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(email)) {
      res.status(400).json({ status: false, message: 'Invalid Email Address Passed' });
      return;
    }
    const amount = parseAmount(body['amount']);
    if (amount === null || amount <= 0) {
      res.status(400).json({ status: false, message: 'Invalid Amount Sent' });
      return;
    }
    const currency = body['currency'] ?? 'NGN';
    if (currency !== 'NGN') {
      res.status(400).json({ status: false, message: 'Currency not supported by merchant' });
      return;
    }
    const given = body['reference'];
    if (given !== undefined && (typeof given !== 'string' || !REFERENCE.test(given))) {
      res.status(400).json({ status: false, message: 'Invalid transaction reference' });
      return;
    }
    const reference = given ?? randomBytes(5).toString('hex');
    if (o.store.byReference(reference)) {
      res.status(400).json({ status: false, message: 'Duplicate Transaction Reference' });
      return;
    }
    const metadata = body['metadata'] ?? '';
    const mode = webhookModeOf(metadata);
    if (mode.invalid) {
      res.status(400).json({ status: false, message: `metadata.sim_webhook must be one of ${WEBHOOK_MODES.join(', ')}` });
      return;
    }
    const callbackUrl = body['callback_url'];
    const tx = o.store.create({
      reference,
      email,
      amount,
      currency,
      metadata,
      callbackUrl: typeof callbackUrl === 'string' && callbackUrl ? callbackUrl : null,
      webhookMode: mode.mode,
    });
    res.json({
      status: true,
      message: 'Authorization URL created',
      data: { authorization_url: `${o.checkoutBase()}/checkout/${tx.accessCode}`, access_code: tx.accessCode, reference },
    });
  });

  r.get('/transaction/verify/:reference', paystackAuth, (req, res) => {
    const tx = o.store.byReference(param(req, 'reference'));
    if (!tx) {
      res.status(400).json({ status: false, message: 'Transaction reference not found' });
      return;
    }
    res.json({ status: true, message: 'Verification successful', data: transactionData(tx) });
  });

  // A transaction is named by its reference or its numeric id, as at Paystack.
  const txNamed = (v: unknown): SimTransaction | undefined => {
    if (typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v))) return o.store.byId(Number(v));
    return typeof v === 'string' ? o.store.byReference(v) : undefined;
  };
  const note = (v: unknown): string | null => (typeof v === 'string' ? v.slice(0, 500) : null);

  r.post('/refund', paystackAuth, express.json(), (req, res) => {
    const body = bodyOf(req);
    const tx = txNamed(body['transaction']);
    if (!tx) {
      res.status(400).json({ status: false, message: 'Transaction not found' });
      return;
    }
    const amount = body['amount'] === undefined ? null : parseAmount(body['amount']);
    if (body['amount'] !== undefined && amount === null) {
      res.status(400).json({ status: false, message: 'Invalid Amount Sent' });
      return;
    }
    const outcome = o.refunds.create(tx, { amount, merchantNote: note(body['merchant_note']), customerNote: note(body['customer_note']) });
    if (!outcome.ok) {
      res.status(outcome.httpStatus).json({ status: false, message: outcome.message });
      return;
    }
    res.json({ status: true, message: outcome.message, data: { ...refundData(outcome.refund), transaction: transactionData(tx) } });
  });

  r.get('/refund', paystackAuth, (req, res) => {
    const named = req.query['reference'] ?? req.query['transaction'];
    const tx = txNamed(typeof named === 'string' ? named : undefined);
    const list = tx ? o.refunds.refundsOf(tx) : named === undefined ? o.refunds.all().reverse() : [];
    res.json({ status: true, message: 'Refunds retrieved', data: list.map(refundData), meta: { total: list.length, skipped: 0, perPage: 50, page: 1, pageCount: 1 } });
  });

  r.get('/refund/:id', paystackAuth, (req, res) => {
    const refund = o.refunds.byId(Number(param(req, 'id')));
    if (!refund) {
      res.status(404).json({ status: false, message: 'Refund not found' });
      return;
    }
    res.json({ status: true, message: 'Refund retrieved', data: refundData(refund) });
  });

  return r;
}
