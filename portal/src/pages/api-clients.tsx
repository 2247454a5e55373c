import { useState } from 'preact/hooks';
import { call, get, type Schemas } from '../api.ts';
import { AdminOnly } from '../layout.tsx';
import { ErrorText, Field, Form, Notice, Page, Select, useAction, useConfirm, useLoad, when } from '../ui.tsx';

type Client = Schemas['ApiClient'];

const SCOPES = ['verify', 'requery', 'history:read', 'topup', 'webhooks', 'links'];
// The scopes only an administrator client may hold (src/lib/roles.ts): offered to an administrator client only.
const ADMIN_ONLY = ['topup', 'webhooks', 'links'];

export function ApiClients() {
  const clients = useLoad(() => get<Schemas['ApiClientList']>('/api-clients'), []);
  const [name, setName] = useState('');
  const [role, setRole] = useState('member');
  const [scopes, setScopes] = useState<string[]>(['verify', 'requery', 'history:read']);
  const [ips, setIps] = useState('');
  const [allowAny, setAllowAny] = useState(false);
  const [expires, setExpires] = useState('');
  const [secret, setSecret] = useState<{ client_id: string; client_secret: string } | null>(null);
  const [result, setResult] = useState<string | null>(null);
  // The form's failures stay in the form (and mark its fields); a row's, above the list.
  const creating = useAction();
  const action = useAction();
  const confirm = useConfirm();

  const create = (e: Event) => {
    e.preventDefault();
    void creating.run(async () => {
      const body: Record<string, unknown> = { name, role, scopes: scopes.filter((s) => !ADMIN_ONLY.includes(s) || role === 'org_admin') };
      const allowed = ips.split(/[\s,]+/).filter(Boolean);
      if (allowed.length) body.allowed_ips = allowed;
      if (allowAny) body.allow_any = true;
      if (expires) body.expires_at = new Date(expires).toISOString();
      const r = await call<Schemas['CreatedApiClient']>('POST', '/api-clients', { json: body });
      setResult(null);
      setSecret(r.data);
      setName('');
      clients.reload();
    });
  };
  const rotate = (c: Client) =>
    void action.run(async () => {
      setResult(null);
      setSecret((await call<Schemas['RotatedApiClient']>('POST', `/api-clients/${c.client_id}/rotate`)).data);
      clients.reload();
    });
  const revoke = async (c: Client) => {
    const sure = await confirm.ask({
      title: `Revoke ${c.name}?`,
      body: <p>Its secret and every token issued with it stop working at once. This cannot be undone: a server still using it gets 401 until it is given a new client.</p>,
      confirm: `Revoke ${c.name}`,
    });
    if (!sure) return;
    await action.run(async () => {
      await call('DELETE', `/api-clients/${c.client_id}`);
      // A revoked client's secret is worthless, and nothing worthless stays on screen looking usable.
      setSecret((shown) => (shown?.client_id === c.client_id ? null : shown));
      setResult(`${c.name} is revoked: its secret and tokens no longer work.`);
      clients.reload();
    });
  };
  const toggle = (s: string, on: boolean) => setScopes(on ? [...scopes, s] : scopes.filter((x) => x !== s));

  return (
    <AdminOnly>
      <Page title="API clients">
        <Form action={creating} onSubmit={create} aria-label="Create an API client">
          <h2>Create a client</h2>
          <Field label="Name" name="name" value={name} onInput={setName} required />
          <Select label="Role" name="role" value={role} onChange={setRole} options={[{ value: 'member', label: 'Team member' }, { value: 'org_admin', label: 'Administrator' }]} />
          <fieldset>
            <legend>Scopes</legend>
            {SCOPES.map((s) => (
              <div class="check" key={s}>
                <input id={`scope-${s}`} type="checkbox" checked={scopes.includes(s)} disabled={ADMIN_ONLY.includes(s) && role !== 'org_admin'} onChange={(e) => toggle(s, (e.target as HTMLInputElement).checked)} />
                <label for={`scope-${s}`}>{s}</label>
              </div>
            ))}
          </fieldset>
          <Field label="Allowed addresses" name="allowed_ips" value={ips} onInput={setIps} hint="Addresses or CIDR ranges, separated by commas; empty allows any" />
          <div class="check">
            <input id="f-allow-any" type="checkbox" checked={allowAny} onChange={(e) => setAllowAny((e.target as HTMLInputElement).checked)} />
            <label for="f-allow-any">An entry may match every address (0.0.0.0/0, ::/0)</label>
          </div>
          <Field label="Expires at" name="expires_at" type="datetime-local" value={expires} onInput={setExpires} hint="Optional" />
          <ErrorText error={creating.error} />
          <button type="submit" disabled={creating.busy}>
            Create client
          </button>
        </Form>
        <Notice>
          {secret ? (
            <>
              Client <code>{secret.client_id}</code>, secret <code data-testid="client-secret">{secret.client_secret}</code>: copy it now, it is shown only once.
            </>
          ) : null}
        </Notice>
        <Notice>{result}</Notice>
        <ErrorText error={action.error ?? clients.error} />
        <table class="list" tabIndex={0}>
          <caption>Your organisation's API clients</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Client id</th>
              <th scope="col">Role and scopes</th>
              <th scope="col">State</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(clients.data?.data ?? []).map((c) => (
              <tr key={c.client_id}>
                <td>{c.name}</td>
                <td>
                  <code>{c.client_id}</code>
                </td>
                <td>
                  {c.role === 'org_admin' ? 'Administrator' : 'Team member'}
                  {c.scopes ? `: ${c.scopes.join(', ')}` : ''}
                  {c.allowed_ips?.length ? `; from ${c.allowed_ips.join(', ')}` : ''}
                  {c.expires_at ? `; expires ${when(c.expires_at)}` : ''}
                </td>
                <td>{c.status ?? 'active'}</td>
                <td>{when(c.last_used_at) || 'Never'}</td>
                <td class="actions">
                  <button type="button" class="secondary" onClick={() => rotate(c)}>
                    Rotate secret of {c.name}
                  </button>
                  <button type="button" class="danger" onClick={() => void revoke(c)}>
                    Revoke {c.name}
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
