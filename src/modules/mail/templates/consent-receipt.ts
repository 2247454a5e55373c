import type { Words } from './format.ts';

/**
 * The person's consent receipt, sent to the address they typed on the receipt page. `document`: the
 * receipt itself as plain text (the receipts module writes it, the same words as its page and PDF);
 * `link`: where its page, PDF and JSON stay readable.
 */
export type ConsentReceiptData = { controller: string; document: string; link: string };

export function consentReceipt(d: ConsentReceiptData): Words {
  const text = [d.document, '', `This receipt, its PDF and its machine-readable form (ISO/IEC TS 27560): ${d.link}`].join('\n');
  return { subject: `Your consent receipt from ${d.controller}`, text };
}
