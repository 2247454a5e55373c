import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { ErrorText, Field, FieldError, Form, useAction } from '../ui.tsx';

/**
 * The page an invitation e-mail links to (`/portal/accept-invitation#token=...`). The token rides in the
 * fragment, which the browser never sends to a server (so no access log or proxy sees it); it is read
 * once and removed from the address bar and the history before anything else happens.
 */
function takeToken(): string {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
  if (location.hash) history.replaceState(null, '', '/portal/accept-invitation');
  return token;
}

type Preview = Schemas['InvitationPreview'];

/** The roles as the team page names them. */
const ROLE_LABELS: Record<string, string> = { member: 'team member', finance: 'finance officer', org_admin: 'administrator' };

export function AcceptInvitation({ onAccepted }: { onAccepted(username: string): void }) {
  const [token] = useState(takeToken);
  // What the invitation is for, read before anything is asked: a used or expired one is said so at once.
  const [preview, setPreview] = useState<Preview | null>(null);
  const reading = useAction();
  useEffect(() => {
    if (token) void reading.run(async () => setPreview((await call<Preview>('POST', '/invitations/preview', { json: { token } }, { quiet401: true })).data));
  }, [token]);
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (password !== again) {
      action.setError(new FieldError('password_again', 'The two passwords differ: type the same password twice.'));
      return;
    }
    void action.run(async () => {
      const r = await call<Schemas['AcceptedInvitation']>('POST', '/invitations/accept', { json: { token, password } }, { quiet401: true });
      // The invitation is spent: on to the sign-in page, at its own address.
      history.replaceState(null, '', '/portal');
      onAccepted(r.data.username);
    });
  };
  return (
    <main id="main" class="sign-in">
      <h1>Accept your invitation</h1>
      {token && reading.error ? <ErrorText error={reading.error} /> : null}
      {token && !preview && !reading.error ? <p class="loading">Reading your invitation…</p> : null}
      {token && preview ? (
        <Form action={action} onSubmit={submit} aria-label="Choose your password">
          <dl class="invitation">
            <dt>Organisation</dt>
            <dd>{preview.organisation}</dd>
            <dt>Role</dt>
            <dd>{ROLE_LABELS[preview.role] ?? preview.role}</dd>
            <dt>Username</dt>
            <dd>{preview.username}</dd>
          </dl>
          <p>
            You are invited to join {preview.organisation} as {ROLE_LABELS[preview.role] ?? preview.role}. Choose the password you will sign in with.
          </p>
          <Field label="Password" name="password" type="password" value={password} onInput={setPassword} required autocomplete="new-password" />
          <Field label="Password again" name="password_again" type="password" value={again} onInput={setAgain} required autocomplete="new-password" />
          <ErrorText error={action.error} />
          <button type="submit" disabled={action.busy}>
            Create my account
          </button>
        </Form>
      ) : null}
      {!token ? (
        <p class="error" role="alert">
          This link carries no invitation. Open the link of your invitation e-mail again, or ask an administrator for a new one.
        </p>
      ) : null}
      <p>
        <a href="/portal">Sign in</a>
      </p>
    </main>
  );
}
