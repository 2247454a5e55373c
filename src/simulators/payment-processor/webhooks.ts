import { createHmac, randomBytes } from 'node:crypto';

export const WEBHOOK_MODES = ['normal', 'twice', 'late', 'out-of-order', 'none', 'bad-signature'] as const;

/** How the simulator delivers the `charge.success` event of one payment; see README.md. */
export type WebhookMode = (typeof WEBHOOK_MODES)[number];

export function isWebhookMode(v: unknown): v is WebhookMode {
  return typeof v === 'string' && (WEBHOOK_MODES as readonly string[]).includes(v);
}

export type WebhookEvent = { event: string; data: Record<string, unknown> };

/** The transaction an event is about: charges carry `reference`, refunds `transaction_reference`, disputes `transaction.reference`. */
export function referenceOf(event: WebhookEvent): string {
  const d = event.data;
  const nested = typeof d['transaction'] === 'object' && d['transaction'] !== null ? (d['transaction'] as Record<string, unknown>)['reference'] : undefined;
  const ref = d['reference'] ?? d['transaction_reference'] ?? nested;
  return typeof ref === 'string' ? ref : '';
}

export type Delivery = {
  event: string;
  reference: string;
  /** HTTP status of the attempt, or 'error' when no answer came (refused, timed out, no URL set). */
  status: number | 'error';
  attempt: number;
  at: string;
};

export type WebhookDispatcherOptions = {
  secretKey: string;
  getUrl: () => string | undefined;
  /** Wait before the first retry; each further retry waits twice as long as the one before. */
  retryMs: number;
  maxAttempts: number;
  /** Per attempt: no answer within this counts as a failed attempt. */
  timeoutMs: number;
  /** Delay before the first attempt in `late` mode. */
  lateMs: number;
};

export type WebhookDispatcher = {
  dispatch(event: WebhookEvent, mode: WebhookMode): void;
  deliveries(): Delivery[];
  close(): Promise<void>;
};

// The signature is computed here with node:crypto directly, not with the service's own signer, so a
// bug in the service's signing code cannot be mirrored by the simulator and go unnoticed.
function sign(body: string, key: string): string {
  return createHmac('sha512', key).update(body).digest('hex');
}

export function createWebhookDispatcher(opts: WebhookDispatcherOptions): WebhookDispatcher {
  const log: Delivery[] = [];
  const stop = new AbortController();
  const running = new Set<Promise<void>>();

  function sleep(ms: number): Promise<void> {
    if (ms <= 0 || stop.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        stop.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      stop.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** One event, delivered until a 200 comes back or the attempts run out, as Paystack does. */
  async function deliver(event: WebhookEvent, signingKey: string, delayMs: number): Promise<void> {
    await sleep(delayMs);
    // Serialised once: every retry carries byte-identical content under the same signature.
    const body = JSON.stringify(event);
    const signature = sign(body, signingKey);
    for (let attempt = 1; attempt <= opts.maxAttempts; attempt++) {
      if (stop.signal.aborted) return;
      const url = opts.getUrl();
      let status: number | 'error' = 'error';
      if (url) {
        try {
          const res = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-paystack-signature': signature, 'user-agent': 'paystack-simulator' },
            body,
            signal: AbortSignal.any([stop.signal, AbortSignal.timeout(opts.timeoutMs)]),
          });
          status = res.status;
          await res.body?.cancel();
        } catch {
          status = 'error';
        }
      }
      if (stop.signal.aborted) return;
      log.push({ event: event.event, reference: referenceOf(event), status, attempt, at: new Date().toISOString() });
      // Paystack treats only 200 OK as delivered; 201 or 204 are retried like failures.
      if (status === 200) return;
      if (attempt < opts.maxAttempts) await sleep(opts.retryMs * 2 ** (attempt - 1));
    }
  }

  function unrelatedEvent(): WebhookEvent {
    const reference = `SIM-UNRELATED-${randomBytes(6).toString('hex')}`;
    return {
      event: 'paymentrequest.pending',
      data: { id: 0, reference, amount: 0, currency: 'NGN', status: 'pending', request_code: `PRQ_${randomBytes(6).toString('hex')}` },
    };
  }

  async function run(event: WebhookEvent, mode: WebhookMode): Promise<void> {
    switch (mode) {
      case 'none':
        return;
      case 'normal':
        return deliver(event, opts.secretKey, 0);
      case 'late':
        return deliver(event, opts.secretKey, opts.lateMs);
      case 'bad-signature':
        return deliver(event, `${opts.secretKey}-not-the-key`, 0);
      case 'twice':
        // Concurrent on purpose: duplicates that race each other are the hard case for idempotency.
        await Promise.all([deliver(event, opts.secretKey, 0), deliver(event, opts.secretKey, 0)]);
        return;
      case 'out-of-order':
        // An event the receiver does not handle arrives first, then the real one.
        await deliver(unrelatedEvent(), opts.secretKey, 0);
        return deliver(event, opts.secretKey, 0);
    }
  }

  return {
    dispatch(event, mode) {
      if (stop.signal.aborted) return;
      const p = run(event, mode).finally(() => running.delete(p));
      running.add(p);
    },
    deliveries: () => log.map((d) => ({ ...d })),
    async close() {
      stop.abort();
      await Promise.allSettled([...running]);
    },
  };
}
