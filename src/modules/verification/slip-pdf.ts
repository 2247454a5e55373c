import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import { printable } from '../../lib/pdf-text.ts';
import { pdfBytes } from '../../lib/pdf-output.ts';

/** What a printed slip shows; the caller has decrypted the record and keeps it in memory only. */
export type SlipContent = {
  referenceId: string;
  mode: 'nin' | 'vnin' | 'phone' | 'demography';
  fixture: boolean;
  verifiedAt: Date;
  organisation: string;
  person: { nin: string; fname: string; mname: string; lname: string; dob: string; gender: string; image: string };
  /** verdict.ts: what the organisation acts on (a printed slip's verification was found). */
  verdict: 'verified' | 'not_verified' | null;
};

const A4 = { width: 595.28, height: 841.89 };
const MARGIN = 48;
const INK = '#111111';
const MUTED = '#555555';
const WARNING = '#b00020';
const MODE_LABEL = { nin: 'NIN', vnin: 'virtual NIN', phone: 'phone number', demography: 'demographic details' } as const;

const lagosTime = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Africa/Lagos',
  day: '2-digit',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hour12: false,
});

function drawQr(doc: PDFKit.PDFDocument, text: string, x: number, y: number, size: number): void {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  // Four modules of white around the symbol: scanners need the quiet zone.
  const cell = size / (modules.size + 8);
  doc.save().rect(x, y, size, size).fill('#ffffff');
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) {
      if (modules.get(row, col)) doc.rect(x + (col + 4) * cell, y + (row + 4) * cell, cell, cell);
    }
  }
  doc.fill('#000000').restore();
}

function drawPhoto(doc: PDFKit.PDFDocument, image: string, x: number, y: number, w: number, h: number): void {
  doc.save().lineWidth(0.75).rect(x, y, w, h).stroke('#999999').restore();
  if (image) {
    try {
      doc.image(Buffer.from(image, 'base64'), x + 2, y + 2, { fit: [w - 4, h - 4], align: 'center', valign: 'center' });
      return;
    } catch {
      // A photo the PDF library cannot read (not JPEG or PNG, truncated) leaves the box labelled.
    }
  }
  doc.font('Helvetica').fontSize(9).fillColor(MUTED).text('No photo on record', x, y + h / 2 - 5, { width: w, align: 'center' });
}

/** One A4 page: who was verified, the reference as text and QR code, when and for whom. */
export async function renderSlip(s: SlipContent): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    // The document's metadata names the reference only, never the person.
    info: { Title: `Verification slip ${s.referenceId}`, Creator: 'idverify', Producer: 'idverify' },
  });
  const done = pdfBytes(doc);

  const width = A4.width - 2 * MARGIN;
  doc.font('Helvetica-Bold').fontSize(20).fillColor(INK).text('Identity verification slip', MARGIN, MARGIN);
  doc.font('Helvetica').fontSize(10).fillColor(MUTED).text(`Verified by ${MODE_LABEL[s.mode]} against the national identity record`);

  let top = MARGIN + 56;
  if (s.fixture) {
    doc.save().rect(MARGIN, top, width, 30).fill(WARNING).restore();
    doc.font('Helvetica-Bold').fontSize(12).fillColor('#ffffff')
      .text('TEST DATA: fixture record of an invented person, not a real identity', MARGIN, top + 9, { width, align: 'center' });
    top += 44;
  }

  const photo = { x: MARGIN, y: top, w: 130, h: 160 };
  drawPhoto(doc, s.person.image, photo.x, photo.y, photo.w, photo.h);

  const rows: [string, string][] = [
    ['Surname', s.person.lname],
    ['First name', s.person.fname],
    ['Middle name', s.person.mname],
    ['Date of birth', s.person.dob],
    ['Gender', s.person.gender === 'F' ? 'Female' : s.person.gender === 'M' ? 'Male' : ''],
    ['NIN', s.person.nin],
  ];
  const labelX = photo.x + photo.w + 24;
  const valueX = labelX + 90;
  let y = top + 4;
  for (const [label, value] of rows) {
    doc.font('Helvetica').fontSize(10).fillColor(MUTED).text(label, labelX, y + 2, { width: 86 });
    doc.font('Helvetica-Bold').fontSize(13).fillColor(INK).text(printable(value) || 'Not on record', valueX, y, { width: A4.width - MARGIN - valueX, lineBreak: false, ellipsis: true });
    y += 26;
  }

  const refTop = top + photo.h + 28;
  const qrSize = 130;
  drawQr(doc, s.referenceId, A4.width - MARGIN - qrSize, refTop, qrSize);
  doc.font('Helvetica').fontSize(10).fillColor(MUTED).text('Reference', MARGIN, refTop + 8);
  doc.font('Courier-Bold').fontSize(16).fillColor(INK).text(s.referenceId, MARGIN, refTop + 24);
  doc.font('Helvetica').fontSize(10).fillColor(MUTED).text('Verified on', MARGIN, refTop + 56);
  doc.font('Helvetica-Bold').fontSize(12).fillColor(INK).text(`${lagosTime.format(s.verifiedAt)} (Lagos time)`, MARGIN, refTop + 70);
  doc.font('Helvetica').fontSize(10).fillColor(MUTED).text('Requested by', MARGIN, refTop + 94);
  doc.font('Helvetica-Bold').fontSize(12).fillColor(INK)
    .text(printable(s.organisation), MARGIN, refTop + 108, { width: width - qrSize - 16, lineBreak: false, ellipsis: true });
  doc.font('Helvetica').fontSize(10).fillColor(MUTED).text('Verdict', MARGIN, refTop + 134);
  doc.font('Helvetica-Bold').fontSize(12).fillColor(INK).text(s.verdict === 'verified' ? 'verified' : s.verdict === 'not_verified' ? 'not verified' : 'not decided', MARGIN + 50, refTop + 132);

  const footY = refTop + qrSize + 24;
  doc.moveTo(MARGIN, footY).lineTo(A4.width - MARGIN, footY).lineWidth(0.5).stroke('#cccccc');
  doc.font('Helvetica').fontSize(8.5).fillColor(MUTED).text(
    'The QR code holds the reference only. Anyone holding this slip can confirm it with the organisation named above, ' +
      'which can read the record again with the reference while it is kept. This slip carries personal data: keep it safe.',
    MARGIN,
    footY + 8,
    { width },
  );
  doc.end();
  return done;
}
