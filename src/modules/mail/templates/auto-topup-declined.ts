import { units, type Words } from './format.ts';

/** `below`: the line the balance fell below; `card`: the saved card's label; `reason`: the processor's words. */
export type AutoTopupDeclinedData = { organisation: string; units: number; below: number; card: string; reason: string };

/** The e-mail names the portal's Top up page. */
export function autoTopupDeclined(d: AutoTopupDeclinedData, portal: string): Words {
  const text = [
    `The balance of ${d.organisation} fell below ${units(d.below)} units, and the automatic top-up of ${units(d.units)} units was declined on the ${d.card} (the processor said: ${d.reason}).`,
    '',
    'Automatic top-up is now turned off, and that card will not be charged again. To turn it back on, top up once with a card that works (it becomes the saved card), then switch automatic top-up on with your password:',
    `${portal}/portal/top-up`,
    '',
  ].join('\n');
  return { subject: `Automatic top-up turned off: the card was declined (${d.organisation})`, text };
}
