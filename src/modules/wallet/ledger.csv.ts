import { Transform } from 'node:stream';
import { LEDGER_CSV_COLUMNS } from './ledger.schemas.ts';

// RFC 4180 (the lines themselves are formatted by the query): CRLF line ends. No field can start a
// spreadsheet formula: numbers are numbers, references start with REF-/TOP-, `details` is a JSON
// object (starts with `{`), kinds and dates are ours.

export const CSV_HEADER = `${LEDGER_CSV_COLUMNS.join(',')}\r\n`;

// One write per line would make a chunk (and a chunked-encoding frame) per line: lines are gathered
// up to this many characters before they are pushed on.
const BATCH_CHARS = 64 * 1024;

/**
 * slonik's row events (one CSV line each) in, CSV text out, the header first. Backpressure passes
 * through: when the reader is full, this stops taking rows, and the row stream stops fetching.
 */
export function ledgerCsvTransform(): Transform {
  let pending = '';
  const t = new Transform({
    writableObjectMode: true,
    transform(event: { data: { line: string } }, _enc, done) {
      pending += `${event.data.line}\r\n`;
      if (pending.length >= BATCH_CHARS) {
        const out = pending;
        pending = '';
        this.push(out);
      }
      done();
    },
    flush(done) {
      done(null, pending);
    },
  });
  // The header goes out at once, before the first batch of rows.
  t.push(CSV_HEADER);
  return t;
}
