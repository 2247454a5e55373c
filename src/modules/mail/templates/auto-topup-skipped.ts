import { units, type Words } from './format.ts';

/**
 * An automatic top-up that was not made while the balance is below its line. `reason`: the skip's
 * recorded detail; `heldBack`: how many more were skipped in the hour before (the mail window's count).
 */
export type AutoTopupSkippedData = { organisation: string; units: number; below: number; balance: number; reason: string; heldBack: number };

export function autoTopupSkipped(d: AutoTopupSkippedData, portal: string): Words {
  const why = d.reason === 'daily cap reached' ? 'the automatic top-ups allowed per day (max_per_day) were all made today' : d.reason;
  const text = [
    `The balance of ${d.organisation} is ${units(d.balance)} units, below your automatic top-up line of ${units(d.below)}, but the automatic top-up of ${units(d.units)} units was not made: ${why}.`,
    ...(d.heldBack > 0 ? [`${d.heldBack} more automatic top-up${d.heldBack === 1 ? ' was' : 's were'} skipped in the hour before this e-mail.`] : []),
    '',
    'Verifications stop when the units run out. Top up now, or change the automatic top-up settings:',
    `${portal}/portal/top-up`,
    '',
    'You get at most one such e-mail an hour.',
    '',
  ].join('\n');
  return { subject: `Automatic top-up skipped: ${d.organisation} was not topped up`, text };
}
