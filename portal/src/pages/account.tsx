import QRCode from 'qrcode';
import { useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { ROLE_NAMES, useSession } from '../session.tsx';
import { ErrorText, Field, Form, Page, useAction } from '../ui.tsx';

export function Account() {
  const { me, signOut } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const pw = useAction();
  const change = (e: Event) => {
    e.preventDefault();
    void pw.run(async () => {
      await call('POST', '/change-password', { json: { current_password: current, new_password: next } });
      // A new password ends every session of this user, this one included.
      await signOut('Your password was changed. Sign in with the new one.');
    });
  };
  return (
    <Page title="Account">
      <p>
        Signed in as <strong>{me.username}</strong> ({ROLE_NAMES[me.role]}).
      </p>
      <Form action={pw} onSubmit={change} aria-label="Change password">
        <h2>Change password</h2>
        <Field label="Current password" name="current_password" type="password" value={current} onInput={setCurrent} required autocomplete="current-password" />
        <Field label="New password" name="new_password" type="password" value={next} onInput={setNext} required autocomplete="new-password" hint="At least 8 characters, not containing your username" />
        <ErrorText error={pw.error} />
        <button type="submit" disabled={pw.busy}>
          Change password
        </button>
      </Form>
      <TwoFactor on={me.mfa_enabled === true} />
    </Page>
  );
}

/**
 * Enrolment: a secret and its QR code, then a code from the app turns it on and shows the recovery
 * codes once. Turning it on or off ends every session of this user, this one included, as a new
 * password does: the codes stay on screen until the user chooses to sign in again.
 */
function TwoFactor({ on }: { on: boolean }) {
  const { signOut } = useSession();
  const [enrolment, setEnrolment] = useState<{ secret: string; qr: string } | null>(null);
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const [offCode, setOffCode] = useState('');
  const [offPassword, setOffPassword] = useState('');
  const action = useAction();
  const start = () =>
    void action.run(async () => {
      const r = await call<Schemas['TotpEnrolment']>('POST', '/me/mfa/totp');
      setEnrolment({ secret: r.data.secret, qr: await QRCode.toDataURL(r.data.otpauth_uri, { margin: 1, width: 200 }) });
      setRecovery(null);
    });
  const confirm = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await call<Schemas['RecoveryCodes']>('POST', '/me/mfa/totp/confirm', { json: { code } });
      setRecovery(r.data.recovery_codes);
      setEnrolment(null);
      setCode('');
    });
  };
  const disable = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await call('DELETE', '/me/mfa/totp', { json: { code: offCode, current_password: offPassword } });
      await signOut('Two-factor sign-in is off. Sign in again with your password.');
    });
  };
  return (
    <section aria-labelledby="mfa-title">
      <h2 id="mfa-title">Two-factor sign-in</h2>
      {/* Once on, the state is said and the way to turn it off is offered; the set-up is not. */}
      <p class="mfa-state">
        Two-factor sign-in is <strong>{on || recovery ? 'on' : 'off'}</strong>.
      </p>
      <p>With two-factor sign-in on, you also enter a one-time code from an authenticator app when you sign in.</p>
      {on || recovery ? null : enrolment ? (
        <Form action={action} onSubmit={confirm} aria-label="Confirm two-factor sign-in">
          <img src={enrolment.qr} alt="QR code to scan with your authenticator app" width={200} height={200} />
          <p>
            Or type this key into the app: <code>{enrolment.secret}</code>
          </p>
          <Field label="Code from the app" name="code" value={code} onInput={setCode} required autocomplete="one-time-code" inputMode="numeric" />
          <ErrorText error={action.error} />
          <button type="submit" disabled={action.busy}>
            Turn on two-factor sign-in
          </button>
        </Form>
      ) : (
        <>
          <p>
            <button type="button" onClick={start} disabled={action.busy}>
              Set up two-factor sign-in
            </button>
          </p>
          <ErrorText error={action.error} />
        </>
      )}
      {recovery ? (
        <div class="notice" role="status">
          <p>Two-factor sign-in is on. Keep these recovery codes somewhere safe; each works once, and they are shown only now:</p>
          <ul class="codes">
            {recovery.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
          <p>Your sessions have ended, this one included. Once the codes are kept, sign in again with a code from the app.</p>
          <button type="button" onClick={() => void signOut('Two-factor sign-in is on. Sign in with your password and a code from the app.')}>
            Sign in again
          </button>
        </div>
      ) : null}
      {on ? (
        <Form action={action} onSubmit={disable} aria-label="Turn off two-factor sign-in">
          <Field label="Code to turn it off" name="off_code" value={offCode} onInput={setOffCode} required autocomplete="one-time-code" hint="A code from the app or a recovery code" />
          <Field label="Your password, to turn it off" name="off_password" type="password" value={offPassword} onInput={setOffPassword} required autocomplete="current-password" />
          <ErrorText error={action.error} />
          <button type="submit" class="secondary" disabled={action.busy}>
            Turn off two-factor sign-in
          </button>
        </Form>
      ) : null}
    </section>
  );
}
