import { z } from 'zod';
import { systemClock } from '../../lib/clock.ts';
import { bearer, dataEnvelope, errorResponse, errors, json, jsonBody, md, TAGS, upstreamErrorBody, type OpenAPIRegistry } from '../../openapi/common.ts';
import { personRecordSchema } from './person.ts';
import { consentSchema } from './consent.ts';
import { NAME_MATCH_SCORE } from './match.ts';
import { DEFAULT_FACE_THRESHOLD, FACE_MODEL } from '../face/index.ts';
import { livenessCheckSchema, livenessResultSchema } from '../liveness/index.ts';
import { demographyBody, faceRequestBody, idempotencyKeyHeader, matchBody, ninBody, phoneBody, REFERENCE_RE, requeryBody, vninBody } from './verification.schemas.ts';
import { VNIN_REFUSALS } from '../../adapters/identity-authority/index.ts';
import { VERDICT_REASONS, verdictSchema } from './verdict.ts';

const referenceId = z.string().regex(REFERENCE_RE).meta({ description: 'Keep it: requery with it, quote it to support', example: 'REF-7K2M9Q4XD1AB' });

const idempotencyHeaders = z.object({
  'Idempotency-Key': idempotencyKeyHeader.meta({
    description:
      'Optional. A repeat with the same key and body gets the first final answer again (header `Idempotent-Replayed: true`) instead of a second verification and debit; ' +
      'the same key with another body, or while the first is still running, answers 409. Kept 24 hours.',
    example: '7f1c2a9e-2d7e-4c3b-9a59-0b8c2f6d1e11',
  }),
});

const preferHeader = z.object({
  Prefer: z.string().optional().meta({
    description:
      'Optional. `respond-async`: answer 202 at once after the checks and the unit hold; the lookup waits out authority outages ' +
      '(up to ASYNC_MAX_WAIT_HOURS, 24 h by default); the requery gives the outcome (202 while it waits, then found or this call\'s error).',
    example: 'respond-async',
  }),
});

