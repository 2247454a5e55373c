import { useEffect, useState } from 'preact/hooks';
import { call, formatNaira, formatUnits, get, type Schemas } from '../api.ts';
import { AccountsOnly } from '../layout.tsx';
import { AutoTopUp } from './auto-top-up.tsx';
import { useQuote } from '../quote.ts';
import { useSession } from '../session.tsx';
import { ErrorText, Field, Form, Notice, Page, useAction } from '../ui.tsx';

/** The price follows the units as they are typed (GET /topup/quote, debounced); Enter asks at once. */
export function TopUp() {
  const [units, setUnits] = useState('500');
  const { quote, error, pending, priceNow } = useQuote(units);
  const action = useAction();
  const paying = useAction();
  const price = (e: Event) => {
    e.preventDefault();
    action.setError(null);
    priceNow();
  };
  // A field the form's own checks refused (empty, not a number) stays marked until it is changed.
  const typed = (v: string) => {
    action.setError(null);
    setUnits(v);
  };
  const pay = () =>
    void paying.run(async () => {
      const r = await call<Schemas['TopupInitialization']>('POST', '/topup/initialize', { form: { units } });
      // The processor's checkout page brings the payer back to /portal/top-up/return.
      location.assign(r.data.authorization_url);
    });
  return (
    <AccountsOnly>
      <Page title="Top up">
        <Form action={action} onSubmit={price} aria-label="Price a top-up">
          <Field label="Units" name="units" type="number" min="100" step="100" inputMode="numeric" value={units} onInput={typed} required hint="A multiple of 100; the price follows as you type" />
          <ErrorText error={action.error ?? error} />
          <p class="hint" role="status" aria-live="polite">
            {pending ? 'Pricing…' : ''}
          </p>
        </Form>
        {quote ? (
          <div class="quote">
            <table>
              <caption>Price of {formatUnits(quote.units)}</caption>
              <tbody>
                <tr><th scope="row">Base ({formatNaira(quote.unit_cost)} a unit)</th><td>{formatNaira(quote.base_amount)}</td></tr>
                <tr><th scope="row">VAT</th><td>{formatNaira(quote.vat_amount)}</td></tr>
                <tr><th scope="row">Processor fee</th><td>{formatNaira(quote.service_charge)}</td></tr>
                <tr><th scope="row">Bonus units</th><td>{quote.bonus_units}</td></tr>
                <tr class="total"><th scope="row">Total to pay</th><td>{formatNaira(quote.total_amount)}</td></tr>
              </tbody>
            </table>
            <button type="button" onClick={pay} disabled={paying.busy}>
              Pay {formatNaira(quote.total_amount)}
            </button>
            <ErrorText error={paying.error} />
          </div>
        ) : null}
        <AutoTopUp />
      </Page>
    </AccountsOnly>
  );
}

type TopupRow = Schemas['Topup'];

/** Back from the checkout: waits for the credit to land (webhook or verify), without a reload by hand. */
export function TopUpReturn() {
  const { refresh, me } = useSession();
  const reference = new URLSearchParams(location.search).get('reference') ?? new URLSearchParams(location.search).get('trxref') ?? '';
  const [row, setRow] = useState<TopupRow | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let stop = false;
    let verified = false;
    const tick = async () => {
      try {
        const r = await get<TopupRow>(`/topups/${encodeURIComponent(reference)}`);
        setRow(r);
        if (r.status === 'credited') {
          await refresh();
          return;
        }
        // Only a pending payment can still turn into a credit; anything else is shown as it stands.
        if (r.status !== 'pending' && verified) return;
        if (!verified) {
          verified = true;
          // Asks the processor at once rather than waiting for its notification; either credits once.
          await call('POST', '/topup/verify', { form: { reference } }).catch(() => undefined);
        }
      } catch (e) {
        setError(e);
      }
      if (!stop) setTimeout(() => void tick(), 1500);
    };
    void tick();
    return () => {
      stop = true;
    };
  }, [reference]);
  return (
    <AccountsOnly>
      <Page title="Top-up payment">
        <ErrorText error={error} />
        <Notice>{row?.status === 'credited' ? `Credited: ${formatUnits(row.units + row.bonus_units)}. New balance: ${formatUnits(me.organisation?.units ?? 0)}.` : null}</Notice>
        {row?.status === 'credited' ? null : (
          <p role="status" aria-live="polite">
            {row && row.status !== 'pending' ? `The payment of ${reference} is ${row.status.replace('_', ' ')}: nothing was credited.` : `Waiting for the payment of ${reference || 'your top-up'} to be confirmed…`}
          </p>
        )}
        <p>
          <a href="/portal">Back to the overview</a>
        </p>
      </Page>
    </AccountsOnly>
  );
}
