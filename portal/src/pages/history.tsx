import { useEffect, useRef, useState } from 'preact/hooks';
import { API, download, downloadCsv, formatNaira, get, query, type Schemas } from '../api.ts';
import { keepsAccounts, useSession } from '../session.tsx';
import { ErrorText, Pager, Field, Form, Page, Select, useAction, useLoad, when } from '../ui.tsx';

type Tab = 'verifications' | 'transactions' | 'topups';
/** Each tab's rows, as the API declares them. */
type Rows = { verifications: Schemas['VerificationSummary']; transactions: Schemas['LedgerLine']; topups: Schemas['Topup'] };
type Pages = { verifications: Schemas['VerificationPage']; transactions: Schemas['LedgerPage']; topups: Schemas['TopupPage'] };

const FILTERS: Record<Tab, { name: string; label: string; options: string[] }> = {
  verifications: { name: 'status', label: 'Status', options: ['', 'pending', 'found', 'not_found', 'failed', 'expired'] },
  transactions: { name: 'kind', label: 'Kind', options: ['', 'verification', 'face_match', 'fixture_verification', 'topup', 'adjustment'] },
  topups: { name: 'status', label: 'Status', options: ['', 'pending', 'credited', 'failed', 'abandoned', 'amount_mismatch', 'refund_due', 'refunded'] },
};

// A column names a field of its tab's rows (`money` is worked out from several, see paid()).
const COLUMNS: { [T in Tab]: [keyof Rows[T] | 'money', string][] } = {
  verifications: [['reference_id', 'Reference'], ['kind', 'Looked up by'], ['mode', 'Mode'], ['status', 'Status'], ['charged', 'Charged'], ['username', 'Asked by'], ['created_at', 'When']],
  transactions: [['id', 'Line'], ['kind', 'Kind'], ['description', 'What'], ['units_delta', 'Units'], ['units_after', 'Balance after'], ['money', 'Paid'], ['reference', 'Reference'], ['created_at', 'When']],
  topups: [['reference', 'Reference'], ['status', 'Status'], ['units', 'Units'], ['base_amount', 'Base'], ['vat_amount', 'VAT'], ['service_charge', 'Processor fee'], ['total_amount', 'Total'], ['created_at', 'Started'], ['paid_at', 'Paid'], ['credited_at', 'Credited']],
};

// The API keeps kobo integers; a person reads naira.
const MONEY = new Set(['base_amount', 'vat_amount', 'service_charge', 'total_amount']);

/** A ledger line of a top-up: what was paid for its units (base, VAT, processor fee); other lines carry no money. */
function paid(row: Record<string, unknown>): string {
  if (row.kind !== 'topup' || typeof row.amount !== 'number') return '';
  const vat = typeof row.vat_amount === 'number' ? row.vat_amount : 0;
  const fee = typeof row.service_charge === 'number' ? row.service_charge : 0;
  return `${formatNaira(row.amount)} + VAT ${formatNaira(vat)} + processor fee ${formatNaira(fee)}`;
}

