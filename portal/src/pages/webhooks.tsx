import { useEffect, useState } from 'preact/hooks';
import { call, get, query, type Schemas } from '../api.ts';
import { AdminOnly } from '../layout.tsx';
import { ErrorText, Field, Form, Notice, Page, Pager, ShownOnce, useAction, useConfirm, useLoad, when } from '../ui.tsx';

type Endpoint = Schemas['WebhookEndpoint'];

// The API's own list (webhooks.schemas.ts EVENT_TYPES); `*` is offered as "All events".
const EVENTS = ['verification.completed', 'batch.completed', 'batch.paused', 'batch.cancelled', 'topup.credited', 'wallet.low_balance', 'ping', 'verification_link.submitted'];

const DISABLED_WHY = { gone: 'the receiver answered 410 Gone', failing: 'every try failed for 3 days' } as const;

function state(e: Endpoint): string {
  if (e.enabled) return 'Enabled';
  return e.disabled_reason ? `Disabled: ${DISABLED_WHY[e.disabled_reason]}` : 'Disabled';
}

/** The signing secret, shown once (the API never shows it again). */
function SecretOnce({ secret, onDone }: { secret: { endpoint: string; value: string }; onDone(): void }) {
  return (
    <ShownOnce value={secret.value} what="secret" onDone={onDone}>
      <p>
        Signing secret of <code>{secret.endpoint}</code>: <code data-testid="webhook-secret">{secret.value}</code>
      </p>
      <p>Copy it now: it is shown only this once. Your receiver checks each delivery's Idverify-Signature with it.</p>
    </ShownOnce>
  );
}

function Deliveries({ endpoint, onClose }: { endpoint: Endpoint; onClose(): void }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const list = useLoad(() => get<Schemas['WebhookDeliveryPage']>(`/webhook-endpoints/${endpoint.id}/deliveries${query({ limit: 20, cursor })}`), [endpoint.id, cursor]);
  const action = useAction();
  const [result, setResult] = useState<string | null>(null);
  const pending = (list.data?.data ?? []).some((d) => d.status === 'pending');
  // While a delivery is on its way the list follows it by itself (the workers deliver within seconds).
  useEffect(() => {
    if (!pending) return;
    const t = setTimeout(list.reload, 2000);
    return () => clearTimeout(t);
  }, [list.data]);

  const redeliver = (d: Schemas['WebhookDelivery']) =>
    void action.run(async () => {
      setResult(null);
      await call('POST', `/webhook-endpoints/deliveries/${d.id}/redeliver`);
      setResult(`The ${d.type} event ${d.event_id} is queued again.`);
      setCursors([]);
      list.reload();
    });

  return (
    <section class="deliveries" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title" class="wrap">
        Deliveries to <code>{endpoint.url}</code>
      </h2>
      <p class="actions">
        <button type="button" class="secondary" onClick={list.reload}>
          Refresh deliveries
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          Close deliveries
        </button>
      </p>
      <p class="wrap" aria-live="polite">{result}</p>
      <ErrorText error={action.error ?? list.error} />
      <table class="list" tabIndex={0}>
        <caption>Newest first{pending ? ' (refreshing while some are pending)' : ''}</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last status code</th>
            <th scope="col">Last error</th>
            <th scope="col">Next attempt</th>
            <th scope="col">Delivered at</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.data ?? []).map((d) => (
            <tr key={d.id}>
              <td>
                {d.type}
                <br />
                <code>{d.event_id}</code>
              </td>
              <td>{d.status}</td>
              <td>{d.attempts}</td>
              <td>{d.last_status_code ?? ''}</td>
              <td>{d.last_error ?? ''}</td>
              <td>{when(d.next_attempt_at)}</td>
              <td>{when(d.delivered_at)}</td>
              <td>
                <button type="button" class="secondary" disabled={action.busy || !endpoint.enabled} onClick={() => redeliver(d)} aria-label={`Redeliver ${d.type} event ${d.event_id}`}>
                  Redeliver
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && list.data.data.length === 0 ? <p>No deliveries yet: send a test.</p> : null}
      <Pager cursors={cursors} next={list.data?.next_cursor} onChange={setCursors} />
    </section>
  );
}

