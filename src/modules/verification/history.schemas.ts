import { z } from 'zod';
import { cursorParam, timeBoundParam, limitParam } from '../../lib/pagination.ts';
import { DELIVERIES, MODES, REFERENCE_RE, STATUSES } from './verification.schemas.ts';
import { verdictSchema } from './verdict.ts';

/**
 * `mode=` filters on how the verification was asked for (sync, async, batch); the lookup's kinds
 * (nin, vnin, phone, demography, match) are accepted there too, as before `kind` existed: the two
 * sets of names do not overlap.
 */
const MODE_FILTERS = [...DELIVERIES, ...MODES] as const;
export const BATCH_ID_RE = /^BAT-[A-Z0-9]{12}$/;

/** The filters of GET /verifications, JSON and CSV alike. */
export const verificationFilters = z.object({
  status: z.enum(STATUSES, `status must be one of ${STATUSES.join(', ')}`).optional(),
  mode: z.enum(MODE_FILTERS, `mode must be one of ${MODE_FILTERS.join(', ')}`).optional(),
  kind: z.enum(MODES, `kind must be one of ${MODES.join(', ')}`).optional(),
  delivery: z.enum(DELIVERIES, `delivery must be one of ${DELIVERIES.join(', ')}`).optional(),
  batch_id: z.string().regex(BATCH_ID_RE, 'batch_id must be BAT- and 12 letters or digits').optional(),
  from: timeBoundParam('from').optional(),
  to: timeBoundParam('to').optional(),
});
export type VerificationFilters = z.infer<typeof verificationFilters>;

export const verificationListQuery = verificationFilters.extend({ limit: limitParam, cursor: cursorParam });
export type VerificationListQuery = z.infer<typeof verificationListQuery>;

/** The CSV export's columns: a summary's fields, the API client and the consent flattened into columns of their own. */
export const VERIFICATION_CSV_COLUMNS = [
  'reference_id',
  'mode',
  'kind',
  'batch_id',
  'reason',
  'status',
  'charged',
  'fixture',
  'username',
  'api_client_id',
  'api_client_name',
  'consent_obtained_at',
  'consent_channel',
  'consent_notice_version',
  'created_at',
] as const;

/** Who asked, when an API client did: its public id and its name (never its secret). */
export const apiClientRef = z.object({
  client_id: z.string().meta({ example: 'cli_0f3c9a7d21b4e8c6a1b2c3d4' }),
  name: z.string().meta({ example: 'KYC backend' }),
});

/**
 * What the history shows of a verification: who asked, why, how it ended and whether it was
 * charged. Never the query or the record (personal data): requery reads those.
 */
export const verificationSummary = z.object({
  reference_id: z.string().regex(REFERENCE_RE).meta({ example: 'REF-7K2M9Q4XD1AB' }),
  mode: z.enum(DELIVERIES).meta({ description: 'How it was asked for: sync (answered in the request), async (Prefer: respond-async) or batch' }),
  kind: z.enum(MODES).meta({ description: 'What was looked up: nin, vnin, phone, demography, match or face (a face match)' }),
  delivery: z.enum(DELIVERIES).meta({ description: 'The same as mode (kept for clients written against the first asynchronous release)' }),
  batch_id: z.string().nullable().meta({ description: 'The batch a batch row belongs to; null otherwise', example: null }),
  reason: z.string().meta({ example: 'corporate' }),
  status: z.enum(STATUSES).meta({ description: 'expired: the stored record was erased after the retention period' }),
  ...verdictSchema,
  charged: z.boolean().meta({ description: 'True when this verification debited a unit' }),
  fixture: z.boolean().meta({ description: 'A fixture NIN (test mode): never charged' }),
  username: z.string().nullable().meta({ description: 'The user of the organisation who asked; null when an API client asked' }),
  api_client: apiClientRef.nullable().meta({ description: 'The API client that asked; null when a user asked' }),
  consent: z
    .object({
      obtained_at: z.string(),
      channel: z.string(),
      notice_version: z.string(),
      given_by: z.literal('person').optional().meta({ description: 'Present when the person gave it themselves, on a verification link\'s page' }),
      address: z.string().optional().meta({ description: "A verification link: the address the person's consent came from (removed by subject erasure)" }),
      user_agent: z.string().optional().meta({ description: "A verification link: the person's browser, as it named itself (removed by subject erasure)" }),
      text: z.string().optional().meta({ description: 'A verification link: the text the person agreed to' }),
    })
    .nullable()
    .meta({ description: 'The consent statement sent with the verification (or given by the person on a verification link), or null' }),
  created_at: z.string().meta({ description: 'ISO 8601, UTC' }),
});
export type VerificationSummary = z.infer<typeof verificationSummary>;

export const verificationSummaryRow = verificationSummary.omit({ api_client: true, verdict: true, verdict_reasons: true }).extend({
  // What the verdict reads (verdict.ts): the failure code, and a face or match-only verification's sealed result.
  failure_code: z.string().nullable(),
  record_enc: z.instanceof(Buffer).nullable(),
  key_id: z.string().nullable(),
  client_id: z.string().nullable(),
  client_name: z.string().nullable(),
  created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString()),
  /** created_at to the microsecond, as text: the cursor must name the row exactly. */
  created_key: z.string(),
});
