import express, { Router, type Request, type Response } from 'express';
import { param } from './request.ts';
import { isRefundState, refundData, REFUND_STATES, type RefundOutcome, type RefundStore } from './refunds.ts';
import { isTestCard, parseAmount, TEST_CARDS, transactionData, type Outcome, type SimTransaction, type TransactionStore } from './transactions.ts';
import { isWebhookMode, WEBHOOK_MODES, type Delivery } from './webhooks.ts';

/**
 * Simulator-only control endpoints, mounted at /__sim; Paystack has nothing like them.
 * Unauthenticated on purpose: tests drive them directly, and the simulator is never exposed as a
 * real processor.
 */
export function controlRoutes(o: { store: TransactionStore; refunds: RefundStore; deliveries: () => Delivery[] }): Router {
  const sim = Router();
  sim.use(express.json());
  const simAnswer = (res: Response, outcome: Outcome): void => {
    if (!outcome.ok) res.status(outcome.httpStatus).json({ status: false, message: outcome.message });
    else res.json({ status: true, message: outcome.message, data: transactionData(outcome.tx) });
  };
  const findTx = (req: Request, res: Response): SimTransaction | undefined => {
    const tx = o.store.byReference(param(req, 'reference'));
    if (!tx) res.status(404).json({ status: false, message: 'Transaction reference not found' });
    return tx;
  };
  sim.post('/transactions/:reference/pay', (req, res) => {
    const tx = findTx(req, res);
    if (!tx) return;
    const webhook: unknown = req.body?.webhook;
    if (webhook !== undefined && !isWebhookMode(webhook)) {
      res.status(400).json({ status: false, message: `webhook must be one of ${WEBHOOK_MODES.join(', ')}` });
      return;
    }
    const card: unknown = req.body?.card;
    if (card !== undefined && !isTestCard(card)) {
      res.status(400).json({ status: false, message: `card must be one of ${Object.keys(TEST_CARDS).join(', ')}` });
      return;
    }
    simAnswer(res, o.store.pay(tx, isWebhookMode(webhook) ? webhook : undefined, isTestCard(card) ? card : undefined));
  });
  sim.post('/transactions/:reference/fail', (req, res) => {
    const tx = findTx(req, res);
    if (tx) simAnswer(res, o.store.fail(tx));
  });
  sim.post('/transactions/:reference/tamper', (req, res) => {
    const tx = findTx(req, res);
    if (!tx) return;
    const amount = parseAmount(req.body?.amount);
    if (amount === null || amount < 0) {
      res.status(400).json({ status: false, message: 'amount must be a non-negative integer (kobo)' });
      return;
    }
    simAnswer(res, o.store.tamper(tx, amount));
  });
  sim.post('/transactions/:reference/reverse', (req, res) => {
    const tx = findTx(req, res);
    if (tx) simAnswer(res, o.store.reverse(tx));
  });

  const refundAnswer = (res: Response, outcome: RefundOutcome): void => {
    if (!outcome.ok) res.status(outcome.httpStatus).json({ status: false, message: outcome.message });
    else res.json({ status: true, message: outcome.message, data: { ...refundData(outcome.refund), reference: outcome.refund.tx.reference } });
  };
  sim.get('/refunds', (_req, res) => {
    res.json({ status: true, message: 'Refunds', data: o.refunds.all().map((r) => ({ ...refundData(r), reference: r.tx.reference })) });
  });
  sim.post('/refunds/initial-status', (req, res) => {
    const status: unknown = req.body?.status;
    if (!isRefundState(status)) {
      res.status(400).json({ status: false, message: `status must be one of ${REFUND_STATES.join(', ')}` });
      return;
    }
    o.refunds.setInitialStatus(status);
    res.json({ status: true, message: `New refunds start ${status}`, data: { status } });
  });
  sim.post('/refunds/:id/:status', (req, res) => {
    const refund = o.refunds.byId(Number(param(req, 'id')));
    const status = param(req, 'status');
    if (!refund) {
      res.status(404).json({ status: false, message: 'Refund not found' });
      return;
    }
    if (!isRefundState(status) || status === 'pending') {
      res.status(400).json({ status: false, message: 'status must be one of processing, processed, failed' });
      return;
    }
    refundAnswer(res, o.refunds.settle(refund, status));
  });
  sim.get('/deliveries', (_req, res) => {
    res.json({ status: true, message: 'Deliveries', data: o.deliveries() });
  });
  return sim;
}
