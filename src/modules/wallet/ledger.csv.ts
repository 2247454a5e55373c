import { LEDGER_CSV_COLUMNS } from './ledger.schemas.ts';

// RFC 4180 (the lines themselves are formatted by the query, streamed by src/lib/csv-export.ts): CRLF
// line ends. No field can start a spreadsheet formula: numbers are numbers, references start with
// REF-/TOP-, `details` is a JSON object (starts with `{`), kinds and dates are ours, and names people
// typed get an apostrophe before a leading = + - @ (ledger.repository.ts).

export const CSV_HEADER = `${LEDGER_CSV_COLUMNS.join(',')}\r\n`;
