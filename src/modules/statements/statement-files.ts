import PDFDocument from 'pdfkit';
import { nairaText, printable } from '../../lib/pdf-text.ts';
import { describeLine, type Statement } from './statement.ts';
import { pdfBytes } from '../../lib/pdf-output.ts';
import { faceMatchesNote } from '../wallet/index.ts';

export const STATEMENT_CSV_COLUMNS = ['date', 'kind', 'reference', 'description', 'units', 'balance_units', 'base_naira', 'vat_naira', 'fee_naira', 'total_naira'] as const;

/** Kobo as a plain decimal of naira for a spreadsheet: 1101523 -> 11015.23. */
const nairaDecimal = (kobo: number) => `${kobo < 0 ? '-' : ''}${Math.floor(Math.abs(kobo) / 100)}.${String(Math.abs(kobo) % 100).padStart(2, '0')}`;

/** RFC 4180 field; a text that a spreadsheet would run as a formula is prefixed with `'` (as the other exports do). */
function field(v: string | number | null): string {
  if (v === null) return '';
  // A number (units, a naira decimal such as -11015.23) is data, not a formula.
  if (typeof v === 'number' || /^-?\d+(\.\d+)?$/.test(v)) return String(v);
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The closing row's words: the month's end, or the balance so far while the month runs. */
const closingLabel = (s: Statement) => (s.complete ? 'Closing balance' : 'Balance so far (month in progress)');

export function statementCsv(s: Statement): string {
  const rows: (string | number | null)[][] = [[`${s.month}-01`, 'opening_balance', null, 'Balance at the start of the month', null, s.opening_units, null, null, null, null]];
  for (const l of s.lines) {
    const money =
      l.kind === 'topup' ? [nairaDecimal(l.base_kobo), nairaDecimal(l.vat_kobo), nairaDecimal(l.fee_kobo), nairaDecimal(l.total_kobo)] : l.kind === 'refund' ? [null, null, null, nairaDecimal(-l.amount_kobo)] : [null, null, null, null];
    const reference = l.kind === 'topup' || l.kind === 'refund' ? l.reference : null;
    rows.push([l.date, l.kind, reference, l.description, l.kind === 'refund' ? 0 : l.units, null, ...money]);
  }
  rows.push([s.as_of, 'closing_balance', null, s.complete ? 'Balance at the end of the month' : 'Balance so far (month in progress)', null, s.closing_units, null, null, null, null]);
  return [STATEMENT_CSV_COLUMNS.join(','), ...rows.map((r) => r.map(field).join(','))].join('\r\n') + '\r\n';
}

const A4 = { width: 595.28, height: 841.89 };
const MARGIN = 48;
const INK = '#111111';
const MUTED = '#555555';

const signed = (n: number) => (n > 0 ? `+${n.toLocaleString('en-US')}` : n.toLocaleString('en-US'));

/** A4 pages: the balances, then one row per line (pages added as they fill), then the totals. */
export async function statementPdf(s: Statement): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: MARGIN, info: { Title: `Statement ${s.month}`, Creator: 'idverify', Producer: 'idverify' } });
  const done = pdfBytes(doc);
  const width = A4.width - 2 * MARGIN;
  const cols = { date: MARGIN, text: MARGIN + 72, units: MARGIN + 330, money: MARGIN + 390 };
  const moneyWidth = width - (cols.money - MARGIN);

  doc.font('Helvetica-Bold').fontSize(18).fillColor(INK).text(`Statement for ${s.month}`, MARGIN, MARGIN);
  doc.font('Helvetica').fontSize(10).fillColor(INK).text(printable(s.organisation));
  doc.fillColor(MUTED).text('Lagos time. Units are the wallet\'s; money in naira.');
  let y = doc.y + 14;
  // A row's description wraps within its column and pushes the next rows down: nothing is cut off.
  const row = (date: string, text: string, units: string, money: string, bold = false) => {
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(9.5).fillColor(INK);
    // A row with no figures (a top-up's breakdown) may use the figures' width too.
    const textWidth = units || money ? cols.units - cols.text - 8 : width - (cols.text - MARGIN);
    const words = printable(text);
    const height = Math.max(16, doc.heightOfString(words, { width: textWidth }) + 5);
    if (y + height > A4.height - MARGIN - 14) {
      doc.addPage();
      y = MARGIN;
    }
    doc.text(date, cols.date, y, { width: 70, lineBreak: false });
    doc.text(words, cols.text, y, { width: textWidth });
    doc.text(units, cols.units, y, { width: 52, align: 'right', lineBreak: false });
    doc.text(money, cols.money, y, { width: moneyWidth, align: 'right', lineBreak: false });
    y += height;
  };
  row('Date', 'Description', 'Units', 'Amount', true);
  row(`${s.month}-01`, 'Opening balance', s.opening_units.toLocaleString('en-US'), '', true);
  for (const l of s.lines) {
    if (l.kind === 'topup') {
      row(l.date, `${l.description} (${l.reference})`, signed(l.units), nairaText(l.total_kobo));
      row('', `   base ${nairaText(l.base_kobo)}, VAT ${nairaText(l.vat_kobo)}, processor fee ${nairaText(l.fee_kobo)}`, '', '');
    } else if (l.kind === 'refund') {
      row(l.date, `${l.description} (${l.reference})`, '0', nairaText(-l.amount_kobo));
    } else if (l.kind === 'verifications' && l.face_match_count > 0) {
      // What a face match costs on a row of its own, at the full width (as a top-up's breakdown).
      row(l.date, describeLine({ ...l, face_match_count: 0, face_units: 0 }), signed(l.units), '');
      row('', `   ${faceMatchesNote(l.face_match_count, -l.face_units)}`, '', '');
    } else {
      row(l.date, l.description, signed(l.units), '');
    }
  }
  row(s.as_of, closingLabel(s), s.closing_units.toLocaleString('en-US'), '', true);
  y += 10;
  const t = s.totals;
  row('', 'Units used by live verifications', signed(t.verification_units), '');
  row('', 'Units bought (bonus included)', signed(t.topup_units), nairaText(t.topup_total_kobo));
  row('', 'Units adjusted', signed(t.adjustment_units), '');
  row('', 'Payments refunded', '', nairaText(-t.refund_total_kobo));
  const identity = `${s.opening_units.toLocaleString('en-US')} ${t.movement_units < 0 ? '-' : '+'} ${Math.abs(t.movement_units).toLocaleString('en-US')} = ${s.closing_units.toLocaleString('en-US')}`;
  row('', `Opening + movements = ${s.complete ? 'closing' : 'balance so far'}: ${identity}`, '', '', true);
  doc.end();
  return done;
}
