import { useState } from 'preact/hooks';
import { call, get, query, type Schemas } from '../api.ts';
import { AdminOnly } from '../layout.tsx';
import { livenessText } from '../liveness.ts';
import { ErrorText, Field, Page, Pager, Select, ShownOnce, useAction, useLoad, when } from '../ui.tsx';

type Link = Schemas['VerificationLink'];
type Submission = Schemas['VerificationLinkDetail']['submissions'][number];

const STATUS = { active: 'Active', expired: 'Expired', used_up: 'Used up', revoked: 'Revoked', suspended: 'Suspended (its maker may no longer make links)' } as const;

function faceText(f: Submission['face']): string {
  if (!f) return '';
  if (f.status === 'no_reference_photo') return 'No reference photo';
  const compared = `${f.match ? 'Match' : 'No match'} (${f.confidence ?? '?'} / threshold ${f.threshold})`;
  // Liveness only when it was checked: a selfie's "not checked" is the link's choice, said once on the link.
  return f.liveness === 'not_checked' ? compared : `${compared}; liveness ${livenessText(f.liveness)}`;
}

/** The link's URL, shown once: only a hash of its token is kept, so it cannot be shown again. */
function UrlOnce({ url, onDone }: { url: string; onDone(): void }) {
  return (
    <ShownOnce value={url} what="link" onDone={onDone}>
      <p class="wrap">
        Link: <code data-testid="link-url">{url}</code>
      </p>
      <p>Send it to the person now (SMS, e-mail or WhatsApp): it is shown only this once.</p>
    </ShownOnce>
  );
}

