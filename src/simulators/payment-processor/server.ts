import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createWebhookDispatcher, isWebhookMode, WEBHOOK_MODES, type Delivery, type WebhookMode } from './webhooks.ts';

/**
 * A sandbox that speaks the subset of Paystack's transaction API this service uses, plus a hosted
 * checkout page and webhook delivery, so that top-ups can be exercised end to end without Paystack.
 * State lives in memory and dies with the process. Endpoints and modes: README.md in this folder.
 */

export type { WebhookMode, Delivery };
export { WEBHOOK_MODES };

export type PaymentSimulatorOptions = {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  secretKey: string;
  webhookUrl?: string;
  webhookMode?: WebhookMode;
  /** Wait before the first webhook retry, doubled on each further retry. */
  webhookRetryMs?: number;
  webhookMaxAttempts?: number;
  webhookTimeoutMs?: number;
  /** Delay of the first attempt in `late` mode. */
  lateMs?: number;
  /** Base of the checkout links handed out, when the simulator is reached through another address. */
  publicUrl?: string;
};

export type PaymentSimulator = {
  url: string;
  close(): Promise<void>;
  setWebhookUrl(url: string): void;
  deliveries(): Delivery[];
};

type TxStatus = 'abandoned' | 'success' | 'failed';

type SimTransaction = {
  id: number;
  reference: string;
  accessCode: string;
  email: string;
  customerId: number;
  customerCode: string;
  /** What initialize asked for. */
  requestedAmount: number;
  /** What verify and the webhook report; differs from requestedAmount only after a tamper call. */
  amount: number;
  currency: string;
  metadata: unknown;
  callbackUrl: string | null;
  webhookMode: WebhookMode | undefined;
  status: TxStatus;
  /** The payer cancelled on the checkout page: still `abandoned`, as at Paystack, but no longer payable. */
  cancelled: boolean;
  gatewayResponse: string;
  createdAt: string;
  paidAt: string | null;
  fees: number | null;
};

type Outcome = { ok: true; tx: SimTransaction; message: string } | { ok: false; httpStatus: number; message: string };

// Paystack's local fee schedule: 1.5 % + NGN 100, the NGN 100 waived under NGN 2,500, capped at NGN 2,000.
// Kept separate from the service's pricing rules on purpose: the simulator plays the processor.
function paystackLocalFee(amountKobo: number): number {
  const percent = Math.ceil((amountKobo * 150) / 10_000);
  const flat = amountKobo < 250_000 ? 0 : 10_000;
  return Math.min(200_000, percent + flat);
}

// Paystack: "Only -, ., = and alphanumeric characters allowed" in a reference.
const REFERENCE = /^[A-Za-z0-9.=-]{1,100}$/;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function formatNgn(kobo: number): string {
  const naira = Math.floor(kobo / 100).toLocaleString('en-US');
  return `NGN ${naira}.${String(kobo % 100).padStart(2, '0')}`;
}

function parseAmount(v: unknown): number | null {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && /^\d{1,15}$/.test(v)) return Number(v);
  return null;
}

/** Paystack accepts metadata as an object or as a JSON string; the mode override may sit in either. */
function webhookModeOf(metadata: unknown): { mode: WebhookMode | undefined; invalid: boolean } {
  let m = metadata;
  if (typeof m === 'string') {
    try {
      m = JSON.parse(m);
    } catch {
      return { mode: undefined, invalid: false };
    }
  }
  if (typeof m !== 'object' || m === null || !('sim_webhook' in m)) return { mode: undefined, invalid: false };
  const v = (m as { sim_webhook: unknown }).sim_webhook;
  return isWebhookMode(v) ? { mode: v, invalid: false } : { mode: undefined, invalid: true };
}

