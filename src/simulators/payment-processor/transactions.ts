import { randomBytes } from 'node:crypto';
import { isWebhookMode, type WebhookEvent, type WebhookMode } from './webhooks.ts';

/** The simulator's transactions: an in-memory store and the state changes a payer or a test can cause. */

/** `reversed`: paid, then the money went back (a processed full refund or a chargeback). */
export type TxStatus = 'abandoned' | 'success' | 'failed' | 'reversed';

export type SimTransaction = {
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

export type Outcome = { ok: true; tx: SimTransaction; message: string } | { ok: false; httpStatus: number; message: string };

export type NewTransaction = {
  reference: string;
  email: string;
  amount: number;
  currency: string;
  metadata: unknown;
  callbackUrl: string | null;
  webhookMode: WebhookMode | undefined;
};

// Paystack's local fee schedule: 1.5 % + NGN 100, the NGN 100 waived under NGN 2,500, capped at NGN 2,000.
// Kept separate from the service's pricing rules on purpose: the simulator plays the processor.
function paystackLocalFee(amountKobo: number): number {
  const percent = Math.ceil((amountKobo * 150) / 10_000);
  const flat = amountKobo < 250_000 ? 0 : 10_000;
  return Math.min(200_000, percent + flat);
}

export function parseAmount(v: unknown): number | null {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && /^\d{1,15}$/.test(v)) return Number(v);
  return null;
}

/** Paystack accepts metadata as an object or as a JSON string; the mode override may sit in either. */
export function webhookModeOf(metadata: unknown): { mode: WebhookMode | undefined; invalid: boolean } {
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

/** The `data` of a verify answer, shaped like Paystack's. */
export function transactionData(tx: SimTransaction): Record<string, unknown> {
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

export type TransactionStore = ReturnType<typeof createTransactionStore>;

export function createTransactionStore(o: { dispatch: (event: WebhookEvent, mode: WebhookMode) => void; defaultMode: WebhookMode }) {
  const byReference = new Map<string, SimTransaction>();
  const byAccessCode = new Map<string, SimTransaction>();
  const byId = new Map<number, SimTransaction>();
  const customers = new Map<string, { id: number; code: string }>();
  let nextId = 4_000_000_001;
  let nextCustomerId = 90_000_001;

  return {
    byReference: (reference: string) => byReference.get(reference),
    byAccessCode: (accessCode: string) => byAccessCode.get(accessCode),
    byId: (id: number) => byId.get(id),

    /** Records an unpaid transaction; the caller has checked the input and that the reference is new. */
    create(input: NewTransaction): SimTransaction {
      let customer = customers.get(input.email.toLowerCase());
      if (!customer) {
        customer = { id: nextCustomerId++, code: `CUS_${randomBytes(8).toString('hex')}` };
        customers.set(input.email.toLowerCase(), customer);
      }
      const tx: SimTransaction = {
        id: nextId++,
        reference: input.reference,
        accessCode: randomBytes(8).toString('hex').slice(0, 15),
        email: input.email,
        customerId: customer.id,
        customerCode: customer.code,
        requestedAmount: input.amount,
        amount: input.amount,
        currency: input.currency,
        metadata: input.metadata,
        callbackUrl: input.callbackUrl,
        webhookMode: input.webhookMode,
        status: 'abandoned',
        cancelled: false,
        gatewayResponse: 'The transaction was not completed',
        createdAt: new Date().toISOString(),
        paidAt: null,
        fees: null,
      };
      byReference.set(tx.reference, tx);
      byAccessCode.set(tx.accessCode, tx);
      byId.set(tx.id, tx);
      return tx;
    },

    pay(tx: SimTransaction, override: WebhookMode | undefined): Outcome {
      if (tx.status === 'success') return { ok: true, tx, message: 'Transaction already paid' };
      if (tx.status === 'failed' || tx.status === 'reversed' || tx.cancelled) return { ok: false, httpStatus: 400, message: 'Transaction is no longer payable' };
      tx.status = 'success';
      tx.paidAt = new Date().toISOString();
      tx.fees = paystackLocalFee(tx.amount);
      tx.gatewayResponse = 'Successful';
      const data = transactionData(tx);
      // Paystack's charge.success event does not carry the verify-only fields.
      delete data['requested_amount'];
      delete data['transaction_date'];
      o.dispatch({ event: 'charge.success', data: { ...data, reference: tx.reference } }, override ?? tx.webhookMode ?? o.defaultMode);
      return { ok: true, tx, message: 'Charge successful' };
    },

    cancel(tx: SimTransaction): Outcome {
      if (tx.status === 'success') return { ok: false, httpStatus: 400, message: 'Transaction already paid' };
      if (tx.status === 'abandoned') {
        tx.cancelled = true;
        tx.gatewayResponse = 'Customer cancelled the transaction';
      }
      return { ok: true, tx, message: 'Transaction cancelled' };
    },

    fail(tx: SimTransaction): Outcome {
      if (tx.status === 'success' || tx.status === 'reversed') return { ok: false, httpStatus: 400, message: 'Transaction already paid' };
      tx.status = 'failed';
      tx.gatewayResponse = 'Declined';
      return { ok: true, tx, message: 'Transaction failed' };
    },

    /** A chargeback the payer won: verify reports `reversed` and a `charge.dispute.resolve` event is sent. */
    reverse(tx: SimTransaction): Outcome {
      if (tx.status !== 'success') return { ok: false, httpStatus: 400, message: 'Only a successful transaction can be reversed' };
      tx.status = 'reversed';
      tx.gatewayResponse = 'Reversed';
      const now = new Date().toISOString();
      o.dispatch(
        {
          event: 'charge.dispute.resolve',
          data: {
            id: tx.id + 7_000_000,
            refund_amount: tx.amount,
            currency: tx.currency,
            status: 'resolved',
            resolution: 'declined',
            domain: 'test',
            transaction: { id: tx.id, reference: tx.reference, amount: tx.amount, currency: tx.currency, status: 'reversed' },
            created_at: now,
            resolvedAt: now,
          },
        },
        tx.webhookMode ?? o.defaultMode,
      );
      return { ok: true, tx, message: 'Transaction reversed' };
    },

    /** Changes what verify and a later webhook report, as a partial or tampered payment would. */
    tamper(tx: SimTransaction, amount: number): Outcome {
      tx.amount = amount;
      if (tx.status === 'success') tx.fees = paystackLocalFee(amount);
      return { ok: true, tx, message: 'Amount changed' };
    },
  };
}
