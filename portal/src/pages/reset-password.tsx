import { useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { ErrorText, Field, Form, Notice, useAction } from '../ui.tsx';

/** The page a reset e-mail links to (PASSWORD_RESET_URL = <portal>/portal/reset-password?token={token}). */
export function ResetPassword() {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const [password, setPassword] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await call<Schemas['Detail']>('POST', '/reset-password', { json: { token, new_password: password } }, { quiet401: true });
      // The token has done its work: keep it out of the history.
      history.replaceState(null, '', '/portal/reset-password');
      setDone(r.data.detail);
    });
  };
  return (
    <main id="main" class="sign-in">
      <h1>Set a new password</h1>
      {done ? (
        <>
          <Notice>{done}</Notice>
          <p>
            <a href="/portal">Sign in</a>
          </p>
        </>
      ) : (
        <Form action={action} onSubmit={submit} aria-label="Set a new password">
          <Field label="New password" name="new_password" type="password" value={password} onInput={setPassword} required autocomplete="new-password" />
          <ErrorText error={action.error} />
          <button type="submit" disabled={action.busy}>
            Set password
          </button>
        </Form>
      )}
    </main>
  );
}
