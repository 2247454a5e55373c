import { useEffect, useState } from 'preact/hooks';
import { call, get, type Schemas } from '../api.ts';
import { AdminOnly } from '../layout.tsx';
import { ErrorText, Field, Form, Notice, Page, useAction, useLoad } from '../ui.tsx';

type Settings = Schemas['OrganisationSettings'];

/** The alert addresses as typed: separated by commas, spaces or new lines. */
const addresses = (text: string) => text.split(/[\s,;]+/).filter(Boolean);

export function Settings() {
  const loaded = useLoad(() => get<Settings>('/me/organisation'), []);
  const [consent, setConsent] = useState(false);
  const [mfa, setMfa] = useState(false);
  const [line, setLine] = useState('');
  const [alertEmails, setAlertEmails] = useState('');
  const [threshold, setThreshold] = useState('');
  const [address, setAddress] = useState('');
  const [tin, setTin] = useState('');
  const [contact, setContact] = useState('');
  const [liveness, setLiveness] = useState(false);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  useEffect(() => {
    if (!loaded.data) return;
    setConsent(loaded.data.require_consent);
    setMfa(loaded.data.require_mfa ?? false);
    setLine(loaded.data.low_balance_units == null ? '' : String(loaded.data.low_balance_units));
    setAlertEmails((loaded.data.alert_emails ?? []).join(', '));
    setThreshold(loaded.data.face_match_threshold == null ? '' : String(loaded.data.face_match_threshold));
    setAddress(loaded.data.address ?? '');
    setTin(loaded.data.tin ?? '');
    setContact(loaded.data.support_contact ?? '');
    setLiveness(loaded.data.require_liveness ?? false);
  }, [loaded.data]);
  const has = (key: keyof Settings) => loaded.data !== null && key in loaded.data;
  const save = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void action.run(async () => {
      const patch: Record<string, unknown> = { require_consent: consent };
      if (has('require_mfa')) patch.require_mfa = mfa;
      if (has('low_balance_units')) patch.low_balance_units = line.trim() === '' ? null : Number(line);
      if (has('alert_emails')) patch.alert_emails = addresses(alertEmails);
      if (has('face_match_threshold') && threshold.trim() !== '') patch.face_match_threshold = Number(threshold);
      if (has('address')) patch.address = address.trim() === '' ? null : address;
      if (has('tin')) patch.tin = tin.trim() === '' ? null : tin;
      if (has('support_contact')) patch.support_contact = contact.trim() === '' ? null : contact;
      if (has('require_liveness')) patch.require_liveness = liveness;
      await call('PATCH', '/me/organisation', { json: patch });
      setSaved(true);
      loaded.reload();
    });
  };
  return (
    <AdminOnly>
      <Page title="Settings">
        <ErrorText error={loaded.error} />
        {loaded.data ? (
          <Form action={action} onSubmit={save} aria-label="Organisation settings">
            <div class="check">
              <input id="f-require-consent" type="checkbox" checked={consent} onChange={(e) => setConsent((e.target as HTMLInputElement).checked)} />
              <label for="f-require-consent">Require consent on every live verification</label>
            </div>
            {has('require_mfa') ? (
              <div class="check">
                <input id="f-require-mfa" type="checkbox" checked={mfa} onChange={(e) => setMfa((e.target as HTMLInputElement).checked)} />
                <label for="f-require-mfa">Require two-factor sign-in for administrators</label>
              </div>
            ) : null}
            {has('require_liveness') ? (
              <div class="field">
                <div class="check">
                  <input id="f-require-liveness" type="checkbox" checked={liveness} aria-describedby="f-require-liveness-hint" onChange={(e) => setLiveness((e.target as HTMLInputElement).checked)} />
                  <label for="f-require-liveness">Require a liveness check with every face match</label>
                </div>
                <small id="f-require-liveness-hint" class="hint">
                  The person turns their head on request in front of their camera; a face match with a plain selfie is refused (liveness_required), on verification links too
                </small>
              </div>
            ) : null}
            {has('low_balance_units') ? (
              <Field label="Low-balance alert (units)" name="low_balance_units" type="number" min="1" inputMode="numeric" value={line} onInput={setLine} hint="An e-mail when the balance falls below it; empty turns it off" />
            ) : null}
            {has('alert_emails') ? (
              <Field
                label="Alert recipients"
                name="alert_emails"
                value={alertEmails}
                onInput={setAlertEmails}
                autocomplete="off"
                hint="E-mail addresses that get the low-balance alert, separated by commas (at most 10); empty: the administrators"
              />
            ) : null}
            {has('face_match_threshold') ? (
              <Field
                label="Face match threshold (1-100)"
                name="face_match_threshold"
                type="number"
                min="1"
                inputMode="numeric"
                value={threshold}
                onInput={setThreshold}
                hint="A selfie matches at this confidence or more (default 75). Higher refuses more of the right people; lower accepts more of the wrong ones"
              />
            ) : null}
            {has('address') ? <Field label="Postal address (on invoices)" name="address" value={address} onInput={setAddress} autocomplete="street-address" hint="On one line, commas between its parts; empty: not on file" /> : null}
            {has('tin') ? <Field label="Tax identification number (on invoices)" name="tin" value={tin} onInput={setTin} hint="8 to 20 digits, hyphens allowed (e.g. 12345678-0001); empty: not on file" /> : null}
            {has('support_contact') ? (
              <Field
                label="Support contact (on verification link pages)"
                name="support_contact"
                value={contact}
                onInput={setContact}
                autocomplete="off"
                hint="One sentence with an e-mail address, a phone number or a web address, shown to a person when a link cannot go on (at most 200 characters), e.g. Call 0803 123 4567 or write to help@example.com; empty: none"
              />
            ) : null}
            <ErrorText error={action.error} />
            <Notice>{saved ? 'Settings saved.' : null}</Notice>
            <button type="submit" disabled={action.busy}>
              Save settings
            </button>
          </Form>
        ) : null}
      </Page>
    </AdminOnly>
  );
}