function Submissions({ link, onClose }: { link: Link; onClose(): void }) {
  const detail = useLoad(() => get<Schemas['VerificationLinkDetail']>(`/verification-links/${link.id}`), [link.id]);
  const subs = detail.data?.submissions ?? [];
  return (
    <section class="deliveries" aria-labelledby="submissions-title">
      <h2 id="submissions-title" class="wrap">
        Submissions of <code>{link.id}</code>
      </h2>
      <p class="actions">
        <button type="button" class="secondary" onClick={detail.reload}>
          Refresh submissions
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          Close submissions
        </button>
      </p>
      <ErrorText error={detail.error} />
      <table class="list" tabIndex={0}>
        <caption>Newest first. The record is read from History by its reference (the page never shows it to the person).</caption>
        <thead>
          <tr>
            <th scope="col">Reference</th>
            <th scope="col">Status</th>
            <th scope="col">Face</th>
            <th scope="col">Submitted</th>
          </tr>
        </thead>
        <tbody>
          {subs.map((s, i) => (
            <tr key={s.reference_id ?? `turned-away-${i}`}>
              {/* No reference: the organisation could not take it (no units, no subscription); nothing was verified. */}
              <td>{s.reference_id === null ? 'none: turned away' : <code>{s.reference_id}</code>}</td>
              <td>
                {s.status}
                {s.code ? ` (${s.code})` : ''}
              </td>
              <td>{faceText(s.face)}</td>
              <td>{when(s.submitted_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {detail.data && subs.length === 0 ? <p>No submissions yet.</p> : null}
    </section>
  );
}

export function Links() {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const links = useLoad(() => get<Schemas['VerificationLinkPage']>(`/verification-links${query({ limit: 20, cursor })}`), [cursor]);
  const reasons = useLoad(() => get<Schemas['ReasonList']>('/nimc-reasons'), []);
  const [purpose, setPurpose] = useState('');
  const [reason, setReason] = useState('corporate');
  const [requireFace, setRequireFace] = useState(true);
  const [liveness, setLiveness] = useState(true);
  const [hours, setHours] = useState('72');
  const [maxUses, setMaxUses] = useState('1');
  const [clientRef, setClientRef] = useState('');
  const [url, setUrl] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const action = useAction();

  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      setResult(null);
      const body: Record<string, unknown> = { reason, purpose, require_face: requireFace, liveness: requireFace && liveness, expires_in_hours: Number(hours), max_uses: Number(maxUses) };
      if (clientRef.trim()) body.client_ref = clientRef.trim();
      const r = await call<Schemas['VerificationLinkWithUrl']>('POST', '/verification-links', { json: body });
      setUrl(r.data.url);
      setPurpose('');
      setClientRef('');
      setResult(`Link ${r.data.id} created.`);
      setCursors([]);
      links.reload();
    });
  };
  const revoke = (l: Link) =>
    void action.run(async () => {
      setResult(null);
      await call('POST', `/verification-links/${l.id}/revoke`);
      setConfirming(null);
      setResult(`Link ${l.id} revoked: it now answers that it is no longer valid.`);
      links.reload();
    });

  const reasonOptions = (reasons.data?.data ?? [{ key: 'corporate', label: 'Corporate' }]).map((r) => ({ value: r.key, label: r.label }));
  const list = links.data?.data ?? [];
  const open = list.find((x) => x.id === shown);

  return (
    <AdminOnly>
      <Page title="Verification links">
        <p>Send a person a link: on their phone they read who asks and why, give their consent, enter a vNIN they make for us and, if you ask, take a selfie. You see the result here and through the verification_link.submitted webhook; the person never sees their record.</p>
        <form onSubmit={create} aria-label="Create a verification link">
          <h2>Create a link</h2>
          <Field label="Purpose shown to the person" name="purpose" value={purpose} onInput={setPurpose} required hint="Up to 200 characters, e.g. Opening your savings account" />
          <Select label="Reason" name="link-reason" value={reason} onChange={setReason} options={reasonOptions} />
          <div class="check">
            <input id="link-face" type="checkbox" checked={requireFace} onChange={(e) => setRequireFace((e.target as HTMLInputElement).checked)} />
            <label for="link-face">Ask for a selfie (face match)</label>
          </div>
          <div class="check">
            <input id="link-liveness" type="checkbox" checked={requireFace && liveness} disabled={!requireFace} onChange={(e) => setLiveness((e.target as HTMLInputElement).checked)} />
            <label for="link-liveness">With a liveness check (the person turns their head before the camera, in place of the selfie)</label>
          </div>
          <Field label="Valid for (hours)" name="expires_in_hours" type="number" min="1" step="1" value={hours} onInput={setHours} hint="1 to 720" />
          <Field label="Uses" name="max_uses" type="number" min="1" step="1" value={maxUses} onInput={setMaxUses} hint="How many verifications it may make, 1 to 1000" />
          <Field label="Your reference" name="client_ref" value={clientRef} onInput={setClientRef} hint="Optional, returned with the webhook; no personal data" />
          <button type="submit" disabled={action.busy}>
            Create link
          </button>
        </form>
        {url ? <UrlOnce url={url} onDone={() => setUrl(null)} /> : null}
        <p class="wrap" aria-live="polite">{result}</p>
        <ErrorText error={action.error ?? links.error} />
        <table class="list" tabIndex={0}>
          <caption>Your organisation's verification links, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Link</th>
              <th scope="col">Purpose</th>
              <th scope="col">State</th>
              <th scope="col">Face</th>
              <th scope="col">Uses</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((l) => (
              <tr key={l.id}>
                <td>
                  <code>{l.id}</code>
                  {l.client_ref ? (
                    <>
                      <br />
                      {l.client_ref}
                    </>
                  ) : null}
                </td>
                <td class="wrap">{l.purpose}</td>
                <td>{STATUS[l.status]}</td>
                <td>{l.require_face ? (l.liveness ? 'liveness check' : 'selfie') : 'none'}</td>
                <td>
                  {l.uses} / {l.max_uses}
                </td>
                <td>{when(l.expires_at)}</td>
                <td class="actions wide">
                  <button type="button" class="secondary" onClick={() => setShown(l.id)} aria-label={`Submissions of ${l.id}`}>
                    Submissions
                  </button>
                  {l.status !== 'active' ? null : confirming === l.id ? (
                    <span class="confirm" role="group" aria-label={`Revoke ${l.id}?`}>
                      <span>Revoke it? The person can no longer use it.</span>
                      <button type="button" class="danger" disabled={action.busy} onClick={() => revoke(l)}>
                        Yes, revoke
                      </button>
                      <button type="button" class="secondary" onClick={() => setConfirming(null)}>
                        Keep it
                      </button>
                    </span>
                  ) : (
                    <button type="button" class="danger" onClick={() => setConfirming(l.id)} aria-label={`Revoke ${l.id}`}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {links.data && list.length === 0 ? <p>No links yet.</p> : null}
        <Pager cursors={cursors} next={links.data?.next_cursor} onChange={setCursors} />
        {open ? <Submissions key={open.id} link={open} onClose={() => setShown(null)} /> : null}
      </Page>
    </AdminOnly>
  );
}
