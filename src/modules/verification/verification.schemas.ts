import { z } from 'zod';
import { STEPS } from '../liveness/index.ts';
import type { Clock } from '../../lib/clock.ts';

export const MODES = ['nin', 'phone', 'demography', 'vnin', 'match', 'face'] as const;
export type Mode = (typeof MODES)[number];

/** How a verification was asked for: in the request, accepted and finished later, or as a batch row. */
export const DELIVERIES = ['sync', 'async', 'batch'] as const;
export type Delivery = (typeof DELIVERIES)[number];

export const STATUSES = ['pending', 'found', 'not_found', 'failed', 'expired'] as const;
export type VerificationStatus = (typeof STATUSES)[number];

export const REFERENCE_RE = /^REF-[A-Z0-9]{12}$/;

// Missing fields and wrong types answer 422 (parseInput); these messages explain the 400s.
const reason = z.string().trim().min(1, 'reason must not be empty').max(100, 'reason is too long');

export const ninBody = z.object({
  nin: z.string().regex(/^\d{11}$/, 'NIN must be exactly 11 digits'),
  reason,
});

export const VNIN_INVALID = 'vnin must be 16 letters and digits';

/**
 * The token as typed: lower case is accepted and upper-cased. The detail is the field's own sentence
 * (it names the field), without the usual `vnin:` prefix.
 */
export const vninBody = z.object({ vnin: z.string(), reason });

export const phoneBody = z.object({
  phone_no: z.string().regex(/^0[1-9]\d{9}$/, 'phone_no must be a Nigerian number of 11 digits starting with 0'),
  reason,
});

function calendarDate(dmy: string): Date | null {
  const m = /^(\d{2})-(\d{2})-(\d{4})$/.exec(dmy);
  if (!m) return null;
  const [day, month, year] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day ? d : null;
}

// Nigeria keeps UTC+1 all year: "today" is the Lagos calendar day, so a birth date of today is
// accepted from midnight Lagos time rather than an hour later.
const LAGOS_OFFSET_MS = 3600 * 1000;

function lagosToday(clock: Clock): number {
  const lagos = new Date(clock.now().getTime() + LAGOS_OFFSET_MS);
  return Date.UTC(lagos.getUTCFullYear(), lagos.getUTCMonth(), lagos.getUTCDate());
}

const name = (field: string) => z.string().trim().min(1, `${field} must not be empty`).max(100, `${field} is too long`);

const GENDERS = ['m', 'f'] as const;

/** Built per app because "not in the future" depends on the injectable clock. */
export function demographyBody(clock: Clock) {
  return z.object({
    first_name: name('first_name'),
    last_name: name('last_name'),
    date_of_birth: z
      .string()
      .regex(/^\d{2}-\d{2}-\d{4}$/, 'date_of_birth must be dd-mm-yyyy')
      .refine((v) => calendarDate(v) !== null, 'date_of_birth is not a valid calendar date')
      .refine((v) => (calendarDate(v)?.getTime() ?? 0) <= lagosToday(clock), 'date_of_birth must not be in the future'),
    // Any case on the wire, but the document lists `m, f` only: an enum whose values differ only by case
    // (m, f, M, F) stops generators such as openapi-python-client. A non-string stays a wrong type (422).
    gender: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(GENDERS, "gender must be 'm' or 'f'"))
      .meta({ enum: [...GENDERS], description: '`m` or `f`, in any case (`M` and `F` are accepted)' }),
    // The contract fixes the reason of demography searches; absent means that one.
    reason: z.string().default('nyscCheck').refine((v) => v === 'nyscCheck', 'reason must be nyscCheck for demography verification'),
  });
}

/**
 * POST /verify-nin/match: the identifier to look up and the details the caller wants confirmed.
 * Built per app: the birth date must not be in the future by the injectable clock.
 */
export function matchBody(clock: Clock) {
  const demo = demographyBody(clock).shape;
  return z.object({
    nin: ninBody.shape.nin.optional(),
    vnin: z.string().optional(),
    reason,
    fname: name('fname'),
    lname: name('lname'),
    dob: z
      .string()
      .regex(/^\d{2}-\d{2}-\d{4}$/, 'dob must be dd-mm-yyyy')
      .refine((v) => calendarDate(v) !== null, 'dob is not a valid calendar date')
      .refine((v) => (calendarDate(v)?.getTime() ?? 0) <= lagosToday(clock), 'dob must not be in the future')
      .optional(),
    gender: demo.gender.optional(),
    phone: z.string().trim().regex(/^(\+?234|0)[1-9]\d{9}$/, 'phone must be a Nigerian number: 0 and 10 digits, or 234 and 10 digits').optional(),
  });
}

/**
 * POST /verify-nin/face: the identifier (exactly one of nin and vnin, checked by the use case), the
 * selfie as base64 (a data: prefix allowed; its decoded size is checked by the use case, 413 beyond
 * 2 MiB) and whether only the match is kept. Consent is required (checked by the use case: 400).
 */
export const livenessFrameBody = z
  .object({
    step: z.enum(STEPS).meta({ description: '`front`, or the challenge the frame shows' }),
    image: z.string().min(1, 'image must not be empty').meta({ description: 'The frame as a selfie: JPEG, PNG or WebP, base64 (a data: prefix is allowed), at most 2 MiB decoded' }),
    captured_at_ms: z.number().int().min(0).meta({ description: "When the frame was taken, in milliseconds of one clock of the device (any origin): strictly increasing" }),
  })
  .meta({ id: 'LivenessFrame' });

