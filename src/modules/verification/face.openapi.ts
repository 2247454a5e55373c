import { z } from 'zod';
import { systemClock } from '../../lib/clock.ts';
import { bearer, errorResponse, json, jsonBody, md, TAGS, upstreamErrorBody, type OpenAPIRegistry } from '../../openapi/common.ts';
import { consentSchema } from './consent.ts';
import { DEFAULT_FACE_THRESHOLD, FACE_MODEL } from '../face/index.ts';
import { livenessCheckSchema, livenessResultSchema } from '../liveness/index.ts';
import { faceRequestBody } from './verification.schemas.ts';
import { VNIN_REFUSALS } from '../../adapters/identity-authority/index.ts';
import { verdictSchema } from './verdict.ts';

type Route = Parameters<OpenAPIRegistry['registerPath']>[0];

/** What the face match shares with the other verification POSTs; verification.openapi.ts builds it. */
export type VerifyParts = {
  VerifiedPerson: z.ZodType;
  referenceId: z.ZodType;
  /** Idempotency-Key and Prefer. */
  headers: NonNullable<Route['request']>['headers'];
  replayed: Record<string, { description: string; schema: { type: 'string' } }>;
  verifyResponses: Route['responses'];
};

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
  "**A comparison that fails costs nothing.** The lookup's unit is only held while the record's photo is",
  'compared (the lookup job asks a face worker before it settles); if no comparison can be made (a face',
  'worker failing, or none answering within FACE_WAIT_MS), the verification ends `failed` with code',
  '`face_unavailable` and the held unit goes back. The answer is a 503, the same a requery gives:',
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
  '  ASYNC_MAX_WAIT_HOURS), and once it finds the record the same job asks a face worker for the',
  "  comparison and settles both in one transaction (the lookup's unit, the comparison's extra units, and",
  "  `verification.completed` to your webhook endpoints), as the synchronous call's job does. The requery answers 202 until then, then exactly",
  '  what the synchronous call would have answered. Meanwhile the selfie waits sealed inside that job in',
  '  Redis, which is removed as it ends; it is never in PostgreSQL. A face worker that does not answer',
  '  within FACE_WAIT_MS ends the verification `failed` with code `face_unavailable` (nothing charged: send',
  '  it again), and a job lost with Redis ends it `lookup_abandoned` (the selfie went with it). Fixture NINs',
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

/**
 * POST /verify-nin/face (a selfie, or a liveness check's frames). verification.openapi.ts calls it in
 * its place among the verification paths; it answers the face match's result schema, which the
 * requery's answer holds too.
 */
export function register(registry: OpenAPIRegistry, { VerifiedPerson, referenceId, headers, replayed, verifyResponses }: VerifyParts): z.ZodType {
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
      headers,
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

  return FaceResult;
}
