import { useEffect } from 'preact/hooks';
import { formatNaira, formatUnits, get, type Schemas } from '../api.ts';
import { keepsAccounts, useSession } from '../session.tsx';
import { ErrorText, Page, useLoad } from '../ui.tsx';


/** Units per day as bars; the same numbers are in a table for screen readers. */
function UsageChart({ days, line }: { days: Schemas['DailyUsage']['data']; line: number | null }) {
  const max = Math.max(1, ...days.map((d) => d.units));
  const w = 600;
  const h = 160;
  const bar = w / days.length;
  const total = days.reduce((s, d) => s + d.units, 0);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${w} ${h + 20}`} role="img" aria-label={`Units used per day over the last ${days.length} days: ${total} in all`}>
        {days.map((d, i) => {
          const bh = Math.round((d.units / max) * h);
          return <rect key={d.day} x={i * bar + 1} y={h - bh} width={Math.max(1, bar - 2)} height={bh} class="bar"><title>{`${d.day}: ${d.units}`}</title></rect>;
        })}
        <line x1="0" y1={h} x2={w} y2={h} class="axis" />
        <text x="0" y={h + 16} class="tick">{days[0]?.day}</text>
        <text x={w} y={h + 16} class="tick" text-anchor="end">{days[days.length - 1]?.day}</text>
      </svg>
      <figcaption>
        Units used per day, last {days.length} days ({total} in all){line !== null ? `; low-balance line at ${formatUnits(line)}` : ''}
      </figcaption>
      <div class="visually-hidden">
      <table>
        <caption>Units used per day</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Units</th>
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr key={d.day}>
              <td>{d.day}</td>
              <td>{d.units}</td>
            </tr>
          ))}
        </tbody>
      </table>
      </div>
    </figure>
  );
}

export function Overview() {
  const { me, refresh } = useSession();
  const accounts = keepsAccounts(me);
  const usage = useLoad(() => (accounts ? get<Schemas['DailyUsage']>('/usage/daily?days=30') : Promise.resolve(null)), [accounts]);
  const settings = useLoad(() => get<Schemas['OrganisationSettings']>('/me/organisation'), []);
  useEffect(() => {
    void refresh();
  }, []);
  const org = me.organisation;
  const line = settings.data?.low_balance_units ?? null;
  const units = org?.units;
  return (
    <Page title="Overview">
      <dl class="facts">
        <div>
          <dt>Organisation</dt>
          <dd>{org?.name}</dd>
        </div>
        {units !== undefined ? (
          <div>
            <dt>Balance</dt>
            <dd class={line !== null && units < line ? 'balance low' : 'balance'} data-testid="balance">
              {formatUnits(units)}
            </dd>
          </div>
        ) : null}
        {units !== undefined && org?.unit_cost !== undefined ? (
          <div>
            <dt>Balance value</dt>
            <dd data-testid="balance-value">
              {formatNaira(units * org.unit_cost)} at {formatNaira(org.unit_cost)} a unit
            </dd>
          </div>
        ) : null}
        {line !== null ? (
          <div>
            <dt>Low-balance line</dt>
            <dd>{formatUnits(line)}</dd>
          </div>
        ) : null}
        <div>
          <dt>Subscription</dt>
          <dd>{org?.subscription_active ? 'Active' : 'Inactive: live verifications are refused (fixture NINs still work)'}</dd>
        </div>
        {org?.loyalty_badge !== undefined ? (
          <div>
            <dt>Loyalty badge</dt>
            <dd>{org.loyalty_badge ?? 'None yet'}</dd>
          </div>
        ) : null}
      </dl>
      <ErrorText error={usage.error} />
      {usage.data ? <UsageChart days={usage.data.data} line={line} /> : null}
    </Page>
  );
}