function cell(row: Record<string, unknown>, key: string): string {
  if (key === 'money') return paid(row);
  const v = row[key];
  if (MONEY.has(key) && typeof v === 'number') return formatNaira(v);
  if (key === 'username' && !v) {
    const client = row.api_client as { name?: string } | null | undefined;
    return client?.name ? `API client ${client.name}` : '';
  }
  if (key.endsWith('_at') && typeof v === 'string') return when(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return v === null || v === undefined ? '' : String(v);
}

export function History() {
  const { me } = useSession();
  const accounts = keepsAccounts(me);
  const tabs: Tab[] = accounts ? ['verifications', 'transactions', 'topups'] : ['verifications'];
  const [tab, setTab] = useState<Tab>('verifications');
  const [filter, setFilter] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const filters = { [FILTERS[tab].name]: filter, from, to };
  const page = useLoad(() => get<Pages[Tab]>(`/${tab}${query({ ...filters, limit: 25, cursor })}`), [tab, filter, from, to, cursor]);
  // The table reads each row's fields by column name, whichever tab it shows.
  const rows: Record<string, unknown>[] = page.data?.data ?? [];
  const action = useAction();
  const switchTab = (t: Tab) => {
    setTab(t);
    setFilter('');
    setCursors([]);
  };
  return (
    <Page title="History">
      <div role="tablist" aria-label="What to show" class="tabs">
        {tabs.map((t) => (
          <button key={t} type="button" role="tab" aria-selected={tab === t} onClick={() => switchTab(t)}>
            {t === 'topups' ? 'Top-ups' : t[0]!.toUpperCase() + t.slice(1)}
          </button>
        ))}
      </div>
      <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Select label={FILTERS[tab].label} name="filter" value={filter} onChange={(v) => { setFilter(v); setCursors([]); }} options={FILTERS[tab].options.map((o) => ({ value: o, label: o === '' ? 'Any' : o.replace('_', ' ') }))} />
        <Field label="From" name="from" type="date" value={from} onInput={(v) => { setFrom(v); setCursors([]); }} />
        <Field label="To" name="to" type="date" value={to} onInput={(v) => { setTo(v); setCursors([]); }} />
        <button type="button" class="secondary" onClick={() => void action.run(() => downloadCsv(`/${tab}${query(filters)}`, `${tab}.csv`))}>
          Download CSV
        </button>
      </form>
      <ErrorText error={page.error ?? action.error} />
      <table class="list" tabIndex={0} aria-label={tab}>
        <thead>
          <tr>
            {COLUMNS[tab].map(([k, label]) => <th scope="col" key={k}>{label}</th>)}
            {tab === 'verifications' ? <th scope="col">Slip</th> : null}
            {tab === 'topups' ? <th scope="col">Invoice</th> : null}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {COLUMNS[tab].map(([k]) => <td key={k}>{cell(row, k)}</td>)}
              {tab === 'verifications' ? (
                <td>{row.status === 'found' && row.kind !== 'match' ? <a href={`${API}/verify-nin/slip/${String(row.reference_id)}`} target="_blank" rel="noopener">Slip</a> : null}</td>
              ) : null}
              {tab === 'topups' ? (
                <td>
                  {typeof row.invoice_number === 'string' ? (
                    <a href={`${API}/topups/${encodeURIComponent(String(row.reference))}/invoice`} download={`${row.invoice_number}.pdf`}>
                      Invoice {row.invoice_number}
                    </a>
                  ) : null}
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
      <Pager cursors={cursors} next={page.data?.next_cursor} onChange={setCursors} />
      {accounts ? <Statements /> : null}
    </Page>
  );
}

/** The month now in Lagos (the statements' own months), as yyyy-mm. */
function lagosMonth(): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Lagos', year: 'numeric', month: '2-digit' }).format(new Date()).slice(0, 7);
}

/** The month a link asks for (`?statement=yyyy-mm`: the monthly and the low-balance e-mails link it). */
function linkedMonth(): string | null {
  const m = new URLSearchParams(location.search).get('statement');
  return m && /^\d{4}-(0[1-9]|1[0-2])$/.test(m) ? m : null;
}

/** A month's statement (opening balance, movements, closing balance) as a PDF or CSV file. */
function Statements() {
  const [linked] = useState(linkedMonth);
  const [month, setMonth] = useState(() => linked ?? lagosMonth());
  const heading = useRef<HTMLHeadingElement>(null);
  const action = useAction();
  // Arriving from an e-mail's link: the statement is what the reader came for, not the list above it.
  useEffect(() => {
    if (!linked) return;
    const t = setTimeout(() => {
      heading.current?.scrollIntoView();
      heading.current?.focus();
    }, 0);
    return () => clearTimeout(t);
  }, []);
  const fetchStatement = (ext: 'pdf' | 'csv') => void action.run(() => download(`/statements/${encodeURIComponent(month)}`, `statement-${month}.${ext}`, ext === 'pdf' ? 'application/pdf' : 'text/csv'));
  return (
    <section aria-labelledby="statements-title" class="statements">
      <h2 id="statements-title" tabIndex={-1} ref={heading}>
        Statements
      </h2>
      <Form action={action} class="filters" aria-labelledby="statements-title" onSubmit={() => fetchStatement('pdf')}>
        <Field label="Month" name="statement_month" type="month" value={month} onInput={setMonth} required hint="Months run in Lagos time" />
        <button type="button" class="secondary" disabled={action.busy || !month} onClick={() => fetchStatement('pdf')}>
          Download statement (PDF)
        </button>
        <button type="button" class="secondary" disabled={action.busy || !month} onClick={() => fetchStatement('csv')}>
          Download statement (CSV)
        </button>
        <ErrorText error={action.error} />
      </Form>
    </section>
  );
}