export function Webhooks() {
  const endpoints = useLoad(() => get<Schemas['WebhookEndpointList']>('/webhook-endpoints'), []);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['*']);
  const [description, setDescription] = useState('');
  const [secret, setSecret] = useState<{ endpoint: string; value: string } | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const adding = useAction();
  const action = useAction();
  const confirm = useConfirm();

  const run = (f: () => Promise<string | void>) =>
    void action.run(async () => {
      setResult(null);
      const said = await f();
      if (said) setResult(said);
      endpoints.reload();
    });

  const create = (e: Event) => {
    e.preventDefault();
    void adding.run(async () => {
      setResult(null);
      const body: Record<string, unknown> = { url, events };
      if (description.trim()) body.description = description;
      const r = await call<Schemas['WebhookEndpointWithSecret']>('POST', '/webhook-endpoints', { json: body });
      setSecret({ endpoint: r.data.url, value: r.data.secret });
      setUrl('');
      setDescription('');
      setEvents(['*']);
      setResult(`Endpoint ${r.data.url} added.`);
      endpoints.reload();
    });
  };
  const toggle = (ev: Endpoint) =>
    run(async () => {
      await call('PATCH', `/webhook-endpoints/${ev.id}`, { json: { enabled: !ev.enabled } });
      return `${ev.url} ${ev.enabled ? 'disabled' : 'enabled'}.`;
    });
  const rotate = (ev: Endpoint) =>
    run(async () => {
      const r = await call<Schemas['WebhookEndpointWithSecret']>('POST', `/webhook-endpoints/${ev.id}/rotate-secret`);
      setSecret({ endpoint: ev.url, value: r.data.secret });
      return `New secret for ${ev.url}: for 24 hours deliveries carry a signature with each secret.`;
    });
  const test = (ev: Endpoint) =>
    run(async () => {
      await call('POST', `/webhook-endpoints/${ev.id}/test`);
      setShown(ev.id);
      return `Test event (ping) sent to ${ev.url}.`;
    });
  const remove = async (ev: Endpoint) => {
    const sure = await confirm.ask({
      title: 'Delete this endpoint?',
      body: (
        <p class="wrap">
          <code>{ev.url}</code> stops receiving events at once, and its pending deliveries stop. This cannot be undone.
        </p>
      ),
      confirm: 'Delete endpoint',
    });
    if (!sure) return;
    run(async () => {
      await call('DELETE', `/webhook-endpoints/${ev.id}`);
      if (shown === ev.id) setShown(null);
      return `Endpoint ${ev.url} deleted.`;
    });
  };
  const pick = (name: string, on: boolean) => {
    if (name === '*') setEvents(on ? ['*'] : []);
    else setEvents(on ? [...events.filter((x) => x !== '*'), name] : events.filter((x) => x !== name));
  };
  const all = events.includes('*');
  const list = endpoints.data?.data ?? [];
  const open = list.find((x) => x.id === shown);

  return (
    <AdminOnly>
      <Page title="Webhooks">
        <p>Your server receives signed events (a verification completed, a batch ended, a top-up credited) instead of polling. Each delivery carries no personal data: read the record with the free requery.</p>
        <Form action={adding} onSubmit={create} aria-label="Add a webhook endpoint">
          <h2>Add an endpoint</h2>
          <Field label="URL" name="url" type="url" value={url} onInput={setUrl} required hint="https, on a public address. In the sandbox also http on this machine (not the stack's own ports), e.g. the test receiver http://127.0.0.1:4010/sandbox/hooks/mine" />
          <fieldset>
            <legend>Events</legend>
            <div class="check">
              <input id="event-all" type="checkbox" checked={all} onChange={(e) => pick('*', (e.target as HTMLInputElement).checked)} />
              <label for="event-all">All events, including ones added later</label>
            </div>
            {EVENTS.map((name) => (
              <div class="check" key={name}>
                <input id={`event-${name}`} type="checkbox" checked={all || events.includes(name)} disabled={all} onChange={(e) => pick(name, (e.target as HTMLInputElement).checked)} />
                <label for={`event-${name}`}>{name}</label>
              </div>
            ))}
          </fieldset>
          <Field label="Description" name="description" value={description} onInput={setDescription} hint="Optional, for your own records" />
          <ErrorText error={adding.error} />
          <button type="submit" disabled={adding.busy || events.length === 0}>
            Add endpoint
          </button>
        </Form>
        {secret ? <SecretOnce secret={secret} onDone={() => setSecret(null)} /> : null}
        <div class="wrap">
          <Notice>{result}</Notice>
        </div>
        <ErrorText error={action.error ?? endpoints.error} />
        <table class="list" tabIndex={0}>
          <caption>Your organisation's webhook endpoints</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
              <th scope="col">Added</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((ev) => (
              <tr key={ev.id}>
                <td class="url">
                  <code>{ev.url}</code>
                  {ev.description ? (
                    <>
                      <br />
                      {ev.description}
                    </>
                  ) : null}
                </td>
                <td>{ev.events.includes('*') ? 'All events' : ev.events.join(', ')}</td>
                <td>{state(ev)}</td>
                <td>{when(ev.created_at)}</td>
                <td class="actions wide">
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => toggle(ev)} aria-label={`${ev.enabled ? 'Disable' : 'Enable'} ${ev.url}`}>
                    {ev.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => rotate(ev)} aria-label={`Rotate secret of ${ev.url}`}>
                    Rotate secret
                  </button>
                  <button type="button" class="secondary" disabled={action.busy || !ev.enabled} onClick={() => test(ev)} aria-label={`Send test to ${ev.url}`}>
                    Send test
                  </button>
                  <button type="button" class="secondary" onClick={() => setShown(ev.id)} aria-label={`Deliveries to ${ev.url}`}>
                    Deliveries
                  </button>
                  <button type="button" class="danger" onClick={() => void remove(ev)} aria-label={`Delete ${ev.url}`}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {endpoints.data && list.length === 0 ? <p>No endpoints yet.</p> : null}
        {open ? <Deliveries key={open.id} endpoint={open} onClose={() => setShown(null)} /> : null}
        {confirm.dialog}
      </Page>
    </AdminOnly>
  );
}