function param(req: Request, name: string): string {
  const v = req.params[name];
  return typeof v === 'string' ? v : '';
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
.amount{font-size:2rem;font-weight:600}.sim{color:#a00;font-size:.8rem}button{font-size:1rem;padding:.5rem 1.5rem;margin-right:.5rem}</style>
</head><body><p class="sim">Payment processor simulator: no real money moves.</p>${body}</body></html>`;
}

export async function startPaymentSimulator(opts: PaymentSimulatorOptions): Promise<PaymentSimulator> {
  const host = opts.host ?? '127.0.0.1';
  const defaultMode: WebhookMode = opts.webhookMode ?? 'normal';
  let webhookUrl = opts.webhookUrl;
  let baseUrl = '';

  const byReference = new Map<string, SimTransaction>();
  const byAccessCode = new Map<string, SimTransaction>();
  const customers = new Map<string, { id: number; code: string }>();
  let nextId = 4_000_000_001;
  let nextCustomerId = 90_000_001;

  const dispatcher = createWebhookDispatcher({
    secretKey: opts.secretKey,
    getUrl: () => webhookUrl,
    retryMs: opts.webhookRetryMs ?? 3000,
    maxAttempts: opts.webhookMaxAttempts ?? 10,
    timeoutMs: opts.webhookTimeoutMs ?? 10_000,
    lateMs: opts.lateMs ?? 10_000,
  });

  function transactionData(tx: SimTransaction): Record<string, unknown> {
    const paid = tx.status === 'success';
    return {
      id: tx.id,
      domain: 'test',
      status: tx.status,
      reference: tx.reference,
      receipt_number: null,
      amount: tx.amount,
      requested_amount: tx.requestedAmount,
      message: null,
      gateway_response: tx.gatewayResponse,
      paid_at: tx.paidAt,
      paidAt: tx.paidAt,
      created_at: tx.createdAt,
      createdAt: tx.createdAt,
      transaction_date: tx.createdAt,
      channel: 'card',
      currency: tx.currency,
      ip_address: null,
      metadata: tx.metadata,
      log: null,
      fees: tx.fees,
      fees_split: null,
      authorization: paid
        ? {
            authorization_code: `AUTH_${tx.accessCode.slice(0, 10)}`,
            bin: '408408',
            last4: '4081',
            exp_month: '12',
            exp_year: '2030',
            channel: 'card',
            card_type: 'visa',
            bank: 'TEST BANK',
            country_code: 'NG',
            brand: 'visa',
            reusable: true,
            signature: `SIG_${tx.accessCode.slice(0, 12)}`,
            account_name: null,
          }
        : {},
      customer: {
        id: tx.customerId,
        first_name: null,
        last_name: null,
        email: tx.email,
        customer_code: tx.customerCode,
        phone: null,
        metadata: null,
        risk_action: 'default',
      },
      plan: null,
      split: {},
      order_id: null,
      subaccount: {},
    };
  }

  function pay(tx: SimTransaction, override: WebhookMode | undefined): Outcome {
    if (tx.status === 'success') return { ok: true, tx, message: 'Transaction already paid' };
    if (tx.status === 'failed' || tx.cancelled) return { ok: false, httpStatus: 400, message: 'Transaction is no longer payable' };
    tx.status = 'success';
    tx.paidAt = new Date().toISOString();
    tx.fees = paystackLocalFee(tx.amount);
    tx.gatewayResponse = 'Successful';
    const data = transactionData(tx);
    // Paystack's charge.success event does not carry the verify-only fields.
    delete data['requested_amount'];
    delete data['transaction_date'];
    dispatcher.dispatch({ event: 'charge.success', data: { ...data, reference: tx.reference } }, override ?? tx.webhookMode ?? defaultMode);
    return { ok: true, tx, message: 'Charge successful' };
  }

  function cancel(tx: SimTransaction): Outcome {
    if (tx.status === 'success') return { ok: false, httpStatus: 400, message: 'Transaction already paid' };
    if (tx.status === 'abandoned') {
      tx.cancelled = true;
      tx.gatewayResponse = 'Customer cancelled the transaction';
    }
    return { ok: true, tx, message: 'Transaction cancelled' };
  }

  function fail(tx: SimTransaction): Outcome {
    if (tx.status === 'success') return { ok: false, httpStatus: 400, message: 'Transaction already paid' };
    tx.status = 'failed';
    tx.gatewayResponse = 'Declined';
    return { ok: true, tx, message: 'Transaction failed' };
  }

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // Paystack answers every API error with this envelope, including a missing or wrong key.
  const paystackAuth = (req: Request, res: Response, next: NextFunction): void => {
    if (req.get('authorization') !== `Bearer ${opts.secretKey}`) {
      res.status(401).json({ status: false, message: 'Invalid key' });
      return;
    }
    next();
  };

  app.post('/transaction/initialize', paystackAuth, express.json(), (req, res) => {
    const body: Record<string, unknown> = typeof req.body === 'object' && req.body !== null ? req.body : {};
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
    if (byReference.has(reference)) {
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
    let customer = customers.get(email.toLowerCase());
    if (!customer) {
      customer = { id: nextCustomerId++, code: `CUS_${randomBytes(8).toString('hex')}` };
      customers.set(email.toLowerCase(), customer);
    }
    const tx: SimTransaction = {
      id: nextId++,
      reference,
      accessCode: randomBytes(8).toString('hex').slice(0, 15),
      email,
      customerId: customer.id,
      customerCode: customer.code,
      requestedAmount: amount,
      amount,
      currency,
      metadata,
      callbackUrl: typeof callbackUrl === 'string' && callbackUrl ? callbackUrl : null,
      webhookMode: mode.mode,
      status: 'abandoned',
      cancelled: false,
      gatewayResponse: 'The transaction was not completed',
      createdAt: new Date().toISOString(),
      paidAt: null,
      fees: null,
    };
    byReference.set(reference, tx);
    byAccessCode.set(tx.accessCode, tx);
    res.json({
      status: true,
      message: 'Authorization URL created',
      data: { authorization_url: `${opts.publicUrl?.replace(/\/+$/, '') ?? baseUrl}/checkout/${tx.accessCode}`, access_code: tx.accessCode, reference },
    });
  });

  app.get('/transaction/verify/:reference', paystackAuth, (req, res) => {
    const tx = byReference.get(param(req, 'reference'));
    if (!tx) {
      res.status(400).json({ status: false, message: 'Transaction reference not found' });
      return;
    }
    res.json({ status: true, message: 'Verification successful', data: transactionData(tx) });
  });

  app.get('/checkout/:accessCode', (req, res) => {
    const tx = byAccessCode.get(param(req, 'accessCode'));
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
    // No action attribute: the form posts back to this same address, whatever prefix a proxy adds.
    const form = `<form method="post">
<label>Webhook (simulator): <select name="webhook"><option value="">default</option>${modes}</select></label>
<p><button type="submit" name="action" value="pay">Pay</button><button type="submit" name="action" value="cancel">Cancel</button></p>
</form>`;
    res.type('html').send(page('Checkout', `<h1>Checkout</h1>${summary}${form}`));
  });

  app.post('/checkout/:accessCode', express.urlencoded({ extended: false }), (req, res) => {
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
    const tx = byAccessCode.get(param(req, 'accessCode'));
    if (!tx) return answer(404, 'Payment link not found');
    const body: Record<string, unknown> = typeof req.body === 'object' && req.body !== null ? req.body : {};
    const webhook = body['webhook'];
    if (webhook !== undefined && webhook !== '' && !isWebhookMode(webhook)) return answer(400, `webhook must be one of ${WEBHOOK_MODES.join(', ')}`);
    let outcome: Outcome;
    if (body['action'] === 'pay') outcome = pay(tx, isWebhookMode(webhook) ? webhook : undefined);
    else if (body['action'] === 'cancel') outcome = cancel(tx);
    else return answer(400, 'action must be pay or cancel');
    if (!outcome.ok) return answer(outcome.httpStatus, outcome.message);
    answer(200, outcome.message, outcome.tx);
  });

  // Simulator-only control endpoints; Paystack has nothing like them. Unauthenticated on purpose:
  // tests drive them directly, and the simulator is never exposed as a real processor.
  const sim = express.Router();
  sim.use(express.json());
  const simAnswer = (res: Response, outcome: Outcome): void => {
    if (!outcome.ok) res.status(outcome.httpStatus).json({ status: false, message: outcome.message });
    else res.json({ status: true, message: outcome.message, data: transactionData(outcome.tx) });
  };
  const findTx = (req: Request, res: Response): SimTransaction | undefined => {
    const tx = byReference.get(param(req, 'reference'));
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
    simAnswer(res, pay(tx, isWebhookMode(webhook) ? webhook : undefined));
  });
  sim.post('/transactions/:reference/fail', (req, res) => {
    const tx = findTx(req, res);
    if (tx) simAnswer(res, fail(tx));
  });
  sim.post('/transactions/:reference/tamper', (req, res) => {
    const tx = findTx(req, res);
    if (!tx) return;
    const amount = parseAmount(req.body?.amount);
    if (amount === null || amount < 0) {
      res.status(400).json({ status: false, message: 'amount must be a non-negative integer (kobo)' });
      return;
    }
    tx.amount = amount;
    if (tx.status === 'success') tx.fees = paystackLocalFee(amount);
    simAnswer(res, { ok: true, tx, message: 'Amount changed' });
  });
  sim.get('/deliveries', (_req, res) => {
    res.json({ status: true, message: 'Deliveries', data: dispatcher.deliveries() });
  });
  app.use('/__sim', sim);

  app.use((_req: Request, res: Response) => {
    res.status(404).json({ status: false, message: 'Not found' });
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err === 'object' && err !== null && 'status' in err && typeof err.status === 'number' ? err.status : 500;
    res.status(status).json({ status: false, message: status < 500 ? 'Invalid request body' : 'Simulator error' });
  });

  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const reachableHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  baseUrl = `http://${reachableHost}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    setWebhookUrl(url) {
      webhookUrl = url;
    },
    deliveries: () => dispatcher.deliveries(),
    close() {
      closing ??= (async () => {
        await dispatcher.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
