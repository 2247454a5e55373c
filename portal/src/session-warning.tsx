import { useEffect, useId, useState } from 'preact/hooks';
import { ApiError, onSessionExpiry, passwordSignIn, sessionEnded, sessionExpiry } from './api.ts';
import { useSession } from './session.tsx';
import { ErrorText, Field, Form, Modal, useAction } from './ui.tsx';

/** How long before the end the warning comes: enough to finish a sentence and type a password. */
export const WARN_BEFORE_MS = 5 * 60_000;

const clock = (at: number) => new Date(at).toLocaleTimeString('en-GB', { timeZone: 'Africa/Lagos', hour: '2-digit', minute: '2-digit' });

/**
 * Five minutes before the session's token expires, a dialog says so. The API has no refresh: a token
 * lives its 60 minutes and no longer, so staying signed in is signing in again, here, with the
 * password (and a code when two-factor sign-in is on), while the page and whatever was typed stay as
 * they are. At the end the portal signs out by itself instead of failing at the next click.
 */
export function SessionWarning() {
  const { me, signOut } = useSession();
  const [endsAt, setEndsAt] = useState(sessionExpiry());
  const [warning, setWarning] = useState(false);
  const [renewed, setRenewed] = useState('');
  useEffect(() => onSessionExpiry(setEndsAt), []);
  useEffect(() => {
    setWarning(false);
    if (endsAt === null) return;
    const left = endsAt - Date.now();
    const warn = setTimeout(() => setWarning(true), Math.max(0, left - WARN_BEFORE_MS));
    const over = setTimeout(sessionEnded, Math.max(0, left));
    return () => {
      clearTimeout(warn);
      clearTimeout(over);
    };
  }, [endsAt]);
  return (
    <>
      {/* Says where the renewed session stands once the dialog is gone (read out, not shown). */}
      <p class="visually-hidden" aria-live="polite">
        {renewed}
      </p>
      {warning && endsAt !== null && me.username ? (
        <Warning username={me.username} endsAt={endsAt} onRenewed={(until) => setRenewed(`You are signed in until ${clock(until)}.`)} onDismiss={() => setWarning(false)} onSignOut={() => void signOut().catch(() => undefined)} />
      ) : null}
    </>
  );
}

function Warning({ username, endsAt, onRenewed, onDismiss, onSignOut }: { username: string; endsAt: number; onRenewed(until: number): void; onDismiss(): void; onSignOut(): void }) {
  const titleId = useId();
  const textId = useId();
  const [password, setPassword] = useState('');
  const [otp, setOtp] = useState('');
  const [askOtp, setAskOtp] = useState(false);
  const action = useAction();
  const minutes = Math.max(1, Math.round((endsAt - Date.now()) / 60_000));
  const renew = () =>
    void action.run(async () => {
      try {
        await passwordSignIn(username, password, otp);
      } catch (err) {
        if (err instanceof ApiError && err.code === 'mfa_required') setAskOtp(true);
        throw err;
      }
      const next = sessionExpiry();
      if (next !== null) onRenewed(next);
    });
  return (
    <Modal labelledBy={titleId} describedBy={textId} onCancel={onDismiss} class="session-warning">
      <h2 id={titleId}>Your session ends soon</h2>
      <p id={textId}>
        Your session ends at {clock(endsAt)} (in about {minutes} {minutes === 1 ? 'minute' : 'minutes'}). To keep working, sign in again with your password: this page stays as it is.
      </p>
      <Form action={action} onSubmit={renew} aria-label="Stay signed in">
        <Field label="Password" name="renew_password" type="password" value={password} onInput={setPassword} required autocomplete="current-password" />
        {askOtp ? <Field label="One-time code" name="renew_otp" value={otp} onInput={setOtp} autocomplete="one-time-code" inputMode="numeric" hint="From your authenticator app, or one of your recovery codes" /> : null}
        <ErrorText error={action.error} />
        <p class="actions">
          <button type="submit" disabled={action.busy}>
            Stay signed in
          </button>
          <button type="button" class="secondary" onClick={onSignOut}>
            Sign out now
          </button>
          <button type="button" class="secondary" onClick={onDismiss}>
            Not now
          </button>
        </p>
      </Form>
    </Modal>
  );
}