const replayed = { 'Idempotent-Replayed': { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key', schema: { type: 'string' as const } } };

/** The operations' own rules, markdown (shown under each operation at /docs; the tag's guide is verification.guide.md). */
const VNIN = md(
  'Body `{"vnin": "AB012345678910YZ", "reason": "corporate"}` (also under `/v1`) works',
  'exactly like `POST /verify-nin` (same checks in the same order, the same 200 `{"data": {...person record,',
  '"reference_id"}}`, 1 unit on success, the same 401/402/403/429/5xx/504 answers, requery, slip,',
  '`Idempotency-Key`, history with `kind: "vnin"`), with these differences:',
  '',
  '- `vnin` must be 16 letters and digits; lower case is accepted and upper-cased. Anything else: 400',
  '  `{"detail": "vnin must be 16 letters and digits"}`; missing or not a string: 422.',
  '- `nin` in the record is `""` unless the authority gives it (Prembly and our sandbox authority do; Dojah',
  '  does not). When it does, the verification keeps it like any NIN verification: inside the sealed record.',
  '- Four refusals, each free (the held unit is released, no ledger debit) and recorded as a not-found',
  '  verification with its code, so a requery (and the slip) answers the same 404 with the same `code`:',
  '',
  '| refusal | status and body |',
  '|---|---|',
  '| unknown token | 404 `{"detail": "vNIN not found", "code": "vnin_not_found"}` |',
  '| older than 72 hours | 404 `{"detail": "vNIN has expired (a vNIN is valid for 72 hours); ask the person for a new one", "code": "vnin_expired"}` |',
  '| made for another verifier\'s enterprise code | 404 `{"detail": "vNIN was made for another verifier\'s enterprise code; ask the person for a new one, made for ours (GET /verify-nin/vnin/instructions)", "code": "vnin_wrong_enterprise"}` |',
  '| already looked up once | 404 `{"detail": "vNIN has already been used (a vNIN can be looked up once); ask the person for a new one", "code": "vnin_used"}` |',
  '',
  '**One attempt.** The authority uses a token up on the first call that reaches it, so a vNIN lookup is',
  'never sent twice once it may have arrived: a timeout or a 5xx after the call went out ends the',
  'verification `failed` at once, 502 `{"detail": "Identity authority unavailable, nothing was charged; the',
  'vNIN may have been used up: ask the person for a new one", "reference_id", "code": "upstream_unavailable"}`,',
  'unit released. It is retried (within `IDENTITY_MAX_ATTEMPTS`) only when the call never left: a refused',
  'connection, an unknown host, or a 429 from the authority. When the circuit is open or the authority keeps',
  'answering 429, the answer is the usual 503 (the token was not used: send it again later). An',
  '`Idempotency-Key` repeat answers the stored outcome and never looks the token up again; unlike other',
  'modes, a vNIN\'s 502 is kept for the key too (503s still free the key, since the token is intact).',
  '',
  '**The token is never kept.** Not in PostgreSQL (not even sealed), not in any log line, CSV or PDF, and in',
  'Redis only sealed (AES-256-GCM) inside its lookup job\'s payload while the lookup runs: the worker erases it',
  'from the job before calling the authority, and vNIN jobs are deleted from Redis as they finish (their',
  'result, as every lookup result, carries the sealed record, never the query). The verification row keeps',
  'an HMAC-SHA256 of the token under `VNIN_HASH_KEY` in place of the query, and an `Idempotency-Key` compares',
  'requests by that hash. Two consequences: a vNIN job run again (a worker died mid-lookup) and a vNIN',
  'lookup whose job Redis lost cannot look the token up again; both end `failed` with code',
  '`lookup_abandoned` and the unit released (the sweep does it for lost jobs pending over 2 minutes), and',
  'the person makes a new token.',
  '',
  '**Fixture vNINs** work like fixture NINs (free, no subscription, no upstream call, a ledger line of 0',
  'with `details.fixture: true` and `details.mode: "vnin"`, recorded with `fixture: true`):',
  '`AA000000000001ZZ` the full record of `12345678901` (with its NIN), `AA000000000002ZZ` the sparse record',
  'of `12345678902` as a vNIN answer without a NIN (`nin: ""`), `AA000000000003ZZ` Grace Hopper with her portrait (the record of ' +
    '`12345678903`: a face match, or a verification link with a selfie, reaches a comparison free), `AA000000000009ZZ` 404 `vnin_not_found`,',
  '`AA000000000008ZZ` 404 `vnin_expired`.',
  '',
  '**In the sandbox** the identity simulator stands for the person\'s phone: `POST /sandbox/vnin`',
  '`{"nin": "31415926535", "enterprise_code": "000000"}` (no API key) answers 201 `{"vnin", "expires_at"}`',
  '(`issued_at` in the past makes an expired one). See `src/simulators/identity-authority/README.md`.',
);

const VNIN_INSTRUCTIONS = md(
  'Any signed-in user: what to show your customers so they make a',
  'token for us. 200 `{"enterprise_code": "000000", "ussd": "*346*3*<NIN>*000000#", "validity_hours": 72,',
  '"steps": ["...", ...]}`; the code is `NIMC_ENTERPRISE_CODE` and `<NIN>` is left for the person to replace.',
);

const MATCH = md(
  'For integrators who need to know whether what a customer typed is right, not the record itself (purpose',
  'limitation, data minimisation):',
  '',
  '```json',
  '{"nin": "12345678901", "reason": "corporate", "fname": "Adaeze", "lname": "Okonkwo",',
  ' "dob": "14-03-1991", "gender": "f", "phone": "08031234567"}',
  '```',
  '',
  'Exactly one of `nin` and `vnin` (both or neither: 400 `Send exactly one of nin or vnin`); `reason`, `fname`',
  'and `lname` are required; `dob` (`dd-mm-yyyy`, a real date not in the future), `gender` (`m`/`f`, any case)',
  'and `phone` (`0` and 10 digits, or `234`/`+234` and 10 digits) are optional. Answer 200:',
  '',
  '```json',
  '{"data": {"reference_id": "REF-...", "match": {"fname": true, "lname": true, "dob": true, "gender": true, "phone": true},',
  '          "scores": {"fname": 100, "lname": 100}, "all_match": true}}',
  '```',
  '',
  '- A field that was not sent is absent from `match`; `all_match` is true when every field sent matched.',
  '- Names compare ignoring case, accents and combining marks (Unicode compatibility decomposition, every',
  '  mark dropped), spaces and hyphens: `Adébáyọ̀-Okafor`, `adebayo okafor` and `ADEBAYOOKAFOR` are one name.',
  '  The score is the normalised Levenshtein similarity of the two folded names,',
  '  `floor(100 × (1 − distance / longer length))` (computed with the `fastest-levenshtein` library); a name',
  '  matches at **90 or more**. `fname` is compared with the recorded first name and with first and middle',
  '  names together, and the better score counts (people often type both).',
  '- `dob` matches when equal; `gender` when it is the recorded one; `phone` when the last ten digits agree',
  '  (`0803...`, `234803...` and `+234803...` are one number).',
  '- Charged like the lookup it wraps: 1 unit when the person is found, nothing when not (404',
  '  `NIN not found`; by vNIN, the four vNIN refusals with their `code`) or on any failure; fixture NINs and',
  '  fixture vNINs are free and compared against their fixture record.',
  '- By `vnin`, the vNIN rules hold as for `POST /verify-nin/vnin`: the token is never stored (the row keeps',
  '  its keyed hash), and the lookup is made once (a fault after the call went out ends it `failed`).',
  '- **Nothing of the record is kept or returned**: the worker compares and drops the record; the',
  '  verification stores (sealed) only the booleans and scores. Requery answers the same `data`; there is no',
  '  slip (`GET /verify-nin/slip/{ref}`: 404 `Record not found`). History lists it with `kind: "match"`.',
);

const REQUERY = md(
  'Body `{"reference_id": "REF-..."}`: free and idempotent. One answer per',
  'outcome, the same whether the verification was synchronous, asynchronous (`Prefer: respond-async`) or',
  'a batch row: found, 200 `{"status": "success", "message": "Record retrieved successfully", "data":',
  '{...person record, "reference_id"}, "verdict", "verdict_reasons", "consent"}` (`data` is a match-only verification\'s result,',
  '`{"reference_id", "match", "scores", "all_match"}`, for `POST /verify-nin/match`; `consent` is the',
  'statement sent with the verification, or `null`); pending, 202 `{"status": "pending", "message":',
  '"Verification still in progress", "reference_id", "verdict": null, "verdict_reasons": [], "consent"}`; otherwise the error the verification',
  'call gave, as below. 404',
  '`{"detail": "Unknown reference_id"}` for an unknown reference **or another organisation\'s** (existence is',
  'never revealed); 404 `NIN not found` for a not-found verification; the 502/503 shape for a failed one; 404',
  '`Record has expired and was erased under the retention policy` after `RECORD_RETENTION_DAYS`. Its checks',
  'run in this order: the token\'s signature and claims (401), content type (415) and JSON (400), the',
  'reference\'s format (400), then the deny-list (401 for a logged-out token) and the rate limits (a',
  'request over a limit gives its counts back and is judged after its principal, so a refused principal',
  'gets its 401 or 403 rather than 429), then the principal (401 for a disabled user, a changed password or role,',
  'a retired, suspended or expired client; 403 for a pending password change or two-factor enrolment, or',
  'a client\'s scope or address; its counts are then given back), then the row. Every refusal has the',
  'status and words it has on the other routes; only the order differs (there, the principal comes',
  'before the limits, and both before the body). A 200 is on the audit trail before it is sent',
  '(`verification.requeried`). No other',
  'answer leaves an event, but for a fault after the read was recorded: a record that fails to decrypt (a damaged ciphertext) or a connection lost after its',
  'COMMIT answers 500 or 503 with the attempted read on the trail.',
);

const SLIP = md(
  'Organisation administrators and team members. Answers `application/pdf` with `Cache-Control: no-store` and',
  '`Content-Disposition: inline; filename="slip-REF-....pdf"`: one A4 page with the photo, surname, first and',
  'middle names, date of birth, gender and NIN, the reference as text and as a QR code (the QR holds the',
  'reference only), when the verification was made (Lagos time) and the organisation that made it. Fixture',
  'records carry a red `TEST DATA` banner. Printing is free: no unit, no ledger line, as often as asked.',
  '',
  '- Still pending: 409 `Verification still in progress` (requery until it is found, then print).',
  '- The same 404s as a requery: `Unknown reference_id` (also for another organisation\'s reference),',
  '  `NIN not found` / `Record not found` (not found at the authority), `Record has expired and was erased under',
  '  the retention policy`. A verification that failed at the authority has nothing to print: 404',
  '  `Record not found` (a requery still explains the failure with its 502/503).',
  '- A malformed reference: 400, as for a requery. Errors are JSON `{detail}` like everywhere.',
  '- The record is decrypted in memory for the drawing only; the PDF\'s metadata names the reference, never',
  '  the person. The standard PDF fonts need no font file on the server; they cover Latin-1, so a letter',
  '  outside it (Yoruba\'s ọ, ẹ, ṣ) is printed without its mark (`Adébáyọ̀` prints as `Adébáyo`); the JSON record',
  '  keeps the exact spelling. A photo the PDF library cannot read leaves the box labelled `No photo on record`.',
);

/** POST /verify-nin/face's own rules (the tag's guide, face.guide.md, keeps what a face match is and is not). */
const FACE = md(
  "Whether the person in front of you is the holder of the NIN (the checks every verification POST runs come first: see the tag). Send the NIN or vNIN (exactly one), a selfie and the person's consent:",
  '',
  '```json',
  '{"nin": "70000000001", "reason": "corporate", "selfie": "/9j/4AAQ...", "consent": {"obtained_at": "2026-11-20T09:30:00Z", "channel": "mobile", "notice_version": "privacy-2026-03"}}',
  '```',
  '',
  '`selfie`: JPEG, PNG or WebP as base64 (a `data:image/jpeg;base64,` prefix is allowed), at most 2 MiB',
  'decoded (413 beyond). EXIF orientation is honoured, so a phone photo taken sideways is read upright.',
  'The format is told by the image\'s first bytes, whatever the prefix says, before any decoder runs:',
  'anything else (SVG, GIF, TIFF, AVIF, HEIF, ...) is 422 `selfie_unreadable`. So is an image whose',
  'header declares more than 50 megapixels, or one that takes more than 5 seconds to decode.',
  '`consent` is required (400 without): a face is biometric data, sensitive under the NDPA. `match_only:',
  'true` answers `data: {"reference_id"}` alone and keeps no record, as `/verify-nin/match` does.',
  '',
  '```json',
  '{"data": {"nin": "70000000001", "fname": "Grace", "...": "...", "reference_id": "REF-..."},',
  ' "face": {"status": "compared", "match": true, "confidence": 99.9, "threshold": 75, "liveness": "not_checked",',
  '          "model": "face-api 1.7.15 (ssd_mobilenetv1 + face_landmark_68 + face_recognition, tfjs-wasm 4.22.0)"}}',
  '```',
  '',
  '**Order and cost.** The selfie is checked first, before anything is looked up: a refusal is a 422 with',
  'a `code`, nothing recorded or charged:',
  '',
  '| `code` | meaning |',
  '|---|---|',
  '| `selfie_unreadable` | not a JPEG, PNG or WebP image, over 50 megapixels, or not decoded within 5 s |',
  '| `selfie_no_face` | no face found |',
  "| `selfie_many_faces` | more than one face (a second face counts when it is at least 40 % of the largest one's size) |",
  "| `selfie_face_too_small` | the face's shorter side is under 64 pixels once the selfie is fitted in 1024 x 1024 |",
  '| `liveness_required` | the organisation requires liveness (`require_liveness`, `PATCH /me/organisation`): a plain `selfie` is refused before it is read by a face worker |',
  '',
  'Then the person is looked up as `/verify-nin` or `/verify-nin/vnin` would (not found: 404, failed:',
  "502/503, nothing charged), and the selfie is compared with the record's photo:",
  '',
  '| outcome | `face.status` | units |',
  '|---|---|---|',
  "| compared (match or not) | `compared` | `FACE_MATCH_UNITS` (2): the lookup's unit and a `face_match` ledger line |",
  '| the record has no photo showing exactly one face | `no_reference_photo` (`match` and `confidence` null) | 1 (the lookup) |',
  '| not found, refused, failed | an error | 0 |',
  '| fixture NIN or vNIN | as above | 0 |',
  '',
  'A live face match needs `FACE_MATCH_UNITS` spendable units to start (402 otherwise, nothing charged).',
  'The units are checked, not held, until the lookup holds its own: when concurrent calls drain the wallet',
  'meanwhile, the comparison still answers 200 and its extra units are waived (the ledger shows the',
  "lookup's unit alone), never a 402 over a charged lookup.",
  '',
  '**Turns between organisations.** Face matches take turns on the face workers: another organisation\'s',
  'job is queued ahead of the later ones of an organisation that sent many. An organisation has at most',
  'FACE_ORG_MAX_IN_FLIGHT (8) face matches queued or running; one more is 429 `face_in_flight_cap` with',
  '`Retry-After`, nothing recorded or charged. A face worker not answering a selfie check within',
  'FACE_WAIT_MS is 503 `face_timeout` (one failing, `face_failed`), nothing charged; the check is then taken',
  'off the queue, as it is when the caller disconnects, so it never runs for nobody.',
  '',
  "**A comparison that fails costs nothing.** The lookup's unit is only held until the record's photo is",
  'compared (the lookup hands the comparison to a face worker, which settles the verification); if no',
  'comparison can be made (a face worker failing, or none answering within the call\'s wait), the',
  'verification ends `failed` with code `face_unavailable` and the held unit goes back. The answer is a',
  '503, the same a requery gives:',
  '',
  '```json',
  '{"detail": "Face comparison was unavailable, nothing was charged; send the face match again", "reference_id": "REF-...", "code": "face_unavailable"}',
  '```',
  '',
  'Nothing was charged and no record is kept for that reference: send the face match again (with a new',
  '`Idempotency-Key`, or the same one: a 503 is not kept for the key). A vNIN was used by the lookup, so',
  'the person must issue a new one. A face match whose job was lost (Redis flushed) ends `failed` with',
  'code `lookup_abandoned` (502), also free. Face matches',
  "take turns between organisations: one organisation sending many at once does not hold another's",
  'behind all of them. A requery of the',
  'reference answers the same `data` and `face`. History lists it with `kind: "face"`; the audit trail',
  'records `verification.face_matched`.',
  '',
  '**Idempotency and asynchronous use.**',
  '- `Idempotency-Key` works as on the other verification calls; the selfie is part of the request (its',
  "  SHA-256 enters the key's keyed request hash, the only thing kept of a body), so the same key with",
  '  another selfie is a 409. There is no slip for a face match.',
  '- `Prefer: respond-async` works as on the other verification calls, with one difference: the selfie is',
  '  checked in the request, so a refusal is still an immediate 422 with nothing recorded. Then 202 with the',
  '  `reference_id`; the lookup waits out authority outages in the background lane (up to',
  '  ASYNC_MAX_WAIT_HOURS), and once it finds the record it hands the comparison to a face worker, which',
  "  compares and settles in one transaction (the lookup's unit, the comparison's extra units, and",
  "  `verification.completed` to your webhook endpoints), as for the synchronous call. The requery answers 202 until then, then exactly",
  '  what the synchronous call would have answered. Meanwhile the selfie waits sealed inside those jobs in',
  '  Redis, each removed as it ends; it is never in PostgreSQL. A comparison that fails on every attempt,',
  '  or that no face worker takes within an hour, ends the verification `failed` with code `face_unavailable`',
  '  (nothing charged: send it again), and jobs lost with Redis end it `lookup_abandoned` (the selfie went with them). Fixture NINs',
  '  are decided at once, as other asynchronous fixture calls (202, the requery answers, no webhook event).',
  '  The audit event `verification.face_matched` is written when the call is accepted.',
  '',
  '',
  '**Liveness.** Instead of `selfie`, send `liveness` (exactly one of the two: 400): a session from',
  '`POST /liveness/sessions` and its frames, `front` first, then the session\'s `challenges` in order:',
  '',
  '```json',
  '{"nin": "70000000001", "reason": "corporate", "consent": {"...": "..."}, "liveness": {"session_id": "lvs_5f0c2a9e1b7d4c3a8e6f0b12",',
  ' "frames": [{"step": "front", "image": "/9j/...", "captured_at_ms": 1000}, {"step": "turn_right", "image": "/9j/...", "captured_at_ms": 1600}, "..."]}}',
  '```',
  '',
  'Refused before anything is judged (400, or as a selfie 413 / 422 `selfie_unreadable`, the detail naming',
  'the frame): a request malformed whatever the session is: not 1 to 3 frames of each of the four steps,',
  'over 12 frames, `captured_at_ms` not a non-negative integer, an image not base64, over 2 MiB decoded or',
  'not a JPEG, PNG or WebP. The body may be up to 10 MiB (413 beyond). The session: none of that id in',
  'this organisation 404 `liveness_session_not_found`, expired 410 `liveness_session_expired`, judged',
  'already 409 `liveness_session_used`. Everything else is judged by a face worker before the authority is',
  'asked, with every reason that applies (docs/liveness.md): frames in another order than the session\'s',
  '(`front` not first included) fail `pose_not_reached`; times that go back, steps under 200 ms apart or a',
  'sequence longer than the session fail `timing`. A failed check answers 422 `liveness_failed` with',
  '`liveness: {status, reasons, steps}`, nothing looked up or charged, the session `failed`. A passed',
  'check makes the session `used` and the face match goes on with the front frame the poses were measured',
  'from as the selfie: `face.liveness` is `passed` and `face.liveness_check` holds the session, its',
  'challenges, the steps, the checks made and the model. It costs `LIVENESS_UNITS` (1) on top of the face',
  'match\'s units, charged with them (with the comparison; not for `no_reference_photo`, nor fixtures).',
  'A face worker not judging within twice FACE_WAIT_MS is 503, the session still open. The',
  'Idempotency-Key\'s hash takes the session, the steps, the times and each frame\'s SHA-256. The frames',
  'are never stored: sealed inside their job in Redis, removed as it ends; only their keyed hashes',
  '(`frames_reused`) are kept, LIVENESS_FRAME_HASH_DAYS.',
  '',
  'The selfie and its descriptors are never stored (see the tag, "Face match"); the comparison\'s `confidence` and `threshold` are explained there too.',
);

/** What a 202 carries: no verdict yet (null), and so no reason. */
const pendingVerdict = {
  verdict: z.null().meta({ description: 'Not decided yet: the verdict comes with the answer once the verification ends (requery, or `verification.completed`)' }),
  verdict_reasons: z.array(z.enum(VERDICT_REASONS)).max(0).meta({ description: 'Empty until there is a verdict', example: [] }),
};

export function register(registry: OpenAPIRegistry): void {
  // Open (z.object over the strict record's fields): a field added to the record later is not a
  // breaking change, so the document must not forbid it to strict clients.
  const VerifiedPerson = z.object({ ...personRecordSchema.shape, reference_id: referenceId }).meta({ id: 'VerifiedPerson',
    description:
      'Normalised person record plus the reference_id of this verification. Every field is always present, `""` when the authority did not return it.',
  });
  const Verification = dataEnvelope(VerifiedPerson).extend(verdictSchema).meta({ id: 'VerificationResponse' });
  const upstream = (description: string) => errorResponse(description, upstreamErrorBody);

  const Accepted = z
    .object({ status: z.literal('pending'), message: z.string().meta({ example: 'Verification accepted; requery with the reference_id' }), reference_id: referenceId, ...pendingVerdict })
    .meta({ id: 'VerificationAccepted' });
  const verifyResponses = {
    200: { ...json(Verification, 'Found; 1 unit debited (0 for fixture NINs)'), headers: replayed },
    202: {
      ...json(Accepted, 'With `Prefer: respond-async`: accepted, its unit held; requery with reference_id (202 while it waits, then the record or this call\'s error)'),
      headers: { ...replayed, 'Preference-Applied': { description: '`respond-async`', schema: { type: 'string' as const } } },
    },
    ...errors(401, 402, 413, 415, 422),
    429: { ...errorResponse('Rate limited, or refused at admission (`code`: `org_in_flight_cap`, `authority_busy`; never for asynchronous calls) or, asynchronous calls only, `org_pending_cap` (ORG_MAX_PENDING waiting); nothing charged; see Retry-After'), headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' as const } } } },
    400: errorResponse('A field breaks a rule (format, unknown reason key) or the Idempotency-Key is invalid; nothing charged'),
    403: errorResponse('No active subscription (live numbers), no organisation account, or a cross-origin call'),
    404: errorResponse(
      'Not found at the authority (`NIN not found` for NIN lookups); for a vNIN, one of four refusals with a `code`: ' +
        '`vnin_not_found` (`vNIN not found`), `vnin_expired`, `vnin_wrong_enterprise`, `vnin_used`. Nothing charged',
      z.object({ detail: z.string(), code: z.enum(VNIN_REFUSALS).optional() }),
    ),
    409: errorResponse('Idempotency-Key reused with another body, or its first request is still running', upstreamErrorBody),
    502: upstream('The identity authority failed; nothing charged. Requery later with reference_id'),
    503: upstream('The identity authority is rate limiting, or a dependency is down; nothing charged. Retry with backoff'),
    504: upstream('No answer in time; outcome unknown. Wait 30 s, then requery with reference_id'),
  };

  // Built with the system clock only for its shape; the app's own instance checks the dates.
  const consent = {
    consent: consentSchema(systemClock)
      .optional()
      .meta({ description: 'How the person agreed. Required for live lookups when the organisation set `require_consent` (else 400 `consent is required by your organisation`).' }),
  };
  const base = demographyBody(systemClock).extend(consent);
  const demography = base.extend({
    date_of_birth: base.shape.date_of_birth.meta({ description: 'dd-mm-yyyy, a real date, not in the future', example: '01-02-1990' }),
  });

  const modes = [
    {
      path: '/verify-nin',
      operationId: 'verifyNin',
      summary: 'Verify a NIN',
      body: ninBody.extend(consent).meta({ id: 'VerifyNinRequest',
        example: { nin: '12345678901', reason: 'corporate' },
        description: 'Fixture NINs (see the introduction) answer without reaching the authority and debit nothing.',
      }),
    },
    {
      path: '/verify-nin/vnin',
      operationId: 'verifyVnin',
      summary: 'Verify a virtual NIN (vNIN)',
      rules: VNIN,
      body: vninBody
        .extend({ vnin: vninBody.shape.vnin.meta({ pattern: '^[A-Za-z0-9]{16}$', description: '16 letters and digits; lower case is upper-cased', example: 'AB012345678910YZ' }) })
        .meta({ id: 'VerifyVninRequest',
          example: { vnin: 'AB012345678910YZ', reason: 'corporate' },
          description:
            'A use-once token the person made for our enterprise code (GET /verify-nin/vnin/instructions), valid 72 hours. It is never stored; ' +
            'a lookup that reached the authority is not retried. `nin` in the record is "" unless the authority gives it. Fixture vNINs AA000000000001ZZ, ' +
            'AA000000000002ZZ, AA000000000003ZZ (found), AA000000000009ZZ, AA000000000008ZZ (refused) answer without reaching the authority.',
        }),
    },
    {
      path: '/verify-nin/phone',
      operationId: 'verifyPhone',
      summary: 'Verify by phone number',
      body: phoneBody.extend(consent).meta({ id: 'VerifyPhoneRequest', example: { phone_no: '08012345678', reason: 'corporate' } }),
    },
    {
      path: '/verify-nin/demography',
      operationId: 'verifyDemography',
      summary: 'Verify by demographic details',
      body: demography.meta({ id: 'VerifyDemographyRequest',
        example: { first_name: 'Ada', last_name: 'Obi', date_of_birth: '01-02-1990', gender: 'f', reason: 'nyscCheck' },
        description: 'date_of_birth is dd-mm-yyyy; the reason is fixed to nyscCheck.',
      }),
    },
  ] as const;

  for (const m of modes) {
    registry.registerPath({
      method: 'post',
      path: m.path,
      operationId: m.operationId,
      tags: [TAGS.verification],
      summary: m.summary,
      description:
        'A success debits 1 unit and issues a reference_id. Not safe to retry blindly (see "Retrying verifications"): ' +
        'after a 5xx or a timeout, wait 30 s and requery; or send an Idempotency-Key.' +
        ('rules' in m ? `\n\n${m.rules}` : ''),
      security: bearer,
      request: { headers: idempotencyHeaders.extend(preferHeader.shape), body: jsonBody(m.body) },
      responses: verifyResponses,
    });
  }

  registry.registerPath({
    method: 'get',
    path: '/verify-nin/vnin/instructions',
    operationId: 'getVninInstructions',
    tags: [TAGS.verification],
    summary: 'How a person makes a vNIN for us',
    description: VNIN_INSTRUCTIONS,
    security: bearer,
    responses: {
      200: json(
        z
          .object({
            enterprise_code: z.string().meta({ example: '000000' }),
            ussd: z.string().meta({ example: '*346*3*<NIN>*000000#' }),
            validity_hours: z.literal(72),
            steps: z.array(z.string()),
          })
          .meta({ id: 'VninInstructions' }),
        'The instructions',
      ),
      ...errors(401, 429),
    },
  });

  const MatchResult = z
    .object({
      reference_id: referenceId,
      match: z
        .object({ fname: z.boolean(), lname: z.boolean(), dob: z.boolean().optional(), gender: z.boolean().optional(), phone: z.boolean().optional() })
        .meta({ description: 'One boolean per field sent; a field not sent is absent' }),
      scores: z.object({ fname: z.number().int().min(0).max(100), lname: z.number().int().min(0).max(100) }).meta({ description: `Name similarity 0-100; a name matches at ${NAME_MATCH_SCORE} or more` }),
      all_match: z.boolean().meta({ description: 'Every field sent matched' }),
    })
    .meta({ id: 'MatchResult' });
  const m = matchBody(systemClock).extend(consent);
  registry.registerPath({
    method: 'post',
    path: '/verify-nin/match',
    operationId: 'verifyMatch',
    tags: [TAGS.verification],
    summary: 'Confirm typed details against the national record, without receiving it',
    description: MATCH,
    security: bearer,
    request: {
      headers: idempotencyHeaders,
      body: jsonBody(
        m.meta({ id: 'VerifyMatchRequest', example: { nin: '12345678901', reason: 'corporate', fname: 'adaeze', lname: 'OKONKWO', dob: '14-03-1991', gender: 'f' } }),
      ),
    },
    responses: { ...verifyResponses, 200: { ...json(dataEnvelope(MatchResult).extend(verdictSchema).meta({ id: 'MatchResponse' }), 'Found; 1 unit debited (0 for fixture NINs)'), headers: replayed } },
  });

  const FaceResult = z
    .object({
      status: z.enum(['compared', 'no_reference_photo']).meta({ description: '`no_reference_photo`: the record has no photo showing exactly one face; nothing was compared' }),
      match: z.boolean().nullable().meta({ description: '`confidence >= threshold`; null when nothing was compared' }),
      confidence: z.number().min(0).max(100).nullable().meta({ description: '0-100, a documented monotone mapping of the descriptor distance d: `100 / (1 + exp((d - 0.6) / 0.05))`, one decimal' }),
      threshold: z.number().min(0).max(100).meta({ description: `The threshold used (default ${DEFAULT_FACE_THRESHOLD})` }),
      liveness: z.enum(['not_checked', 'passed']).meta({ description: '`not_checked` with a `selfie`: a printed photo or a screen held up to the camera would pass; `passed` with `liveness`: the selfie compared was the front frame of a passed liveness check (`liveness_check`)' }),
      liveness_check: livenessCheckSchema.optional().meta({ description: 'With `liveness: passed`: the session, its challenges, the steps as measured, the checks made and the model (no frame is kept)' }),
      model: z.string().meta({ description: 'The model, its package and version', example: FACE_MODEL }),
    })
    .meta({ id: 'FaceResult' });
  const faceRequest = faceRequestBody.extend({ consent: consentSchema(systemClock) });
  registry.registerPath({
    method: 'post',
    path: '/verify-nin/face',
    operationId: 'verifyFace',
    tags: [TAGS.verification],
    summary: 'Match a selfie against the photo the authority holds for a NIN or vNIN',
    description: FACE,
    security: bearer,
    request: {
      headers: idempotencyHeaders.extend(preferHeader.shape),
      body: jsonBody(faceRequest.meta({ id: 'VerifyFaceRequest', example: { nin: '70000000001', reason: 'corporate', selfie: '/9j/4AAQSkZJRg...', consent: { obtained_at: '2026-11-20T09:30:00Z', channel: 'mobile', notice_version: 'privacy-2026-03' } } })),
    },
    responses: {
      ...verifyResponses,
      200: {
        ...json(
          z.object({ data: z.union([VerifiedPerson, z.object({ reference_id: referenceId })]).meta({ description: 'The person record, or with `match_only` the reference alone' }), face: FaceResult, ...verdictSchema }).meta({ id: 'FaceResponse' }),
          'Found and compared (2 units) or found without a usable photo (1 unit); 0 for fixture NINs',
        ),
        headers: replayed,
      },
      400: errorResponse('A field breaks a rule, no `consent`, both or neither of nin and vnin, both or neither of selfie and liveness, a selfie or frame that is not base64, liveness frames not 1 to 3 of each step, or an invalid Idempotency-Key; nothing charged'),
      404: errorResponse(
        'Not found at the authority, as on the other verification calls (for a vNIN, `code`: `vnin_not_found`, `vnin_expired`, `vnin_wrong_enterprise`, `vnin_used`), or no liveness session of that id in this organisation (`code`: `liveness_session_not_found`). Nothing charged',
        z.object({ detail: z.string(), code: z.enum([...VNIN_REFUSALS, 'liveness_session_not_found']).optional() }),
      ),
      409: errorResponse('Idempotency-Key reused with another body, or its first request is still running; or the liveness session was judged already (`code`: `liveness_session_used`)', upstreamErrorBody.extend({ code: z.string().optional() })),
      410: errorResponse('The liveness session expired (`code`: `liveness_session_expired`)'),
      413: errorResponse('The body is over 10 MiB or the selfie (a frame) over 2 MiB decoded; nothing charged'),
      422: errorResponse(
        'A field is missing or of the wrong type, or the selfie is refused (`code`): `selfie_unreadable` (not a JPEG, PNG or WebP by its first bytes, over 50 megapixels, or not decoded within 5 s), `selfie_no_face`, `selfie_many_faces`, ' +
          '`selfie_face_too_small` (the face\'s shorter side under 64 px once the selfie is fitted in 1024 px); `liveness_required` (the organisation requires liveness and a `selfie` was sent); `liveness_failed` (the liveness check did not pass: `liveness` says why); nothing looked up or charged',
        z.object({
          detail: z.string(),
          code: z.enum(['selfie_unreadable', 'selfie_no_face', 'selfie_many_faces', 'selfie_face_too_small', 'liveness_required', 'liveness_failed']).optional(),
          liveness: livenessResultSchema.optional().meta({ description: 'With `liveness_failed`: the reasons and the steps as measured (`status: failed`)' }),
        }),
      ),
    },
  });

  const consentShown = consentSchema(systemClock).nullable().meta({ description: 'The consent statement sent with the verification, or null' });
  const Requery = z
    .object({
      status: z.literal('success'),
      message: z.string().meta({ example: 'Record retrieved successfully' }),
      data: z.union([VerifiedPerson, MatchResult, z.object({ reference_id: referenceId })]).meta({ description: 'The person record, or for a match-only verification its result (a face match with `match_only`: the reference alone)' }),
      face: FaceResult.nullable().optional().meta({ description: 'A face match only: its comparison, as first answered' }),
      ...verdictSchema,
      consent: consentShown,
    })
    .meta({ id: 'RequeryResponse' });
  const RequeryPending = z
    .object({ status: z.literal('pending'), message: z.string(), reference_id: referenceId, ...pendingVerdict, consent: consentShown })
    .meta({ id: 'RequeryPending' });

  registry.registerPath({
    method: 'post',
    path: '/verify-nin/requery',
    operationId: 'requeryVerification',
    tags: [TAGS.verification],
    summary: 'Read a past verification again',
    description: REQUERY,
    security: bearer,
    request: { body: jsonBody(requeryBody.meta({ id: 'RequeryRequest', example: { reference_id: 'REF-7K2M9Q4XD1AB' } })) },
    responses: {
      200: json(Requery, 'Found: the stored record (or a match-only verification\'s result) in `data`, whether the verification was synchronous, asynchronous or a batch row'),
      202: json(RequeryPending, 'Still in progress (an asynchronous or batch verification waiting for the authority); requery again shortly'),
      ...errors(401, 413, 415, 422, 429),
      400: errorResponse('reference_id is not REF- followed by 12 characters'),
      403: errorResponse('No organisation account, or a cross-origin call'),
      404: errorResponse('Unknown reference_id (or another organisation\'s), not found at the authority, or erased'),
      502: upstream('The verification failed at the authority; nothing was charged'),
      503: upstream('The authority was rate limiting when this verification ran, or a dependency is down'),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/verify-nin/slip/{reference_id}',
    operationId: 'getVerificationSlip',
    tags: [TAGS.verification],
    summary: 'Printable slip of a found verification (PDF)',
    description: SLIP,
    security: bearer,
    request: { params: z.object({ reference_id: referenceId }) },
    responses: {
      200: {
        description: 'The slip',
        headers: { 'Cache-Control': { description: 'Always `no-store`', schema: { type: 'string' as const } } },
        content: { 'application/pdf': { schema: z.string().meta({ format: 'binary', description: 'PDF document, one page' }) } },
      },
      ...errors(401, 429),
      400: errorResponse('reference_id is not REF- followed by 12 characters'),
      403: errorResponse('No organisation account, or a cross-origin call'),
      404: errorResponse('The same answers as a requery: unknown reference_id (or another organisation\'s), not found at the authority, a failed verification (`Record not found`), or erased'),
      409: errorResponse('`Verification still in progress`: requery until it is found, then print'),
    },
  });
}
