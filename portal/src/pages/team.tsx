import { useState } from 'preact/hooks';
import { call, get } from '../api.ts';
import { AdminOnly } from '../layout.tsx';
import { ErrorText, Field, Notice, Page, Select, useAction, useLoad, when } from '../ui.tsx';

type Member = { id: number; username: string; email: string | null; role: 'org_admin' | 'member'; disabled: boolean; created_at: string };
const ROLES = [
  { value: 'member', label: 'Team member' },
  { value: 'org_admin', label: 'Administrator' },
];

export function Team() {
  const team = useLoad(() => get<{ data: Member[] }>('/team'), []);
  const [username, setUsername] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const [created, setCreated] = useState<{ username: string; temporary_password: string } | null>(null);
  const action = useAction();
  const add = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await call<Member & { temporary_password: string }>('POST', '/team', { json: { username, email, role } });
      setCreated({ username: r.data.username, temporary_password: r.data.temporary_password });
      setUsername('');
      setEmail('');
      team.reload();
    });
  };
  const change = (m: Member, patch: Partial<Pick<Member, 'role' | 'disabled'>>) =>
    void action.run(async () => {
      await call('PATCH', `/team/${m.id}`, { json: patch });
      team.reload();
    });
  return (
    <AdminOnly>
      <Page title="Team">
        <form onSubmit={add} aria-label="Add a user">
          <h2>Add a user</h2>
          <Field label="Username" name="username" value={username} onInput={setUsername} required autocomplete="off" />
          <Field label="E-mail" name="email" type="email" value={email} onInput={setEmail} required autocomplete="off" />
          <Select label="Role" name="role" value={role} onChange={setRole} options={ROLES} />
          <button type="submit" disabled={action.busy}>
            Add user
          </button>
        </form>
        {created ? (
          <Notice>
            {created.username} can sign in with the temporary password <code>{created.temporary_password}</code> (shown once; they must change it at first sign-in).
          </Notice>
        ) : null}
        <ErrorText error={action.error ?? team.error} />
        <table class="list" tabIndex={0}>
          <caption>Users of your organisation</caption>
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Since</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {(team.data?.data ?? []).map((m) => (
              <tr key={m.id}>
                <td>{m.username}</td>
                <td>
                  <label class="visually-hidden" for={`role-${m.id}`}>
                    Role of {m.username}
                  </label>
                  <select id={`role-${m.id}`} value={m.role} onChange={(e) => change(m, { role: (e.target as HTMLSelectElement).value as Member['role'] })}>
                    {ROLES.map((r) => (
                      <option key={r.value} value={r.value}>
                        {r.label}
                      </option>
                    ))}
                  </select>
                </td>
                <td>{m.disabled ? 'Disabled' : 'Active'}</td>
                <td>{when(m.created_at)}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => change(m, { disabled: !m.disabled })}>
                    {m.disabled ? `Enable ${m.username}` : `Disable ${m.username}`}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Page>
    </AdminOnly>
  );
}
