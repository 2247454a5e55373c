import PDFDocument from 'pdfkit';
import { nairaText, printable } from '../../lib/pdf-text.ts';
import { pdfBytes } from '../../lib/pdf-output.ts';

export type Party = { name: string; address: string | null; tin: string | null };

/** What a VAT invoice shows; amounts in kobo, as stored. */
export type InvoiceContent = {
  number: string;
  /** When the number was given (the credit). */
  issuedAt: Date;
  paidAt: Date;
  seller: Party;
  buyer: Party;
  reference: string;
  units: number;
  bonusUnits: number;
  unitCostKobo: number;
  baseAmount: number;
  vatAmount: number;
  vatBps: number;
  serviceCharge: number;
  totalAmount: number;
};

const A4 = { width: 595.28, height: 841.89 };
const MARGIN = 48;
const INK = '#111111';
const MUTED = '#555555';

const lagosDate = new Intl.DateTimeFormat('en-GB', { timeZone: 'Africa/Lagos', day: '2-digit', month: 'long', year: 'numeric' });

/** 750 basis points as `7.5 %`. */
const percent = (bps: number) => `${(bps / 100).toLocaleString('en-US', { maximumFractionDigits: 2 })} %`;

/** A party's block, wrapped to its column; answers where it ends (a long address takes several lines). */
function party(doc: PDFKit.PDFDocument, title: string, p: Party, x: number, y: number, width: number): number {
  doc.font('Helvetica').fontSize(9).fillColor(MUTED).text(title, x, y, { width });
  doc.font('Helvetica-Bold').fontSize(11).fillColor(INK).text(printable(p.name), x, y + 13, { width });
  doc.font('Helvetica').fontSize(10).fillColor(INK);
  if (p.address) doc.text(printable(p.address), { width });
  doc.text(p.tin ? `TIN: ${p.tin}` : 'TIN: not on file', { width });
  return doc.y;
}

/** One A4 page: the parties, the number, the payment, and the amounts in naira. */
export async function renderInvoice(inv: InvoiceContent): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: MARGIN, info: { Title: `Invoice ${inv.number}`, Creator: 'idverify', Producer: 'idverify' } });
  const done = pdfBytes(doc);

  const width = A4.width - 2 * MARGIN;
  doc.font('Helvetica-Bold').fontSize(20).fillColor(INK).text('VAT invoice', MARGIN, MARGIN);
  doc.font('Helvetica').fontSize(10).fillColor(INK);
  doc.text(`Invoice number: ${inv.number}`, MARGIN, MARGIN + 30);
  doc.text(`Date of issue: ${lagosDate.format(inv.issuedAt)}`);
  doc.text(`Date of payment: ${lagosDate.format(inv.paidAt)}`);
  doc.text(`Payment reference: ${inv.reference}`);

  const partiesY = MARGIN + 104;
  const half = (width - 24) / 2;
  const sellerEnd = party(doc, 'Seller', inv.seller, MARGIN, partiesY, half);
  const buyerEnd = party(doc, 'Buyer', inv.buyer, MARGIN + half + 24, partiesY, half);

  // The amounts: one line for the units bought, then base, VAT, the processor's fee and the total,
  // below the longer of the two parties (at the earlier fixed place when both are short).
  let y = Math.max(partiesY + 110, sellerEnd + 24, buyerEnd + 24);
  const cols = { desc: MARGIN, qty: MARGIN + 230, price: MARGIN + 300, amount: MARGIN + 400 };
  const amountWidth = width - (cols.amount - MARGIN);
  doc.moveTo(MARGIN, y - 6).lineTo(A4.width - MARGIN, y - 6).lineWidth(0.5).stroke('#cccccc');
  doc.font('Helvetica-Bold').fontSize(10).fillColor(INK);
  doc.text('Description', cols.desc, y);
  doc.text('Units', cols.qty, y);
  doc.text('Unit price', cols.price, y);
  doc.text('Amount', cols.amount, y, { width: amountWidth, align: 'right' });
  y += 20;
  doc.font('Helvetica').fontSize(10);
  doc.text('Identity verification units', cols.desc, y);
  doc.text(inv.units.toLocaleString('en-US'), cols.qty, y);
  doc.text(nairaText(inv.unitCostKobo), cols.price, y);
  doc.text(nairaText(inv.baseAmount), cols.amount, y, { width: amountWidth, align: 'right' });
  if (inv.bonusUnits > 0) {
    y += 18;
    doc.text('Bonus units (free of charge)', cols.desc, y);
    doc.text(inv.bonusUnits.toLocaleString('en-US'), cols.qty, y);
    doc.text(nairaText(0), cols.amount, y, { width: amountWidth, align: 'right' });
  }
  y += 30;
  const totals: [string, number, boolean][] = [
    ['Base amount', inv.baseAmount, false],
    [`VAT ${percent(inv.vatBps)}`, inv.vatAmount, false],
    ['Processor fee', inv.serviceCharge, false],
    ['Total paid', inv.totalAmount, true],
  ];
  for (const [label, kobo, strong] of totals) {
    doc.font(strong ? 'Helvetica-Bold' : 'Helvetica').fontSize(strong ? 12 : 10).fillColor(INK);
    doc.text(label, cols.price, y);
    doc.text(nairaText(kobo), cols.amount, y, { width: amountWidth, align: 'right' });
    y += strong ? 22 : 18;
  }

  doc.moveTo(MARGIN, y + 10).lineTo(A4.width - MARGIN, y + 10).lineWidth(0.5).stroke('#cccccc');
  doc.font('Helvetica').fontSize(8.5).fillColor(MUTED).text(
    'VAT is charged on the base amount only. The processor fee passes on what the payment processor keeps of the payment. ' +
      'Amounts in Nigerian naira (NGN). Dates in Lagos time.',
    MARGIN,
    y + 18,
    { width },
  );
  doc.end();
  return done;
}
