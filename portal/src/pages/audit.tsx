import { useState } from 'preact/hooks';
import { downloadCsv, get, query, type Schemas } from '../api.ts';
import { AccountsOnly } from '../layout.tsx';
import { ErrorText, Pager, Field, Page, useAction, useLoad, when } from '../ui.tsx';

export function Audit() {
  const [action, setAction] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const filters = { action, from, to };
  const page = useLoad(() => get<Schemas['AuditEventPage']>(`/audit-events${query({ ...filters, limit: 50, cursor })}`), [action, from, to, cursor]);
  const dl = useAction();
  return (
    <AccountsOnly>
      <Page title="Audit trail">
        <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
          <Field label="Action" name="action" value={action} onInput={(v) => { setAction(v); setCursors([]); }} hint="For example auth.login or team.user_updated" />
          <Field label="From" name="from" type="date" value={from} onInput={(v) => { setFrom(v); setCursors([]); }} />
          <Field label="To" name="to" type="date" value={to} onInput={(v) => { setTo(v); setCursors([]); }} />
          <button type="button" class="secondary" onClick={() => void dl.run(() => downloadCsv(`/audit-events${query(filters)}`, 'audit-events.csv'))}>
            Download CSV
          </button>
        </form>
        <ErrorText error={page.error ?? dl.error} />
        <table class="list" tabIndex={0}>
          <caption>Who did what, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Who</th>
              <th scope="col">Target</th>
              <th scope="col">Address</th>
            </tr>
          </thead>
          <tbody>
            {(page.data?.data ?? []).map((e) => (
              <tr key={e.id}>
                <td>{when(e.at)}</td>
                <td>{e.action}</td>
                <td>{e.actor}</td>
                <td>{e.target ?? ''}</td>
                <td>{e.ip ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <Pager cursors={cursors} next={page.data?.next_cursor} onChange={setCursors} />
      </Page>
    </AccountsOnly>
  );
}
