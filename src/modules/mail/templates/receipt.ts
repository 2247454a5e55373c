import type { ReceiptPayload } from '../mail.schemas.ts';
import { formatNgn, units } from './format.ts';

export type Mail = { subject: string; text: string; html: string };
// Receipts are read in Nigeria: the date is the Lagos calendar day, whatever the server's zone.
const lagosDate = new Intl.DateTimeFormat('en-GB', { timeZone: 'Africa/Lagos', day: 'numeric', month: 'long', year: 'numeric' });
const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The receipt e-mail. Pure, so its wording is testable without a mail server. */
export function renderReceipt(p: ReceiptPayload, read: { newBalance: number | null; invoiceNumber: string | null }): Mail {
  const { newBalance } = read;
  const lines: [string, string][] = [
    ['Organisation', p.organisation],
    ['Reference', p.reference],
    // The VAT invoice's number (GET /topups/{reference}/invoice), so the two can be filed together.
    ...(read.invoiceNumber ? [['Invoice number', read.invoiceNumber] as [string, string]] : []),
    ['Date', lagosDate.format(new Date(p.credited_at))],
    ['Units bought', units(p.units)],
    ['Bonus units', units(p.bonus_units)],
    ['Units credited', units(p.units + p.bonus_units)],
    ['Base amount', formatNgn(p.base_amount)],
    ['VAT', formatNgn(p.vat_amount)],
    // The invoice's word for it, so a receipt and its invoice read alike.
    ['Processor fee', formatNgn(p.service_charge)],
    ['Total paid', formatNgn(p.total_amount)],
  ];
  if (newBalance !== null) lines.push(['New balance', `${units(newBalance)} units`]);
  // Badges exist for self-hosted tenants only; hosted tenants' receipts say nothing about them.
  if (p.tenancy === 'self-hosted') lines.push(['Loyalty badge', p.loyalty_badge ? capitalise(p.loyalty_badge) : 'none yet (Silver from 20,000 lifetime units)']);
  const note = 'There is no per-print charge for verification slips.';
  // An automatic top-up was paid by nobody at that moment: the receipt says why and with which card.
  const why = p.automatic
    ? `Automatic top-up: the balance fell below ${units(p.automatic.below_units)} units, so ${units(p.units)} units were charged to the ${p.automatic.card}. Turn it off or change it on the portal's Top up page.`
    : null;
  const intro = why ? [why, ''] : [];
  const text = [`Payment receipt for ${p.organisation}`, '', ...intro, ...lines.map(([k, v]) => `${k}: ${v}`), '', note, ''].join('\n');
  const rows = lines.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('');
  const html = `<!doctype html><html><body><h1>Payment receipt</h1>${why ? `<p>${escapeHtml(why)}</p>` : ''}<table>${rows}</table><p>${escapeHtml(note)}</p></body></html>`;
  return { subject: `${p.automatic ? 'Automatic top-up: payment receipt' : 'Payment receipt'} ${p.reference}`, text, html };
}
