import { useState } from 'preact/hooks';
import { call, get, type Schemas } from '../api.ts';
import { AdminOnly } from '../layout.tsx';
import { ErrorText, Field, Form, Notice, Page, Select, useAction, useConfirm, useLoad, when } from '../ui.tsx';

type Member = Schemas['TeamMember'];
type Invitation = Schemas['Invitation'];
const ROLES = [
  { value: 'member', label: 'Team member' },
  { value: 'finance', label: 'Finance officer' },
  { value: 'org_admin', label: 'Administrator' },
];
const roleLabel = (role: string) => ROLES.find((r) => r.value === role)?.label ?? role;

/** Invite by e-mail: the invitee chooses their own password from the e-mail's link (valid 72 hours, usable once). */
function Invitations() {
  const list = useLoad(() => get<Schemas['InvitationList']>('/team/invitations'), []);
  const [email, setEmail] = useState('');
  const [username, setUsername] = useState('');
  const [role, setRole] = useState('member');
  const [sent, setSent] = useState<string | null>(null);
  const inviting = useAction();
  const action = useAction();
  const invite = (e: Event) => {
    e.preventDefault();
    void inviting.run(async () => {
      setSent(null);
      const r = await call<Invitation>('POST', '/team/invitations', { json: { email, username, role } });
      setSent(`Invitation sent to ${r.data.email} for ${r.data.username} (${roleLabel(r.data.role)}); the link is valid until ${when(r.data.expires_at)}.`);
      setEmail('');
      setUsername('');
      list.reload();
    });
  };
  const revoke = (i: Invitation) =>
    void action.run(async () => {
      setSent(null);
      await call('DELETE', `/team/invitations/${i.id}`);
      setSent(`The invitation of ${i.username} is revoked: its link no longer works.`);
      list.reload();
    });
  const rows = list.data?.data ?? [];
  return (
    <section aria-labelledby="invite-title" class="invitations">
      <Form action={inviting} onSubmit={invite} aria-labelledby="invite-title">
        <h2 id="invite-title">Invite by e-mail</h2>
        <Field label="E-mail" name="invite_email" type="email" value={email} onInput={setEmail} required autocomplete="off" />
        <Field label="Username" name="invite_username" value={username} onInput={setUsername} required autocomplete="off" />
        <Select label="Role" name="invite_role" value={role} onChange={setRole} options={ROLES} />
        <ErrorText error={inviting.error} />
        <button type="submit" disabled={inviting.busy}>
          Send invitation
        </button>
      </Form>
      <Notice>{sent}</Notice>
      <ErrorText error={action.error ?? list.error} />
      {rows.length === 0 ? (
        <p>No invitations yet.</p>
      ) : (
        <table class="list" tabIndex={0}>
          <caption>Invitations</caption>
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Valid until</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((i) => (
              <tr key={i.id}>
                <td>{i.username}</td>
                <td>{i.email}</td>
                <td>{roleLabel(i.role)}</td>
                <td>{i.status}</td>
                <td>{when(i.expires_at)}</td>
                <td>
                  {i.status === 'pending' ? (
                    <button type="button" class="secondary" onClick={() => revoke(i)} disabled={action.busy}>
                      Revoke invitation of {i.username}
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function Team() {
  const team = useLoad(() => get<Schemas['TeamList']>('/team'), []);
  const [result, setResult] = useState<string | null>(null);
  // A role chosen in a row's list, not yet applied: the change waits for its button and a confirmation.
  const [chosen, setChosen] = useState<Record<number, Member['role']>>({});
  const action = useAction();
  const confirm = useConfirm();
  const change = (m: Member, patch: Partial<Pick<Member, 'role' | 'disabled'>>, said: string) =>
    action.run(async () => {
      setResult(null);
      await call('PATCH', `/team/${m.id}`, { json: patch });
      setChosen(({ [m.id]: _done, ...rest }) => rest);
      setResult(said);
      team.reload();
    });
  const changeRole = async (m: Member) => {
    const next = chosen[m.id];
    if (!next || next === m.role) return;
    const sure = await confirm.ask({
      title: `Make ${m.username} ${article(roleLabel(next))}?`,
      body: <p>{m.username} is now {article(roleLabel(m.role))}. Their sessions end at once, and they sign in again with what the new role allows.</p>,
      confirm: `Change role to ${roleLabel(next)}`,
    });
    if (sure) await change(m, { role: next }, `${m.username} is now ${article(roleLabel(next))}.`);
  };
  const toggle = async (m: Member) => {
    if (m.disabled) return change(m, { disabled: false }, `${m.username} is enabled: they can sign in again.`);
    const sure = await confirm.ask({
      title: `Disable ${m.username}?`,
      body: <p>They are signed out at once and cannot sign in until an administrator enables them again. API clients they created stop working while they are disabled.</p>,
      confirm: `Disable ${m.username}`,
    });
    if (sure) await change(m, { disabled: true }, `${m.username} is disabled.`);
  };
  return (
    <AdminOnly>
      <Page title="Team">
        <Invitations />
        <Notice>{result}</Notice>
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
                  <div class="role-change">
                    <label class="visually-hidden" for={`role-${m.id}`}>
                      Role of {m.username}
                    </label>
                    <select id={`role-${m.id}`} value={chosen[m.id] ?? m.role} onChange={(e) => setChosen({ ...chosen, [m.id]: (e.target as HTMLSelectElement).value as Member['role'] })}>
                      {ROLES.map((r) => (
                        <option key={r.value} value={r.value}>
                          {r.label}
                        </option>
                      ))}
                    </select>
                    <button type="button" class="secondary" disabled={(chosen[m.id] ?? m.role) === m.role} onClick={() => void changeRole(m)}>
                      Change role of {m.username}
                    </button>
                  </div>
                </td>
                <td>{m.disabled ? 'Disabled' : 'Active'}</td>
                <td>{when(m.created_at)}</td>
                <td>
                  <button type="button" class={m.disabled ? 'secondary' : 'danger'} onClick={() => void toggle(m)}>
                    {m.disabled ? `Enable ${m.username}` : `Disable ${m.username}`}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {confirm.dialog}
      </Page>
    </AdminOnly>
  );
}

/** "a finance officer", "an administrator". */
function article(label: string): string {
  return `${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label.toLowerCase()}`;
}
