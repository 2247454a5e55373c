// How the e-mails write amounts and counts, alike in every template.

/** Integer kobo as `NGN 11,015.23`. */
export function formatNgn(kobo: number): string {
  const sign = kobo < 0 ? '-' : '';
  const abs = Math.abs(kobo);
  return `${sign}NGN ${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}

/** A count of units as `12,500`. */
export const units = (n: number): string => n.toLocaleString('en-US');

/** What a sealed template gives: the words, without the recipient (the caller names them). */
export type Words = { subject: string; text: string };
