import type { SimTransaction } from './transactions.ts';
import type { WebhookEvent, WebhookMode } from './webhooks.ts';

/** The simulator's refunds: created against a paid transaction, then processed or failed. */

export const REFUND_STATES = ['pending', 'processing', 'processed', 'failed'] as const;
export type RefundState = (typeof REFUND_STATES)[number];

export function isRefundState(v: unknown): v is RefundState {
  return typeof v === 'string' && (REFUND_STATES as readonly string[]).includes(v);
}

export type SimRefund = {
  id: number;
  tx: SimTransaction;
  amount: number;
  currency: string;
  status: RefundState;
  merchantNote: string | null;
  customerNote: string | null;
  createdAt: string;
  refundedAt: string | null;
};

export type RefundOutcome = { ok: true; refund: SimRefund; message: string } | { ok: false; httpStatus: number; message: string };

/** A refund shaped like Paystack's refund object; `transaction` is the id, as in fetch and list. */
export function refundData(r: SimRefund): Record<string, unknown> {
  return {
    id: r.id,
    integration: 100032,
    domain: 'test',
    transaction: r.tx.id,
    dispute: null,
    amount: r.amount,
    deducted_amount: r.status === 'processed' ? r.amount : 0,
    currency: r.currency,
    channel: 'card',
    fully_deducted: r.status === 'processed',
    refunded_by: 'api',
    refunded_at: r.refundedAt,
    expected_at: r.createdAt,
    merchant_note: r.merchantNote,
    customer_note: r.customerNote,
    status: r.status,
    createdAt: r.createdAt,
    updatedAt: r.refundedAt ?? r.createdAt,
  };
}

export type RefundStore = ReturnType<typeof createRefundStore>;

export function createRefundStore(o: { dispatch: (event: WebhookEvent, mode: WebhookMode) => void; defaultMode: WebhookMode; initialStatus: RefundState }) {
  const byId = new Map<number, SimRefund>();
  let nextId = 3_000_001;
  // What a new refund starts as; tests change it to see every path (Paystack queues: `pending`).
  let initialStatus: RefundState = o.initialStatus;

  const refundsOf = (tx: SimTransaction): SimRefund[] => [...byId.values()].filter((r) => r.tx === tx).sort((a, b) => b.id - a.id);

  function notify(r: SimRefund): void {
    if (r.status === 'processing') return;
    o.dispatch(
      {
        event: `refund.${r.status}`,
        data: { status: r.status, transaction_reference: r.tx.reference, refund_reference: null, amount: r.amount, currency: r.currency, id: String(r.id), domain: 'test' },
      },
      r.tx.webhookMode ?? o.defaultMode,
    );
  }

  function settle(r: SimRefund, status: RefundState): RefundOutcome {
    if (r.status === 'processed' || r.status === 'failed') return { ok: false, httpStatus: 400, message: `Refund is already ${r.status}` };
    r.status = status;
    if (status === 'processed') {
      r.refundedAt = new Date().toISOString();
      const refunded = refundsOf(r.tx).filter((x) => x.status === 'processed').reduce((sum, x) => sum + x.amount, 0);
      if (refunded >= r.tx.amount) r.tx.status = 'reversed';
    }
    notify(r);
    return { ok: true, refund: r, message: `Refund ${status}` };
  }

  return {
    byId: (id: number) => byId.get(id),
    refundsOf,
    all: () => [...byId.values()].sort((a, b) => a.id - b.id),
    setInitialStatus(status: RefundState) {
      initialStatus = status;
    },

    /**
     * At most the amount not yet refunded (failed refunds returned nothing): a second full refund of
     * one transaction is refused, which is what makes a repeated request harmless.
     */
    create(tx: SimTransaction, input: { amount: number | null; merchantNote: string | null; customerNote: string | null }): RefundOutcome {
      if (tx.status !== 'success' && tx.status !== 'reversed') return { ok: false, httpStatus: 400, message: 'Cannot refund a transaction that was not successful' };
      const held = refundsOf(tx).filter((r) => r.status !== 'failed').reduce((sum, r) => sum + r.amount, 0);
      const left = tx.amount - held;
      if (left <= 0) return { ok: false, httpStatus: 400, message: 'Transaction has been fully reversed' };
      const amount = input.amount ?? left;
      if (amount <= 0 || amount > left) return { ok: false, httpStatus: 400, message: 'Refund amount cannot be more than the amount left on the transaction' };
      const refund: SimRefund = {
        id: nextId++,
        tx,
        amount,
        currency: tx.currency,
        status: 'pending',
        merchantNote: input.merchantNote,
        customerNote: input.customerNote,
        createdAt: new Date().toISOString(),
        refundedAt: null,
      };
      byId.set(refund.id, refund);
      if (initialStatus === 'pending') notify(refund);
      else settle(refund, initialStatus);
      return { ok: true, refund, message: 'Refund has been queued for processing' };
    },

    settle,
  };
}
