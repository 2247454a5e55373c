import { randomBytes } from 'node:crypto';
import { isWebhookMode, type WebhookEvent, type WebhookMode } from './webhooks.ts';

/** The simulator's transactions: an in-memory store and the state changes a payer or a test can cause. */

/** `reversed`: paid, then the money went back (a processed full refund or a chargeback). */
export type TxStatus = 'abandoned' | 'success' | 'failed' | 'reversed';

/**
 * The test cards a payer may pay with at the checkout (README.md, "Cards"). A card's authorization is
 * what a later charge_authorization charges: `laterDeclined` cards give a reusable one whose charges
 * are all declined (a card that was stopped after the first payment).
 */
export const TEST_CARDS = {
  '4084084084084081': { brand: 'visa', bin: '408408', bank: 'TEST BANK', reusable: true, laterDeclined: false, label: 'Visa, later charges succeed' },
  '4084080000000409': { brand: 'visa', bin: '408408', bank: 'TEST BANK', reusable: true, laterDeclined: true, label: 'Visa, later charges declined' },
  '5060666666666666666': { brand: 'verve', bin: '506066', bank: 'TEST BANK', reusable: false, laterDeclined: false, label: 'Verve, not reusable' },
} as const;
export type TestCard = keyof typeof TEST_CARDS;
export const DEFAULT_CARD: TestCard = '4084084084084081';

export function isTestCard(v: unknown): v is TestCard {
  return typeof v === 'string' && Object.hasOwn(TEST_CARDS, v);
}

/** A card authorization as Paystack keeps it: the code a merchant charges again, bound to the customer's e-mail. */
export type SimAuthorization = { code: string; card: TestCard; email: string; signature: string };

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
  /** The card paid with (checkout) or charged (charge_authorization); null until then. */
  authorization: SimAuthorization | null;
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

/** The `authorization` object of a charge, shaped like Paystack's (https://paystack.com/docs/payments/recurring-charges/). */
export function authorizationData(a: SimAuthorization): Record<string, unknown> {
  const card = TEST_CARDS[a.card];
  return {
    authorization_code: a.code,
    bin: card.bin,
    last4: a.card.slice(-4),
    exp_month: '12',
    exp_year: '2030',
    channel: 'card',
    card_type: card.brand,
    bank: card.bank,
    country_code: 'NG',
    brand: card.brand,
    reusable: card.reusable,
    signature: a.signature,
    account_name: null,
  };
}

/** The `data` of a verify answer, shaped like Paystack's. */
export function transactionData(tx: SimTransaction): Record<string, unknown> {
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
    authorization: tx.authorization ? authorizationData(tx.authorization) : {},
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
  const authorizations = new Map<string, SimAuthorization>();
  let nextId = 4_000_000_001;
  let nextCustomerId = 90_000_001;

  /** Records an unpaid transaction; the caller has checked the input and that the reference is new. */
  function create(input: NewTransaction): SimTransaction {
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
      authorization: null,
    };
    byReference.set(tx.reference, tx);
    byAccessCode.set(tx.accessCode, tx);
    byId.set(tx.id, tx);
    return tx;
  }

  function settle(tx: SimTransaction, override: WebhookMode | undefined, gatewayResponse: string): Outcome {
    tx.status = 'success';
    tx.paidAt = new Date().toISOString();
    tx.fees = paystackLocalFee(tx.amount);
    tx.gatewayResponse = gatewayResponse;
    const data = transactionData(tx);
    // Paystack's charge.success event does not carry the verify-only fields.
    delete data['requested_amount'];
    delete data['transaction_date'];
    o.dispatch({ event: 'charge.success', data: { ...data, reference: tx.reference } }, override ?? tx.webhookMode ?? o.defaultMode);
    return { ok: true, tx, message: 'Charge successful' };
  }

  return {
    byReference: (reference: string) => byReference.get(reference),
    byAccessCode: (accessCode: string) => byAccessCode.get(accessCode),
    byId: (id: number) => byId.get(id),

    create,

    byAuthorization: (code: string) => authorizations.get(code),

    /** The payer pays with `card` (the default test card when not named): a new authorization for it and the payer's e-mail. */
    pay(tx: SimTransaction, override: WebhookMode | undefined, card: TestCard = DEFAULT_CARD): Outcome {
      if (tx.status === 'success') return { ok: true, tx, message: 'Transaction already paid' };
      if (tx.status === 'failed' || tx.status === 'reversed' || tx.cancelled) return { ok: false, httpStatus: 400, message: 'Transaction is no longer payable' };
      const code = `AUTH_${randomBytes(5).toString('hex')}`;
      tx.authorization = { code, card, email: tx.email, signature: `SIG_${randomBytes(10).toString('hex')}` };
      authorizations.set(code, tx.authorization);
      return settle(tx, override, 'Successful');
    },

    /**
     * A charge of a saved authorization (POST /transaction/charge_authorization): a new transaction
     * that is decided at once, `success` with its charge.success event, or `failed` (gateway response
     * `Declined`, no event) for a card whose later charges are declined. The caller has checked the input.
     */
    chargeAuthorization(input: NewTransaction & { authorization: SimAuthorization }): SimTransaction {
      const tx = create(input);
      tx.authorization = input.authorization;
      if (TEST_CARDS[input.authorization.card].laterDeclined) {
        tx.status = 'failed';
        tx.gatewayResponse = 'Declined';
        return tx;
      }
      settle(tx, undefined, 'Approved');
      return tx;
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
