import { useEffect, useState } from 'preact/hooks';
import { call, downloadCsv, get, query, type Schemas } from '../api.ts';
import { ErrorText, Field, Form, Notice, Page, Select, TopUpHint, useAction, useLoad, when } from '../ui.tsx';
import { CHANNELS } from './verify.tsx';

type Batch = Schemas['Batch'];

const PREVIEW_ROWS = 5;
const FIXTURES = new Set(['12345678901', '12345678902', '99999999999', 'AA000000000001ZZ', 'AA000000000002ZZ', 'AA000000000008ZZ', 'AA000000000009ZZ']);
// Only well-formed identifiers can cost a unit: the server refuses the others as invalid rows.
const WELL_FORMED: Record<string, RegExp> = { nin: /^\d{11}$/, vnin: /^[A-Za-z0-9]{16}$/, phone_no: /^0[1-9]\d{9}$/ };

/** A first look at the file before it is sent: header, a few rows, and how many units it may use. */
function preview(text: string) {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const header = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
  const rows = lines.slice(1).map((l) => l.split(',').map((c) => c.trim()));
  const idCols = ['nin', 'vnin', 'phone_no'].map((c) => [c, header.indexOf(c)] as const).filter(([, i]) => i >= 0);
  const ids = new Set<string>();
  for (const r of rows) {
    for (const [name, i] of idCols) {
      const v = (r[i] ?? '').toUpperCase();
      if (v && WELL_FORMED[name]!.test(v) && !FIXTURES.has(v)) ids.add(`${name}:${v}`);
    }
  }
  return { header, rows: rows.slice(0, PREVIEW_ROWS), total: rows.length, estimatedUnits: ids.size };
}

