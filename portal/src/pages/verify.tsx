import { useState } from 'preact/hooks';
import { API, call, get, type Schemas } from '../api.ts';
import { livenessText } from '../liveness.ts';
import { ErrorText, Field, Form, Page, Select, useAction, useLoad } from '../ui.tsx';

type Kind = 'nin' | 'vnin' | 'phone' | 'demography' | 'face';
/** A found record; a face match whose faces differ answers only its reference (FaceResponse). */
type Person = Partial<Schemas['VerifiedPerson']> & { reference_id: string };
type Face = Schemas['FaceResult'];

const KINDS: { value: Kind; label: string }[] = [
  { value: 'nin', label: 'NIN' },
  { value: 'vnin', label: 'Virtual NIN' },
  { value: 'phone', label: 'Phone number' },
  { value: 'demography', label: 'Name, birth date and gender' },
  { value: 'face', label: 'NIN and selfie (face match)' },
];

/** The chosen photo as base64 (no data: prefix), read in the browser; it is sent once and never kept. */
function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('the photo could not be read'));
    reader.readAsDataURL(file);
  });
}

export const CHANNELS = [
  { value: 'web', label: 'Web' },
  { value: 'mobile', label: 'Mobile app' },
  { value: 'in_person', label: 'In person' },
  { value: 'ussd', label: 'USSD' },
  { value: 'other', label: 'Other' },
];

export function Verify() {
  const reasons = useLoad(() => get<Schemas['ReasonList']>('/nimc-reasons'), []);
  const settings = useLoad(() => get<Schemas['OrganisationSettings']>('/me/organisation'), []);
  const [kind, setKind] = useState<Kind>('nin');
  const [value, setValue] = useState('');
  const [reason, setReason] = useState('corporate');
  const [demo, setDemo] = useState({ first_name: '', last_name: '', date_of_birth: '', gender: 'f' });
  const [consented, setConsented] = useState(false);
  const [channel, setChannel] = useState('web');
  const [notice, setNotice] = useState('');
  const [person, setPerson] = useState<Person | null>(null);
  const [selfie, setSelfie] = useState<File | null>(null);
  const [face, setFace] = useState<Face | null>(null);
  const action = useAction();
  // A face is biometric data: a face match always needs the person's consent.
  const requireConsent = settings.data?.require_consent === true || kind === 'face';

  const submit = (e: Event) => {
    e.preventDefault();
    setPerson(null);
    setFace(null);
    void action.run(async () => {
      const consent = consented ? { obtained_at: new Date().toISOString(), channel, notice_version: notice } : undefined;
      if (kind === 'face') {
        if (!selfie) throw new Error('Choose or take a selfie first');
        const r = await call<Schemas['FaceResponse']>('POST', '/verify-nin/face', { json: { nin: value.trim(), reason, selfie: await readBase64(selfie), ...(consent ? { consent } : {}) } });
        setPerson(r.data.data);
        setFace(r.data.face);
        return;
      }
      const body =
        kind === 'nin' ? { nin: value.trim(), reason } :
        kind === 'vnin' ? { vnin: value.trim(), reason } :
        kind === 'phone' ? { phone_no: value.trim(), reason } :
        { ...demo, reason: 'nyscCheck' };
      const path = kind === 'nin' ? '/verify-nin' : `/verify-nin/${kind}`;
      const r = await call<Schemas['VerificationResponse']>('POST', path, { json: { ...body, ...(consent ? { consent } : {}) } });
      setPerson(r.data.data);
    });
  };

  const reasonOptions = (reasons.data?.data ?? [{ key: 'corporate', label: 'Corporate' }]).map((r) => ({ value: r.key, label: r.label }));
  return (
    <Page title="Verify">
      <Form action={action} onSubmit={submit} aria-label="Verify a person">
        <Select label="Look up by" name="kind" value={kind} onChange={(v) => { setKind(v as Kind); setValue(''); }} options={KINDS} />
        {kind === 'nin' || kind === 'face' ? <Field label="NIN" name="nin" value={value} onInput={setValue} required inputMode="numeric" hint="11 digits" /> : null}
        {kind === 'face' ? (
          <div class="field">
            <label for="f-selfie">Selfie</label>
            {/* capture="user": a phone opens its front camera; a computer offers a file. */}
            <input id="f-selfie" name="selfie" type="file" accept="image/jpeg,image/png,image/webp" capture="user" required onChange={(e) => setSelfie((e.target as HTMLInputElement).files?.[0] ?? null)} />
            <small>JPEG, PNG or WebP, at most 2 MiB; one face, close enough. Liveness is not checked: a photo of a photo would pass.</small>
            {settings.data?.require_liveness ? (
              <small role="note">
                <strong>Your organisation requires a liveness check with every face match</strong>, so a selfie alone is refused (liveness_required): make a verification link, whose page asks the person to turn their head.
              </small>
            ) : null}
          </div>
        ) : null}
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
      </Form>
      {face ? <FaceCard face={face} /> : null}
      {person ? <PersonCard person={person} slip={kind !== 'face'} /> : null}
    </Page>
  );
}

function FaceCard({ face }: { face: Face }) {
  const verdict = face.status === 'no_reference_photo' ? 'Not compared: the record has no usable photo' : face.match ? 'Match' : 'No match';
  return (
    <article class="face" aria-label="Face match">
      <h2>{verdict}</h2>
      <dl>
        {face.confidence !== null ? (
          <div>
            <dt>Confidence</dt>
            <dd>{face.confidence} (threshold {face.threshold})</dd>
          </div>
        ) : null}
        <div>
          <dt>Liveness</dt>
          <dd data-liveness={face.liveness}>{livenessText(face.liveness)}</dd>
        </div>
        <div>
          <dt>Model</dt>
          <dd>{face.model}</dd>
        </div>
      </dl>
    </article>
  );
}

function PersonCard({ person, slip }: { person: Person; slip: boolean }) {
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
      {slip ? (
        <p>
          <a href={`${API}/verify-nin/slip/${person.reference_id}`} target="_blank" rel="noopener">
            Print slip (PDF)
          </a>
        </p>
      ) : null}
    </article>
  );
}
