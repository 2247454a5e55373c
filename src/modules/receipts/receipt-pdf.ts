import PDFDocument from 'pdfkit';
import { printable } from '../../lib/pdf-text.ts';
import { pdfBytes } from '../../lib/pdf-output.ts';
import type { Readable } from './readable.ts';

const MARGIN = 48;
const INK = '#111111';
const MUTED = '#555555';

/** The receipt's PDF (A4, as many pages as it takes): the page's very words, nothing of the person. */
export async function renderReceiptPdf(v: Readable, o: { receiptId: string; link: string }): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: MARGIN, info: { Title: `Consent receipt ${o.receiptId}`, Creator: 'idverify', Producer: 'idverify' } });
  const done = pdfBytes(doc);
  const width = doc.page.width - 2 * MARGIN;
  doc.font('Helvetica-Bold').fontSize(20).fillColor(INK).text(v.title, { width });
  doc.moveDown(0.4);
  doc.font('Helvetica').fontSize(10.5).fillColor(INK).text(printable(v.intro), { width });
  for (const s of v.sections) {
    doc.moveDown(0.9);
    doc.font('Helvetica-Bold').fontSize(13).fillColor(INK).text(s.heading, { width });
    for (const [k, val] of s.rows) {
      doc.moveDown(0.3);
      doc.font('Helvetica-Bold').fontSize(9.5).fillColor(MUTED).text(k, { width });
      doc.font('Helvetica').fontSize(10.5).fillColor(INK).text(printable(val), { width });
    }
  }
  doc.moveDown(1.2);
  doc.font('Helvetica').fontSize(8.5).fillColor(MUTED).text(`This receipt online, and its machine-readable form (ISO/IEC TS 27560): ${o.link}`, { width });
  doc.end();
  return done;
}
