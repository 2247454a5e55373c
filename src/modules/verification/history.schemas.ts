import { z } from 'zod';
import { cursorParam, dayParam, limitParam } from '../../lib/pagination.ts';
import { MODES, REFERENCE_RE, STATUSES } from './verification.schemas.ts';

export const verificationListQuery = z.object({
  status: z.enum(STATUSES, `status must be one of ${STATUSES.join(', ')}`).optional(),
  mode: z.enum(MODES, `mode must be one of ${MODES.join(', ')}`).optional(),
  from: dayParam('from').optional(),
  to: dayParam('to').optional(),
  limit: limitParam,
  cursor: cursorParam,
});
export type VerificationListQuery = z.infer<typeof verificationListQuery>;

/**
 * What the history shows of a verification: who asked, why, how it ended and whether it was
 * charged. Never the query or the record (personal data): requery reads those.
 */
export const verificationSummary = z.object({
  reference_id: z.string().regex(REFERENCE_RE).meta({ example: 'REF-7K2M9Q4XD1AB' }),
  mode: z.enum(MODES),
  reason: z.string().meta({ example: 'corporate' }),
  status: z.enum(STATUSES).meta({ description: 'expired: the stored record was erased after the retention period' }),
  charged: z.boolean().meta({ description: 'True when this verification debited a unit' }),
  fixture: z.boolean().meta({ description: 'A fixture NIN (test mode): never charged' }),
  username: z.string().meta({ description: 'The user of the organisation who asked' }),
  created_at: z.string().meta({ description: 'ISO 8601, UTC' }),
});
export type VerificationSummary = z.infer<typeof verificationSummary>;

export const verificationSummaryRow = verificationSummary.extend({
  created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString()),
  /** created_at to the microsecond, as text: the cursor must name the row exactly. */
  created_key: z.string(),
});
