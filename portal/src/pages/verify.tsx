import { useState } from 'preact/hooks';
import { API, call, get } from '../api.ts';
import { ErrorText, Field, Page, Select, useAction, useLoad } from '../ui.tsx';

type Reason = { key: string; label: string };
type Kind = 'nin' | 'vnin' | 'phone' | 'demography';
type Person = Record<string, string> & { reference_id: string };

const KINDS: { value: Kind; label: string }[] = [
  { value: 'nin', label: 'NIN' },
  { value: 'vnin', label: 'Virtual NIN' },
  { value: 'phone', label: 'Phone number' },
  { value: 'demography', label: 'Name, birth date and gender' },
];

export const CHANNELS = [
  { value: 'web', label: 'Web' },
  { value: 'mobile', label: 'Mobile app' },
  { value: 'in_person', label: 'In person' },
  { value: 'ussd', label: 'USSD' },
  { value: 'other', label: 'Other' },
];

export function Verify() {
  const reasons = useLoad(() => get<{ data: Reason[] }>('/nimc-reasons'), []);
  const settings = useLoad(() => get<{ require_consent?: boolean }>('/me/organisation'), []);
  const [kind, setKind] = useState<Kind>('nin');
  const [value, setValue] = useState('');
  const [reason, setReason] = useState('corporate');
  const [demo, setDemo] = useState({ first_name: '', last_name: '', date_of_birth: '', gender: 'f' });
  const [consented, setConsented] = useState(false);
  const [channel, setChannel] = useState('web');
  const [notice, setNotice] = useState('');
  const [person, setPerson] = useState<Person | null>(null);
  const action = useAction();
  const requireConsent = settings.data?.require_consent === true;

  const submit = (e: Event) => {
    e.preventDefault();
    setPerson(null);
    void action.run(async () => {
      const consent = consented ? { obtained_at: new Date().toISOString(), channel, notice_version: notice } : undefined;
      const body =
        kind === 'nin' ? { nin: value.trim(), reason } :
        kind === 'vnin' ? { vnin: value.trim(), reason } :
        kind === 'phone' ? { phone_no: value.trim(), reason } :
        { ...demo, reason: 'nyscCheck' };
      const path = kind === 'nin' ? '/verify-nin' : `/verify-nin/${kind}`;
      const r = await call<{ data: Person }>('POST', path, { json: { ...body, ...(consent ? { consent } : {}) } });
      setPerson(r.data.data);
    });
  };

  const reasonOptions = (reasons.data?.data ?? [{ key: 'corporate', label: 'Corporate' }]).map((r) => ({ value: r.key, label: r.label }));
  return (
    <Page title="Verify">
      <form onSubmit={submit} aria-label="Verify a person">
        <Select label="Look up by" name="kind" value={kind} onChange={(v) => { setKind(v as Kind); setValue(''); }} options={KINDS} />
        {kind === 'nin' ? <Field label="NIN" name="nin" value={value} onInput={setValue} required inputMode="numeric" hint="11 digits" /> : null}
        {kind === 'vnin' ? <Field label="Virtual NIN" name="vnin" value={value} onInput={setValue} required hint="16 letters and digits, made by the person for us" /> : null}
        {kind === 'phone' ? <Field label="Phone number" name="phone_no" value={value} onInput={setValue} required inputMode="tel" hint="11 digits starting with 0" /> : null}
        {kind === 'demography' ? (
          <>
            <Field label="First name" name="first_name" value={demo.first_name} onInput={(v) => setDemo({ ...demo, first_name: v })} required />
            <Field label="Last name" name="last_name" value={demo.last_name} onInput={(v) => setDemo({ ...demo, last_name: v })} required />
            <Field label="Date of birth" name="date_of_birth" value={demo.date_of_birth} onInput={(v) => setDemo({ ...demo, date_of_birth: v })} required hint="dd-mm-yyyy" />
            <Select label="Gender" name="gender" value={demo.gender} onChange={(v) => setDemo({ ...demo, gender: v })} options={[{ value: 'f', label: 'Female' }, { value: 'm', label: 'Male' }]} />
          </>
        ) : (
          <Select label="Reason" name="reason" value={reason} onChange={setReason} options={reasonOptions} />
        )}
        <fieldset>
          <legend>Consent{requireConsent ? ' (required by your organisation)' : ''}</legend>
          <div class="check">
            <input id="f-consented" type="checkbox" checked={consented} onChange={(e) => setConsented((e.target as HTMLInputElement).checked)} />
            <label for="f-consented">The person agreed to this check just now</label>
          </div>
          {consented ? (
            <>
              <Select label="How they agreed" name="channel" value={channel} onChange={setChannel} options={CHANNELS} />
              <Field label="Privacy notice version" name="notice_version" value={notice} onInput={setNotice} required hint="Which notice they were shown" />
            </>
          ) : null}
        </fieldset>
        <ErrorText error={action.error} />
        <button type="submit" disabled={action.busy}>
          Verify
        </button>
      </form>
      {person ? <PersonCard person={person} /> : null}
    </Page>
  );
}

function PersonCard({ person }: { person: Person }) {
  const rows: [string, string][] = [
    ['First name', person.fname ?? ''],
    ['Middle name', person.mname ?? ''],
    ['Last name', person.lname ?? ''],
    ['Date of birth', person.dob ?? ''],
    ['Gender', person.gender ?? ''],
    ['NIN', person.nin ?? ''],
    ['Phone', person.phone ?? ''],
    ['Address', [person.residenceAdress, person.residenceTown, person.residenceState].filter(Boolean).join(', ')],
    ['Reference', person.reference_id],
  ];
  return (
    <article class="person" aria-label="Verified person">
      {person.image ? <img src={`data:image/jpeg;base64,${person.image}`} alt={`Photo of ${person.fname} ${person.lname}`} width={120} height={120} /> : null}
      <h2>
        {person.fname} {person.lname}
      </h2>
      <dl>
        {rows.filter(([, v]) => v).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <p>
        <a href={`${API}/verify-nin/slip/${person.reference_id}`} target="_blank" rel="noopener">
          Print slip (PDF)
        </a>
      </p>
    </article>
  );
}
