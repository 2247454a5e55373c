import { useEffect, useState } from 'preact/hooks';
import { call, get } from '../api.ts';
import { AdminOnly } from '../layout.tsx';
import { ErrorText, Field, Notice, Page, useAction, useLoad } from '../ui.tsx';

type Settings = { require_consent: boolean; require_mfa?: boolean; low_balance_units?: number | null; face_match_threshold?: number };

export function Settings() {
  const loaded = useLoad(() => get<Settings>('/me/organisation'), []);
  const [consent, setConsent] = useState(false);
  const [mfa, setMfa] = useState(false);
  const [line, setLine] = useState('');
  const [threshold, setThreshold] = useState('');
  const [saved, setSaved] = useState(false);
  const action = useAction();
  useEffect(() => {
    if (!loaded.data) return;
    setConsent(loaded.data.require_consent);
    setMfa(loaded.data.require_mfa ?? false);
    setLine(loaded.data.low_balance_units == null ? '' : String(loaded.data.low_balance_units));
    setThreshold(loaded.data.face_match_threshold == null ? '' : String(loaded.data.face_match_threshold));
  }, [loaded.data]);
  const save = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void action.run(async () => {
      const patch: Record<string, unknown> = { require_consent: consent };
      if (loaded.data && 'require_mfa' in loaded.data) patch.require_mfa = mfa;
      if (loaded.data && 'low_balance_units' in loaded.data) patch.low_balance_units = line.trim() === '' ? null : Number(line);
      if (loaded.data && 'face_match_threshold' in loaded.data && threshold.trim() !== '') patch.face_match_threshold = Number(threshold);
      await call('PATCH', '/me/organisation', { json: patch });
      setSaved(true);
      loaded.reload();
    });
  };
  return (
    <AdminOnly>
      <Page title="Settings">
        <ErrorText error={loaded.error} />
        {loaded.data ? (
          <form onSubmit={save} aria-label="Organisation settings">
            <div class="check">
              <input id="f-require-consent" type="checkbox" checked={consent} onChange={(e) => setConsent((e.target as HTMLInputElement).checked)} />
              <label for="f-require-consent">Require consent on every live verification</label>
            </div>
            {'require_mfa' in loaded.data ? (
              <div class="check">
                <input id="f-require-mfa" type="checkbox" checked={mfa} onChange={(e) => setMfa((e.target as HTMLInputElement).checked)} />
                <label for="f-require-mfa">Require two-factor sign-in for administrators</label>
              </div>
            ) : null}
            {'low_balance_units' in loaded.data ? (
              <Field label="Low-balance alert (units)" name="low_balance_units" type="number" min="0" inputMode="numeric" value={line} onInput={setLine} hint="An e-mail to the administrators when the balance falls below it; empty turns it off" />
            ) : null}
            {'face_match_threshold' in loaded.data ? (
              <Field
                label="Face match threshold (1-100)"
                name="face_match_threshold"
                type="number"
                min="1"
                inputMode="numeric"
                value={threshold}
                onInput={setThreshold}
                hint="A selfie matches at this confidence or more (default 75). Higher refuses more of the right people; lower accepts more of the wrong ones"
              />
            ) : null}
            <ErrorText error={action.error} />
            {saved ? <Notice>Settings saved.</Notice> : null}
            <button type="submit" disabled={action.busy}>
              Save settings
            </button>
          </form>
        ) : null}
      </Page>
    </AdminOnly>
  );
}
