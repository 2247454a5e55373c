import { z } from 'zod';
import { systemClock } from '../../lib/clock.ts';
import { bearer, dataEnvelope, errorResponse, errors, json, jsonBody, md, TAGS, upstreamErrorBody, type OpenAPIRegistry } from '../../openapi/common.ts';
import { personRecordSchema } from './person.ts';
import { consentSchema } from './consent.ts';
import { NAME_MATCH_SCORE } from './match.ts';
import { demographyBody, idempotencyKeyHeader, matchBody, ninBody, phoneBody, REFERENCE_RE, requeryBody, vninBody } from './verification.schemas.ts';
import { VNIN_REFUSALS } from '../../adapters/identity-authority/index.ts';
import { VERDICT_REASONS, verdictSchema } from './verdict.ts';
import { register as registerFace } from './face.openapi.ts';

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

  // POST /verify-nin/face is face.openapi.ts's. Registered here, between match and requery: the document
  // lists paths in the order they are registered, and the generated clients (clients/) follow it.
  const FaceResult = registerFace(registry, { VerifiedPerson, referenceId, headers: idempotencyHeaders.extend(preferHeader.shape), replayed, verifyResponses });

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