export function Batches() {
  const list = useLoad(() => get<Schemas['BatchList']>('/verify-nin/batches'), []);
  const reasons = useLoad(() => get<Schemas['ReasonList']>('/nimc-reasons'), []);
  const [file, setFile] = useState<{ name: string; text: string } | null>(null);
  const [reason, setReason] = useState('corporate');
  const [current, setCurrent] = useState<string | null>(null);
  const settings = useLoad(() => get<Schemas['OrganisationSettings']>('/me/organisation'), []);
  // The batch's consent statement: when and how the people in the file agreed (the API's
  // consent_obtained_at, consent_channel and consent_notice_version).
  const [consented, setConsented] = useState(false);
  const [consentAt, setConsentAt] = useState('');
  const [channel, setChannel] = useState('web');
  const [notice, setNotice] = useState('');
  const action = useAction();
  const p = file ? preview(file.text) : null;
  const requireConsent = settings.data?.require_consent === true;

  const choose = async (e: Event) => {
    const f = (e.target as HTMLInputElement).files?.[0];
    setFile(f ? { name: f.name, text: await f.text() } : null);
  };
  const upload = (e: Event) => {
    e.preventDefault();
    if (!file) return;
    void action.run(async () => {
      // datetime-local has no zone: read in the browser's own, sent with its offset (as UTC).
      const consent = consented ? { consent_obtained_at: new Date(consentAt).toISOString(), consent_channel: channel, consent_notice_version: notice } : {};
      const r = await call<Batch>('POST', `/verify-nin/batches${query({ reason, ...consent })}`, { text: file.text, contentType: 'text/csv' });
      setCurrent(r.data.id);
      setFile(null);
      list.reload();
    });
  };

  return (
    <Page title="Batches">
      <Form action={action} onSubmit={upload} aria-label="Upload a batch">
        <div class="field">
          <label for="f-file">CSV file</label>
          <input id="f-file" type="file" accept=".csv,text/csv" onChange={(e) => void choose(e)} aria-describedby="f-file-hint" />
          <small id="f-file-hint" class="hint">
            A header row with nin, vnin, phone_no, client_ref and reason columns; up to 50,000 rows.
          </small>
        </div>
        <Select label="Reason" name="reason" value={reason} onChange={setReason} options={(reasons.data?.data ?? [{ key: 'corporate', label: 'Corporate' }]).map((r) => ({ value: r.key, label: r.label }))} />
        {p ? (
          <div class="preview" tabIndex={0} role="region" aria-label="Preview of the file">
            <table>
              <caption>
                {file?.name}: first {p.rows.length} of {p.total} rows; about {p.estimatedUnits} units if every live row is found
              </caption>
              <thead>
                <tr>{p.header.map((h) => <th scope="col" key={h}>{h}</th>)}</tr>
              </thead>
              <tbody>
                {p.rows.map((r, i) => (
                  <tr key={i}>{p.header.map((_, j) => <td key={j}>{r[j] ?? ''}</td>)}</tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <fieldset>
          <legend>Consent{requireConsent ? ' (required by your organisation)' : ''}</legend>
          <div class="check">
            <input id="f-batch-consented" type="checkbox" checked={consented} onChange={(e) => setConsented((e.target as HTMLInputElement).checked)} />
            <label for="f-batch-consented">The people in this file agreed to be verified</label>
          </div>
          {consented ? (
            <>
              <Field label="When they agreed" name="consent_obtained_at" type="datetime-local" value={consentAt} onInput={setConsentAt} required hint="At most 90 days ago" />
              <Select label="How they agreed" name="consent_channel" value={channel} onChange={setChannel} options={CHANNELS} />
              <Field label="Privacy notice version" name="consent_notice_version" value={notice} onInput={setNotice} required hint="Which notice they were shown" />
            </>
          ) : null}
        </fieldset>
        <ErrorText error={action.error} />
        <button type="submit" disabled={!file || action.busy}>
          Upload batch
        </button>
      </Form>
      {current ? <BatchProgress id={current} onChange={list.reload} /> : null}
      <h2>Your batches</h2>
      <ErrorText error={list.error} />
      <table class="list" tabIndex={0}>
        <thead>
          <tr>
            <th scope="col">Batch</th>
            <th scope="col">Status</th>
            <th scope="col">Done</th>
            <th scope="col">Units</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.data ?? []).map((b) => (
            <tr key={b.id}>
              <td>
                <button type="button" class="link" onClick={() => setCurrent(b.id)}>
                  {b.id}
                </button>
              </td>
              <td>{b.status}</td>
              <td>
                {b.done} / {b.total}
              </td>
              <td>{b.units_charged}</td>
              <td>{when(b.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}

/** Follows one batch until it ends: progress, pause reason, cancel and the results. */
function BatchProgress({ id, onChange }: { id: string; onChange(): void }) {
  const [batch, setBatch] = useState<Batch | null>(null);
  const [error, setError] = useState<unknown>(null);
  const action = useAction();
  useEffect(() => {
    let stop = false;
    const tick = async () => {
      try {
        const b = await get<Batch>(`/verify-nin/batches/${id}`);
        setBatch(b);
        if (b.status === 'completed' || b.status === 'cancelled') {
          onChange();
          return;
        }
      } catch (e) {
        setError(e);
      }
      if (!stop) setTimeout(() => void tick(), 1500);
    };
    void tick();
    return () => {
      stop = true;
    };
  }, [id]);
  const cancel = () =>
    void action.run(async () => {
      setBatch((await call<Batch>('POST', `/verify-nin/batches/${id}/cancel`)).data);
      onChange();
    });
  if (!batch) return <ErrorText error={error} />;
  const finished = batch.status === 'completed' || batch.status === 'cancelled';
  return (
    <section class="batch" aria-label={`Batch ${batch.id}`}>
      <h2>Batch {batch.id}</h2>
      <label for="batch-progress">
        {batch.status === 'paused' ? `Paused: ${batch.paused_reason === 'insufficient_units' ? 'the wallet has no units left; it resumes by itself after a top-up' : batch.paused_reason}` : `Status: ${batch.status}`}
      </label>
      {batch.status === 'paused' && batch.paused_reason === 'insufficient_units' ? (
        <p class="paused-top-up">
          <TopUpHint />
        </p>
      ) : null}
      <progress id="batch-progress" max={Math.max(1, batch.total)} value={batch.done}>
        {batch.done} of {batch.total}
      </progress>
      <p role="status" aria-live="polite">
        {batch.done} of {batch.total} rows done: {batch.found} found, {batch.not_found} not found, {batch.failed} failed, {batch.invalid} invalid, {batch.cancelled} cancelled; {batch.units_charged} units charged.
      </p>
      <Notice>{finished ? `This batch has ${batch.status === 'completed' ? 'completed' : 'been cancelled'}.` : null}</Notice>
      <ErrorText error={action.error ?? error} />
      <p class="actions">
        <button type="button" onClick={() => void action.run(() => downloadCsv(`/verify-nin/batches/${batch.id}/results`, `${batch.id}.csv`))}>
          Download results (CSV)
        </button>
        {!finished ? (
          <button type="button" class="secondary" onClick={cancel} disabled={action.busy}>
            Cancel batch
          </button>
        ) : null}
      </p>
    </section>
  );
}
