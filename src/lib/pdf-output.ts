import type PDFDocument from 'pdfkit';

/**
 * A pdfkit document's bytes: collects what it writes and resolves with the whole file once
 * `doc.end()` has flushed it (rejects on its error). Every PDF the service prints (slips, invoices,
 * statements) is made whole in memory: one page or a few, never streamed to the client half-made.
 */
export function pdfBytes(doc: InstanceType<typeof PDFDocument>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  return new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
}
