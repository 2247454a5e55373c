import { randomBytes } from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { bodyOf, param } from './request.ts';
import { refundData, type RefundStore } from './refunds.ts';
import { parseAmount, TEST_CARDS, transactionData, webhookModeOf, type NewTransaction, type SimTransaction, type TransactionStore } from './transactions.ts';
import { WEBHOOK_MODES } from './webhooks.ts';

// Paystack: "Only -, ., = and alphanumeric characters allowed" in a reference.
const REFERENCE = /^[A-Za-z0-9.=-]{1,100}$/;

/** The part of Paystack's API the service calls: initialize, verify, charge_authorization and refunds. */
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

  /**
   * The fields initialize and charge_authorization share, checked as Paystack checks them; null once
   * the refusal is answered.
   */
  const newTransaction = (body: Record<string, unknown>, res: Response): Omit<NewTransaction, 'callbackUrl'> | null => {
    const refuse = (message: string): null => {
      res.status(400).json({ status: false, message });
      return null;
    };
    const email = body['email'];
    if (typeof email !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(email)) return refuse('Invalid Email Address Passed');
    const amount = parseAmount(body['amount']);
    if (amount === null || amount <= 0) return refuse('Invalid Amount Sent');
    const currency = body['currency'] ?? 'NGN';
    if (currency !== 'NGN') return refuse('Currency not supported by merchant');
    const given = body['reference'];
    if (given !== undefined && (typeof given !== 'string' || !REFERENCE.test(given))) return refuse('Invalid transaction reference');
    const reference = given ?? randomBytes(5).toString('hex');
    if (o.store.byReference(reference)) return refuse('Duplicate Transaction Reference');
    const metadata = body['metadata'] ?? '';
    const mode = webhookModeOf(metadata);
    if (mode.invalid) return refuse(`metadata.sim_webhook must be one of ${WEBHOOK_MODES.join(', ')}`);
    return { reference, email, amount, currency, metadata, webhookMode: mode.mode };
  };

  r.post('/transaction/initialize', paystackAuth, express.json(), (req, res) => {
    const body = bodyOf(req);
    const input = newTransaction(body, res);
    if (!input) return;
    const callbackUrl = body['callback_url'];
    const tx = o.store.create({ ...input, callbackUrl: typeof callbackUrl === 'string' && callbackUrl ? callbackUrl : null });
    res.json({
      status: true,
      message: 'Authorization URL created',
      data: { authorization_url: `${o.checkoutBase()}/checkout/${tx.accessCode}`, access_code: tx.accessCode, reference: input.reference },
    });
  });

  // Paystack's recurring charge (https://paystack.com/docs/api/transaction/#charge-authorization, and
  // https://paystack.com/docs/payments/recurring-charges/): a reusable authorization of the customer's
  // e-mail is charged at once. Paystack answers 200 "Charge attempted" whatever the outcome, which is
  // data.status (`success`, or `failed` with the gateway's reason); a refused request is a 400.
  r.post('/transaction/charge_authorization', paystackAuth, express.json(), (req, res) => {
    const body = bodyOf(req);
    const code = body['authorization_code'];
    const authorization = typeof code === 'string' ? o.store.byAuthorization(code) : undefined;
    if (!authorization) {
      res.status(400).json({ status: false, message: 'Invalid Authorization Code' });
      return;
    }
    const input = newTransaction(body, res);
    if (!input) return;
    if (input.email.toLowerCase() !== authorization.email.toLowerCase()) {
      res.status(400).json({ status: false, message: 'Email does not match Authorization code. Authorization may be inactive or belong to a different email. Please confirm.' });
      return;
    }
    if (!TEST_CARDS[authorization.card].reusable) {
      res.status(400).json({ status: false, message: 'This authorization is not reusable' });
      return;
    }
    const tx = o.store.chargeAuthorization({ ...input, callbackUrl: null, authorization });
    // The verify-only field aside, the transaction as verify shows it (Paystack's answer is a subset).
    const { requested_amount: _requested, ...data } = transactionData(tx);
    res.json({ status: true, message: 'Charge attempted', data });
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
