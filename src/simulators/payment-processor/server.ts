import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { checkoutRoutes } from './checkout.routes.ts';
import { controlRoutes } from './control.routes.ts';
import { paystackRoutes } from './paystack.routes.ts';
import { createRefundStore, type RefundState } from './refunds.ts';
import { createTransactionStore } from './transactions.ts';
import { createWebhookDispatcher, WEBHOOK_MODES, type Delivery, type WebhookMode } from './webhooks.ts';

/**
 * A sandbox that speaks the subset of Paystack's transaction API this service uses, plus a hosted
 * checkout page and webhook delivery, so that top-ups can be exercised end to end without Paystack.
 * State lives in memory and dies with the process. Endpoints and modes: README.md in this folder.
 * This file wires the parts and runs the server: transactions.ts (the store and its state changes),
 * refunds.ts (refunds and their states), paystack.routes.ts (the Paystack API), checkout.routes.ts
 * (the hosted page), control.routes.ts (the /__sim endpoints tests drive) and webhooks.ts (delivery).
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
  /** What a new refund starts as (`pending` by default, as Paystack queues refunds). */
  refundStatus?: RefundState;
};

export type PaymentSimulator = {
  url: string;
  close(): Promise<void>;
  setWebhookUrl(url: string): void;
  deliveries(): Delivery[];
};

export async function startPaymentSimulator(opts: PaymentSimulatorOptions): Promise<PaymentSimulator> {
  const host = opts.host ?? '127.0.0.1';
  let webhookUrl = opts.webhookUrl;
  let baseUrl = '';

  const dispatcher = createWebhookDispatcher({
    secretKey: opts.secretKey,
    getUrl: () => webhookUrl,
    retryMs: opts.webhookRetryMs ?? 3000,
    maxAttempts: opts.webhookMaxAttempts ?? 10,
    timeoutMs: opts.webhookTimeoutMs ?? 10_000,
    lateMs: opts.lateMs ?? 10_000,
  });
  const dispatch = dispatcher.dispatch.bind(dispatcher);
  const store = createTransactionStore({ dispatch, defaultMode: opts.webhookMode ?? 'normal' });
  const refunds = createRefundStore({ dispatch, defaultMode: opts.webhookMode ?? 'normal', initialStatus: opts.refundStatus ?? 'pending' });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // baseUrl is known only once the server listens, so checkout links read it per request.
  app.use(paystackRoutes({ store, refunds, secretKey: opts.secretKey, checkoutBase: () => opts.publicUrl?.replace(/\/+$/, '') ?? baseUrl }));
  app.use(checkoutRoutes(store));
  app.use('/__sim', controlRoutes({ store, refunds, deliveries: () => dispatcher.deliveries() }));

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
