import { units, type Words } from './format.ts';

/** `month`: the Lagos month whose statement (so far) the e-mail links. */
export type LowBalanceData = { organisation: string; balance: number; line: number; month: string };

/** The portal's pages are linked (a reader clicks, not calls). */
export function lowBalance(d: LowBalanceData, portal: string): Words {
  const text = [
    `The unit balance of ${d.organisation} is ${units(d.balance)} units, below the alert line of ${units(d.line)} units set for it.`,
    '',
    'Verifications stop with 402 once no unit is left: top up in the portal to keep them running:',
    `${portal}/portal/top-up`,
    '',
    `Where the units went this month: the statement for ${d.month}, in the portal:`,
    `${portal}/portal/history?statement=${d.month}`,
    '',
    `You will not hear of this again until the balance has been back at or above ${units(d.line)} units.`,
    '',
  ].join('\n');
  return { subject: `Low balance: ${units(d.balance)} units left for ${d.organisation}`, text };
}
