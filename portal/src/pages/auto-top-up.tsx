import { useEffect, useState } from 'preact/hooks';
import { call, formatNaira, formatUnits, get, type Schemas } from '../api.ts';
import { useQuote } from '../quote.ts';
import { ErrorText, Field, Notice, useAction, useLoad, when } from '../ui.tsx';

type AutoSettings = Schemas['AutoTopupSettings'];

/**
 * The Top up page's automatic top-up (GET and PUT /settings/auto-topup): administrators and finance
 * officers, who re-enter their password to save. What each charge asks of the card (base + VAT +
 * processor fee) is the server's quote for the units, asked as they are typed.
 */
export function AutoTopUp() {
  const loaded = useLoad(() => get<AutoSettings>('/settings/auto-topup'), []);
  const [enabled, setEnabled] = useState(false);
  const [below, setBelow] = useState('100');
  const [units, setUnits] = useState('1000');
  const [perDay, setPerDay] = useState('1');
  const [password, setPassword] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const action = useAction();
  const s = loaded.data;
  useEffect(() => {
    if (!s) return;
    setEnabled(s.enabled);
    if (s.below_units !== null) setBelow(String(s.below_units));
    if (s.units !== null) setUnits(String(s.units));
    if (s.max_per_day !== null) setPerDay(String(s.max_per_day));
  }, [s]);
  const save = (e: Event) => {
    e.preventDefault();
    setSaved(null);
    void action.run(async () => {
      const body = { enabled, below_units: Number(below), units: Number(units), max_per_day: Number(perDay), password };
      const r = await call<AutoSettings>('PUT', '/settings/auto-topup', { json: body });
      setPassword('');
      setSaved(r.data.enabled ? `Automatic top-up is on: ${formatUnits(r.data.units ?? 0)} when the balance falls below ${formatUnits(r.data.below_units ?? 0)}.` : 'Automatic top-up is off.');
      loaded.reload();
    });
  };
  const priced = useQuote(units);
  const q = priced.quote;
  const worth = q
    ? `Each charge: ${formatNaira(q.total_amount)} to the card for ${formatUnits(q.units)} (${formatNaira(q.base_amount)} at ${formatNaira(q.unit_cost)} a unit + VAT ${formatNaira(q.vat_amount)} + processor fee ${formatNaira(q.service_charge)})`
    : priced.error
      ? `No price: ${priced.error instanceof Error ? priced.error.message : String(priced.error)}`
      : '';
  return (
    <section class="auto-top-up" aria-labelledby="auto-top-up-title">
      <h2 id="auto-top-up-title">Automatic top-up</h2>
      <ErrorText error={loaded.error} />
      {s ? (
        <>
          <p data-testid="saved-card">
            {s.card
              ? `Saved card: ${s.card.card_type} ending ${s.card.last4}, from the top-up ${s.card.from_reference} (${when(s.card.saved_at)}).${s.card.declined_at ? ` It was declined on ${when(s.card.declined_at)}: top up with another card first.` : ''}`
              : 'No saved card yet: top up once by card above; the card you pay with is kept for automatic top-ups.'}
          </p>
          {s.turned_off ? <p class="error">Automatic top-up was turned off on {when(s.turned_off.at)}: the card was declined.</p> : null}
          <form onSubmit={save} aria-label="Automatic top-up">
            <div class="check">
              <input id="f-auto-enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)} />
              <label for="f-auto-enabled">Top up automatically with the saved card</label>
            </div>
            <Field label="When the balance falls below (units)" name="auto_below" type="number" min="1" inputMode="numeric" value={below} onInput={setBelow} required />
            <Field label="Units to buy each time" name="auto_units" type="number" min="100" step="100" inputMode="numeric" value={units} onInput={setUnits} required hint="A multiple of 100" />
            <p class="hint" aria-live="polite" data-testid="auto-units-naira">
              {worth}
            </p>
            <Field label="At most, charges a day" name="auto_max" type="number" min="1" inputMode="numeric" value={perDay} onInput={setPerDay} required hint={`From 1 to 10 (Lagos days); ${s.charges_today} today so far`} />
            <Field label="Your password" name="auto_password" type="password" autocomplete="current-password" value={password} onInput={setPassword} required hint="Automatic top-up spends money without asking again: confirm it is you" />
            <ErrorText error={action.error} />
            {saved ? <Notice>{saved}</Notice> : null}
            <button type="submit" disabled={action.busy}>
              Save automatic top-up
            </button>
          </form>
          {s.recent_charges.length > 0 ? (
            <table class="list" tabIndex={0} aria-label="Automatic top-ups">
              <caption>Latest automatic top-ups</caption>
              <thead>
                <tr><th scope="col">When</th><th scope="col">State</th><th scope="col">Units</th><th scope="col">Charged</th><th scope="col">Card</th><th scope="col">Reference</th><th scope="col">Why</th></tr>
              </thead>
              <tbody>
                {s.recent_charges.map((c) => (
                  <tr key={`${c.created_at}-${c.reference ?? ''}`}>
                    <td>{when(c.created_at)}</td>
                    <td>{c.status}</td>
                    <td>{formatUnits(c.units)}</td>
                    <td>{c.total_amount_kobo === null ? '' : formatNaira(c.total_amount_kobo)}</td>
                    <td>{c.card ?? ''}</td>
                    <td>{c.reference ? <code>{c.reference}</code> : ''}</td>
                    <td>{c.detail ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
