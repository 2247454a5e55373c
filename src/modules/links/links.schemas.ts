import { z } from 'zod';
import { verdictSchema } from '../verification/index.ts';
import { livenessCheckSchema } from '../liveness/index.ts';

export const LINK_ID_RE = /^LNK-[A-Z0-9]{12}$/;
/** 128 random bits, base64url: the only secret of a link, in its URL. */
export const TOKEN_RE = /^[A-Za-z0-9_-]{22}$/;

export const DEFAULT_EXPIRES_IN_HOURS = 72;
export const MAX_EXPIRES_IN_HOURS = 720;
export const MAX_USES = 1000;

const integerIn = (name: string, min: number, max: number) =>
  z
    .number()
    .int(`${name} must be a whole number from ${min} to ${max}`)
    .min(min, `${name} must be a whole number from ${min} to ${max}`)
    .max(max, `${name} must be a whole number from ${min} to ${max}`);

export const createLinkBody = z.object({
  reason: z.string().max(64, 'reason is too long').meta({ description: 'A key from `GET /nimc-reasons`; its label is shown to the person', example: 'corporate' }),
  purpose: z
    .string()
    .trim()
    .min(1, 'purpose must not be empty')
    .max(200, 'purpose must be at most 200 characters')
    .meta({ description: 'Shown to the person as why you ask (up to 200 characters)', example: 'Opening your savings account' }),
  require_face: z.boolean().default(true).meta({ description: 'Ask for a selfie and compare it with the photo the authority holds (a face match); default true' }),
  liveness: z
    .boolean()
    .optional()
    .meta({ description: 'With the face match, a liveness check: the page has the person turn their head on request before their camera, in place of a selfie (docs/liveness.md). Default: as `require_face`; `true` without `require_face` is refused (400); `false` keeps the selfie (camera or a chosen photo)' }),
  expires_in_hours: integerIn('expires_in_hours', 1, MAX_EXPIRES_IN_HOURS).default(DEFAULT_EXPIRES_IN_HOURS).meta({ description: `1 to ${MAX_EXPIRES_IN_HOURS}; default ${DEFAULT_EXPIRES_IN_HOURS}` }),
  max_uses: integerIn('max_uses', 1, MAX_USES).default(1).meta({ description: `How many verifications the link may make, 1 to ${MAX_USES}; default 1` }),
  client_ref: z
    .string()
    .trim()
    .min(1, 'client_ref must not be empty')
    .max(100, 'client_ref must be at most 100 characters')
    .optional()
    .meta({ description: 'Your own reference, returned with the link and its webhook events (not shown to the person; no personal data, please)', example: 'applicant-8812' }),
});
export type CreateLink = z.infer<typeof createLinkBody>;

export const LINK_STATUSES = ['active', 'expired', 'used_up', 'revoked', 'suspended'] as const;
// `pending` until its verification ends; `abandoned` when none was ever recorded (the process
// stopped between taking the use and recording the verification).
export const SUBMISSION_STATUSES = ['pending', 'found', 'not_found', 'failed', 'refused', 'abandoned'] as const;

export const faceResult = z
  .object({
    status: z.enum(['compared', 'no_reference_photo']),
    match: z.boolean().nullable(),
    confidence: z.number().nullable(),
    threshold: z.number(),
    liveness: z.enum(['not_checked', 'passed']),
    liveness_check: livenessCheckSchema.optional(),
    model: z.string(),
  })
  .meta({ description: 'As in the face match answer; null without a selfie, when no comparison was made, or once the verification was erased' });

export const link = z.object({
  id: z.string().meta({ example: 'LNK-7K2M9Q4XD1AB' }),
  status: z.enum(LINK_STATUSES).meta({ description: '`active` until revoked, past `expires_at`, or `uses` reached `max_uses`; `suspended` while its maker may no longer make links (disabled or demoted; an API client revoked or suspended)' }),
  reason: z.string(),
  purpose: z.string(),
  require_face: z.boolean(),
  liveness: z.boolean().meta({ description: 'The face match comes with a liveness check (head poses before the camera) in place of a selfie' }),
  expires_at: z.string(),
  max_uses: z.number().int(),
  uses: z.number().int().meta({ description: 'Verifications made (those charging nothing, such as a refused vNIN, are not counted)' }),
  client_ref: z.string().nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
});
export type Link = z.infer<typeof link>;

export const linkWithUrl = link.extend({
  url: z.string().meta({ description: 'Send it to the person: `<PUBLIC_BASE_URL>/v/<token>`. Shown once, in this answer (only a hash of the token is kept)', example: 'https://verify.example.com/v/3q2-7wPj1eXzZyV0mN4kAg' }),
});

export const submission = z.object({
  reference_id: z
    .string()
    .nullable()
    .meta({ description: 'The verification (requery it, free, for the record); null when the organisation could not take the submission (`refused` with `code` `insufficient_units` or `organisation_cannot_verify`): no verification was made', example: 'REF-7K2M9Q4XD1AB' }),
  status: z.enum(SUBMISSION_STATUSES).meta({
    description:
      'As `verification.completed` once it ended (`found`, `not_found`, `failed`, `refused`: a vNIN the authority refused, used, expired, ...). ' +
      '`refused` with a null `reference_id`: the organisation could not take it (`code` `insufficient_units`: the wallet could not pay; `organisation_cannot_verify`: its subscription is not active), nothing was charged, its use came back, and the administrators and finance officers were e-mailed (at most once an hour). ' +
      '`pending` while its verification runs, or when it was still running as the page stopped waiting: it takes its end (and sends its webhook event) ' +
      'within minutes of the verification ending. `abandoned`: the submission stopped before any verification was recorded; nothing was charged and its use came back',
  }),
  code: z.string().nullable().meta({ description: 'Why it did not end `found` (e.g. `vnin_used`), or null (always while `pending`, and when `abandoned`)' }),
  face: faceResult.nullable(),
  ...verdictSchema,
  submitted_at: z.string(),
});

export const linkDetail = link.extend({
  submissions: z.array(submission).meta({ description: 'The verifications made on the page, newest first (at most the last 200)' }),
});

export const linkPage = z.object({ data: z.array(link), next_cursor: z.string().nullable() });
