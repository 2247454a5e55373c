import { z } from 'zod';
import { bearer, errorResponse, errors, json, md, pageParams, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { batchAccepted, batchPathParams, batchJsonBodyDoc, batchList, batchResults, batchView, RESULT_COLUMNS } from './batches.schemas.ts';

const idParam = batchPathParams;
const notFound = errorResponse("No such batch in the caller's organisation (another organisation's batch reads the same)");

const CREATE = md(
  'Administrators and team members. Answers at once (202); the rows are looked up in the background (see the tag). JSON or a CSV upload, at most 50,000 rows and 10 MB (413 beyond):',
  '',
  '```',
  'POST /v1/verify-nin/batches',
  'Content-Type: application/json',
  '',
  '{"reason": "corporate", "rows": [{"nin": "12345678901", "client_ref": "cust-1"}, {"phone_no": "08031234567"}]}',
  '```',
  '',
  '```',
  'POST /v1/verify-nin/batches?reason=corporate',
  'Content-Type: text/csv',
  '',
  'nin,vnin,phone_no,client_ref,reason',
  '12345678901,,,cust-1,',
  ',,08031234567,cust-2,nyscCheck',
  '```',
  '',
  '- A row carries exactly one of `nin` (11 digits), `vnin` or `phone_no` (11 digits starting with 0), and optionally `client_ref` (your own ' +
    'reference, at most 100 characters, echoed in the results). The CSV header names its columns in any order and case; an absent column is ' +
    'empty, an unknown one is ignored, and at least one of `nin`, `vnin`, `phone_no` must be there. A CSV row\'s `reason` column overrides ' +
    '`?reason=`; JSON rows take the batch\'s `reason`. Quoting follows RFC 4180; a byte-order mark and CRLF or LF line ends are accepted.',
  '- **A malformed row does not refuse the batch**: it is `invalid`, with the reason in its result (`NIN must be exactly 11 digits`, `exactly ' +
    'one of nin, vnin or phone_no is required`, `Invalid reason: use a key from GET /v1/nimc-reasons`, `row must be an object`, ...), and it is ' +
    'never charged. What refuses the whole batch: no rows (400), an unknown `reason` or `?reason=` (400), a CSV that does not parse or whose ' +
    'header names none of the identifier columns (400), a `client_ref` holding a control character (tab, CR, ESC, DEL...: one rule for JSON ' +
    'and CSV, 400 `rows.1.client_ref: must not contain control characters` in JSON, `row 2, column client_ref: must not contain control ' +
    'characters` in CSV, rows numbered as in the results), a missing `reason` in JSON (422), another content type (415), more rows or bytes ' +
    'than the limits (413), live rows without an active subscription (403), and `ORG_MAX_PENDING` (429, below).',
  '- **vNIN rows** follow the rules of `POST /verify-nin/vnin`: 16 letters and digits (lower case is taken as upper; anything else is ' +
    '`invalid` with `vnin must be 16 letters and digits`), fixture vNINs free, one attempt at the authority once the call may have gone out. ' +
    'The token is never written to PostgreSQL: while its row waits, it is sealed (AES-256-GCM, bound to the batch and row) in Redis (for at ' +
    'most a vNIN\'s 72 hours), and the database keeps only its keyed hash. A token is never in two places at once, so a crash can lose a ' +
    'token but never send it twice. A token lost while waiting (Redis lost its data, 72 hours passed, or its key left the ring) cannot be ' +
    'asked for: its row ends `failed` with detail `lookup_abandoned`, nothing held or charged; a row whose token was lost after it was queued ' +
    'ends the same way, its unit given back. A refused vNIN row is `not_found` with the single call\'s words as its detail (`vNIN not ' +
    'found`, `vNIN has already been used ...`, `vNIN has expired ...`, `vNIN was made for another verifier\'s enterprise code ...`). Tokens ' +
    'sealed under an encryption key must be used before that key leaves `ENCRYPTION_KEYS`: keep a retired key at least 72 hours while vNIN ' +
    'batches wait.',
  '- **Duplicates are looked up once.** The same identifier twice (or more) in one batch is one lookup and at most one unit: every row that ' +
    'asked gets its result and the first row\'s `reference_id`. Fixture NINs are free, as everywhere. Every count of the batch counts rows.',
  '- **Consent.** Each row may carry a `consent` object, and JSON batches a batch-wide `consent` (CSV: ' +
    '`?consent_obtained_at=&consent_channel=&consent_notice_version=`), with the rules of the `consent` object of every verification POST ' +
    '(400 naming the field). Where the organisation requires consent (`require_consent`), a batch with a live row that has neither its own ' +
    'nor a batch-wide consent is refused whole with 400 `consent is required by your organisation` (fixture values are exempt). A row\'s own ' +
    '`consent` that breaks a rule makes that row `invalid` (`consent.channel: must be one of ...`), not the batch. Each row\'s verification ' +
    'keeps the consent that applied to it (its own, else the batch\'s; for duplicates, the first row\'s), shown as `consent` in ' +
    '`GET /verifications` like a single call\'s.',
  '- **`ORG_MAX_PENDING`.** Batch rows count toward it from the moment they are accepted: a batch whose rows (excluding invalid ones) would ' +
    'take the organisation beyond it is refused whole with 429 `code: "org_pending_cap"`, and nothing of it is stored.',
  '',
  '`estimated_units` in the answer is the number of distinct live identifiers: the most the batch can cost (rows not found or failed cost nothing).',
);

const GET = md(
  '- `status`: `queued` (accepted, nothing looked up yet), `running`, `paused` (with `paused_reason: "insufficient_units"`), `completed` ' +
    '(every row has ended) or `cancelled`.',
  '- `done` counts the rows that have ended, whichever way: `found + not_found + failed + invalid + cancelled`; a finished batch has ' +
    '`done == total`. `units_charged` is what the batch has cost so far (one unit per distinct live identifier found).',
  '- Another organisation\'s batch id answers 404 `{"detail": "Batch not found"}` on every batch endpoint, exactly like an id that does not exist.',
);

const RESULTS = md(
  'CSV by default (`text/csv`, sent while it is read from the database, one page of rows in memory at a time) with the columns ' +
    '`row,client_ref,status,reference_id,fname,mname,lname,dob,gender,phone,detail`; with `Accept: application/json`, pages ' +
    '`{"data": [{"row", "client_ref", "status", "reference_id", "fname", ...}], "next_cursor"}` (`limit`, `cursor` as in the other lists). ' +
    'It can be read at any time: rows not yet looked up show `pending`.',
  '',
  '- `row` is the row\'s position in the upload, from 1 (the CSV header is not a row).',
  '- `status` is `found`, `not_found`, `failed`, `invalid`, `cancelled` or `pending`; `detail` says why for the last four (`NIN not found` / ' +
    '`Record not found`, the failure code such as `upstream_unavailable`, the invalid row\'s reason, `batch cancelled before this row was ' +
    'looked up`, or for a row whose person had their data erased while it waited, `cancelled before this row was looked up: the person\'s ' +
    'data was erased on their request`).',
  '- There is no photo: requery or print the slip with the row\'s `reference_id` (free, as for any verification). A text field a ' +
    'spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`) is written with a leading apostrophe in the CSV.',
  '- The download is a read of personal data: it leaves a `batch.results_downloaded` audit event (who, which batch, which format), never the data.',
);

const CANCEL = md(
  'Answers the batch. Every row not being looked up at that moment ends `cancelled` and the unit it held is given back: rows waiting their ' +
    'turn, and rows waiting out an authority outage. Rows already at the authority finish as they would have (and are charged if found). ' +
    'Cancelling a finished batch changes nothing. `cancelled` is a batch row\'s state: in `GET /verifications` (whose statuses are those of a ' +
    'verification), a row cancelled after it was queued shows `failed` (never asked, not charged), and a row cancelled before it was queued ' +
    'has no verification at all.',
);

export function register(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/verify-nin/batches',
    operationId: 'createBatch',
    tags: [TAGS.batches],
    summary: 'Verify up to 50,000 NINs or phone numbers in one batch',
    description: CREATE,
    security: bearer,
    request: {
      query: z.object({
        reason: z.string().optional().meta({ description: 'CSV only: the reason of rows whose `reason` column is empty' }),
        consent_obtained_at: z.string().optional().meta({ description: 'CSV only: the consent of the whole batch' }),
        consent_channel: z.string().optional(),
        consent_notice_version: z.string().optional(),
      }),
      body: {
        required: true,
        content: {
          'application/json': { schema: batchJsonBodyDoc },
          'text/csv': { schema: z.string().meta({ description: 'A header row, then one row per identifier' }), example: 'nin,client_ref\r\n12345678901,cust-1\r\n' },
        },
      },
    },
    responses: {
      202: json(batchAccepted, 'Accepted; follow it with GET /verify-nin/batches/{id}'),
      ...errors(401, 403, 413, 415, 422),
      400: errorResponse('No rows, an unknown reason, a CSV that does not parse, or consent missing where the organisation requires it'),
      429: errorResponse('Rate-limited, or `code: "org_pending_cap"`: the organisation already has too many rows waiting; nothing was accepted'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/verify-nin/batches',
    operationId: 'listBatches',
    tags: [TAGS.batches],
    summary: "The organisation's batches, newest first",
    description: 'In pages like the other lists (`limit` 1-200, default 50; `next_cursor`); each batch as `GET /verify-nin/batches/{id}` shows it.',
    security: bearer,
    request: { query: z.object(pageParams) },
    responses: { 200: json(batchList, 'A page of batches'), ...errors(401, 403, 422, 429), 400: errorResponse('A limit or cursor breaks a rule') },
  });
  registry.registerPath({
    method: 'get',
    path: '/verify-nin/batches/{id}',
    operationId: 'getBatch',
    tags: [TAGS.batches],
    summary: 'Where a batch stands',
    description: GET,
    security: bearer,
    request: { params: idParam },
    responses: { 200: json(batchView, 'The batch and its counts (every count counts rows)'), ...errors(401, 403, 429), 404: notFound },
  });
  registry.registerPath({
    method: 'get',
    path: '/verify-nin/batches/{id}/results',
    operationId: 'getBatchResults',
    tags: [TAGS.batches],
    summary: "A batch's rows and their outcomes",
    description: RESULTS,
    security: bearer,
    request: { params: idParam, query: z.object(pageParams) },
    responses: {
      200: {
        description: 'The rows (CSV) or a page of them (JSON)',
        content: {
          'text/csv': { schema: z.string().meta({ description: `Columns: ${RESULT_COLUMNS.join(', ')}; RFC 4180, CRLF line ends` }) },
          'application/json': { schema: batchResults },
        },
      },
      ...errors(401, 403, 422, 429),
      400: errorResponse('A limit or cursor breaks a rule'),
      404: notFound,
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/verify-nin/batches/{id}/cancel',
    operationId: 'cancelBatch',
    tags: [TAGS.batches],
    summary: 'Cancel a batch',
    description: CANCEL,
    security: bearer,
    request: { params: idParam },
    responses: { 200: json(batchView, 'The batch after the cancellation'), ...errors(401, 403, 429), 404: notFound },
  });
}