export const livenessBody = z
  .object({
    session_id: z.string().min(1, 'session_id must not be empty').max(64).meta({ description: 'The liveness session (`POST /liveness/sessions`), open and of this organisation', example: 'lvs_5f0c2a9e1b7d4c3a8e6f0b12' }),
    frames: z
      .array(livenessFrameBody)
      .min(1)
      .max(12)
      .meta({ description: '1 to 3 frames of each step, `front` first, then the challenges in the session\'s order; at most 12' }),
  })
  .meta({ id: 'LivenessFrames' });

export const faceRequestBody = z.object({
  nin: ninBody.shape.nin.optional(),
  vnin: z.string().optional(),
  selfie: z.string().min(1, 'selfie must not be empty').optional().meta({ description: 'The selfie: JPEG, PNG or WebP, base64 (a `data:image/...;base64,` prefix is allowed), at most 2 MiB decoded. Exactly one of `selfie` and `liveness`' }),
  liveness: livenessBody.optional().meta({ description: 'A liveness check instead of a selfie: judged first, its best `front` frame is then the selfie. Exactly one of `selfie` and `liveness`' }),
  reason,
  match_only: z.boolean().default(false).meta({ description: 'true: `data` is `{reference_id}` alone and no record is kept' }),
});

export const requeryBody = z.object({
  reference_id: z.string().trim().regex(REFERENCE_RE, 'reference_id must be REF- followed by 12 characters A-Z or 0-9'),
});

/**
 * What is sent to the upstream authority. Stored encrypted as it is, except a vNIN: the token never
 * reaches PostgreSQL, its row keeps `StoredQuery` (a keyed hash instead); only the lookup job's payload
 * carries the token, sealed, while the lookup runs.
 */
export type VerificationQuery =
  | { mode: 'nin'; nin: string; reason: string }
  | { mode: 'vnin'; vnin: string; reason: string }
  | { mode: 'phone'; phone: string; reason: string }
  | { mode: 'demography'; firstName: string; lastName: string; dob: string; gender: 'm' | 'f'; reason: string }
  | ({ mode: 'match'; nin: string } & MatchFields)
  | ({ mode: 'match'; vnin: string } & MatchFields)
  | ({ mode: 'face'; nin: string } & FaceFields)
  | ({ mode: 'face'; vnin: string } & FaceFields);

/** A face match: the identifier looked up, and whether only the match is kept (no record). The selfie is never part of it. */
type FaceFields = { reason: string; matchOnly: boolean };

/** What a match-only verification compares, beside the identifier it looks up. */
type MatchFields = { reason: string; fname: string; lname: string; dob?: string; gender?: 'm' | 'f'; phone?: string };

/** A vNIN query as kept in PostgreSQL and compared for Idempotency-Key: the hash, never the token. */
export type StoredVninQuery = { mode: 'vnin'; vninHash: string; reason: string };
export type StoredQuery =
  | Exclude<VerificationQuery, { vnin: string }>
  | StoredVninQuery
  | ({ mode: 'match'; vninHash: string } & MatchFields)
  | ({ mode: 'face'; vninHash: string } & FaceFields);

export const verificationQuerySchema = z.union([
  z.object({ mode: z.literal('nin'), nin: z.string(), reason: z.string() }),
  z.object({ mode: z.literal('vnin'), vnin: z.string().regex(/^[A-Z0-9]{16}$/), reason: z.string() }),
  z.object({ mode: z.literal('vnin'), vninHash: z.string(), reason: z.string() }),
  z.object({ mode: z.literal('phone'), phone: z.string(), reason: z.string() }),
  z.object({
    mode: z.literal('demography'),
    firstName: z.string(),
    lastName: z.string(),
    dob: z.string(),
    gender: z.enum(['m', 'f']),
    reason: z.string(),
  }),
  ...(['nin', 'vnin', 'vninHash'] as const).map((by) =>
    z.object({
      mode: z.literal('match'),
      [by]: z.string(),
      reason: z.string(),
      fname: z.string(),
      lname: z.string(),
      dob: z.string().optional(),
      gender: z.enum(['m', 'f']).optional(),
      phone: z.string().optional(),
    }),
  ),
  ...(['nin', 'vnin', 'vninHash'] as const).map((by) => z.object({ mode: z.literal('face'), [by]: z.string(), reason: z.string(), matchOnly: z.boolean() })),
]);

const timestamp = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));

export const verificationRow = z.object({
  reference_id: z.string(),
  org_id: z.coerce.number(),
  mode: z.enum(MODES),
  reason: z.string(),
  fixture: z.boolean(),
  status: z.enum(STATUSES),
  query_enc: z.instanceof(Buffer).nullable(),
  record_enc: z.instanceof(Buffer).nullable(),
  key_id: z.string().nullable(),
  failure_code: z.string().nullable(),
  consent: z.record(z.string(), z.unknown()).nullable().optional(),
  created_at: timestamp,
  expires_at: timestamp,
  delivery: z.enum(DELIVERIES),
});
export type VerificationRow = z.infer<typeof verificationRow>;

export const idempotencyRow = z.object({
  endpoint: z.string(),
  request_hash: z.string(),
  reference_id: z.string().nullable(),
  status_code: z.coerce.number().nullable(),
  response_enc: z.instanceof(Buffer).nullable(),
  key_id: z.string().nullable(),
  // The key of request_hash; null on rows from before it had a column of its own: key_id.
  hash_key_id: z.string().nullable(),
  created_at: timestamp,
});
export type IdempotencyRow = z.infer<typeof idempotencyRow>;

/** 1 to 255 printable ASCII characters (the IETF draft leaves the format to the server). */
export const idempotencyKeyHeader = z
  .string()
  .regex(/^[\x20-\x7E]{1,255}$/, 'Idempotency-Key must be 1 to 255 printable ASCII characters')
  .refine((v) => v.trim() !== '', 'Idempotency-Key must not be blank')
  .optional();
