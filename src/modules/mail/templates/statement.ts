import type { Words } from './format.ts';

/** `month`: the Lagos month (YYYY-MM) whose statement is ready. */
export type StatementData = { organisation: string; month: string };

const monthName = (month: string) => new Date(`${month}-15T12:00:00Z`).toLocaleString('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' });

/** The e-mail names the portal page (a reader clicks; the API's path needs a token and an Accept header). */
export function statement(d: StatementData, portal: string): Words {
  const text = [
    `The statement of ${d.organisation} for ${monthName(d.month)} (Lagos time) is ready: the opening balance, the month's`,
    'verifications, top-ups (with their invoices), adjustments and refunds, and the closing balance.',
    '',
    'Download it (PDF or CSV) in the portal:',
    `${portal}/portal/history?statement=${d.month}`,
    '',
    'You receive this because you are a finance officer of the organisation.',
    '',
  ].join('\n');
  return { subject: `Statement for ${monthName(d.month)}: ${d.organisation}`, text };
}
