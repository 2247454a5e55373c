import { useState } from 'preact/hooks';
import { ApiError, call, passwordSignIn as signIn, type Schemas } from '../api.ts';
import { ErrorText, Field, Form, Notice, useAction } from '../ui.tsx';

/** `username`: filled in when known (just made by accepting an invitation). */
type Props = { reason?: string | undefined; username?: string | undefined; mustChange: boolean; onSignedIn(): Promise<void> };

export function SignIn({ reason, username: known, mustChange, onSignedIn }: Props) {
  const [mode, setMode] = useState<'sign-in' | 'forgot' | 'change'>(mustChange ? 'change' : 'sign-in');
  const [username, setUsername] = useState(known ?? '');
  const [password, setPassword] = useState('');
  const [otp, setOtp] = useState('');
  const [askOtp, setAskOtp] = useState(false);
  const [newPassword, setNewPassword] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const action = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      try {
        const r = await signIn(username, password, otp);
        if (r.requirePasswordChange) {
          setMode('change');
          return;
        }
        await onSignedIn();
      } catch (err) {
        if (err instanceof ApiError && err.code === 'mfa_required') setAskOtp(true);
        throw err;
      }
    });
  };

  const change = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await call('POST', '/change-password', { json: { current_password: password, new_password: newPassword } });
      // A changed password ends every token, this session's too: sign in again with the new one.
      setPassword(newPassword);
      if (username) {
        await signIn(username, newPassword, '');
        await onSignedIn();
      } else {
        setMode('sign-in');
      }
    });
  };

  const forgot = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await call<Schemas['Detail']>('POST', '/forgot-password', { json: { username } }, { quiet401: true });
      setSent(r.data.detail);
    });
  };

  return (
    <main id="main" class="sign-in">
      <h1>idverify portal</h1>
      <Notice>{reason}</Notice>
      {mode === 'sign-in' ? (
        <Form action={action} onSubmit={submit} aria-label="Sign in">
          <Field label="Username" name="username" value={username} onInput={setUsername} required autocomplete="username" />
          <Field label="Password" name="password" type="password" value={password} onInput={setPassword} required autocomplete="current-password" />
          {askOtp ? <Field label="One-time code" name="otp" value={otp} onInput={setOtp} autocomplete="one-time-code" inputMode="numeric" hint="From your authenticator app, or one of your recovery codes" /> : null}
          <ErrorText error={action.error} />
          <button type="submit" disabled={action.busy}>
            Sign in
          </button>
          <p>
            <button type="button" class="link" onClick={() => { action.setError(null); setMode('forgot'); }}>
              Forgot your password?
            </button>
          </p>
        </Form>
      ) : null}
      {mode === 'change' ? (
        <Form action={action} onSubmit={change} aria-label="Change your password">
          <h2>Choose a new password</h2>
          <p>Your password was set by someone else. Choose your own before you go on.</p>
          <Field label="Current password" name="current_password" type="password" value={password} onInput={setPassword} required autocomplete="current-password" />
          <Field label="New password" name="new_password" type="password" value={newPassword} onInput={setNewPassword} required autocomplete="new-password" hint="At least 8 characters, not containing your username" />
          <ErrorText error={action.error} />
          <button type="submit" disabled={action.busy}>
            Change password
          </button>
        </Form>
      ) : null}
      {mode === 'forgot' ? (
        <Form action={action} onSubmit={forgot} aria-label="Reset your password">
          <h2>Reset your password</h2>
          <Field label="Username" name="username" value={username} onInput={setUsername} required autocomplete="username" />
          <ErrorText error={action.error} />
          <Notice>{sent}</Notice>
          <button type="submit" disabled={action.busy}>
            Send reset link
          </button>
          <p>
            <button type="button" class="link" onClick={() => setMode('sign-in')}>
              Back to sign in
            </button>
          </p>
        </Form>
      ) : null}
    </main>
  );
}
