import { z } from 'zod';
import { cursorParam, limitParam } from '../../lib/pagination.ts';
import { systemClock } from '../../lib/clock.ts';
import { consentSchema as verificationConsentSchema } from '../verification/index.ts';
import { BATCH_STATUSES } from './batches.repository.ts';

/**
 * A row's own reference, as the JSON rows and the CSV column both carry it: echoed in result files and
 * shown in spreadsheets and terminals, so no control character of any kind (tab, CR, ESC, DEL, C1).
 * Its length is a row rule (a longer one makes its row invalid), checked with the others in rows.ts.
 */
export const clientRefSchema = z
  .string()
  .refine((s) => !/\p{Cc}/u.test(s), 'must not contain control characters')
  .meta({ description: 'Your own reference for the row (at most 100 characters, no control characters), echoed in the results' });

/** The free-text fields of a row, as JSON and CSV rows both give them: a break is a 400 for the whole batch. */
export const rowText = z.object({ client_ref: clientRefSchema });

/**
 * The consent object of the consent rules (the one every verification POST takes), for a whole batch
 * or one row; dates are checked against the system clock.
 */
export const consentSchema = verificationConsentSchema(systemClock).meta({ id: 'BatchConsent', description: 'How the people of the batch agreed to be verified' });
export type Consent = z.infer<typeof consentSchema>;

const row = z
  .object({
    nin: z.string().optional().meta({ description: 'NIN, 11 digits' }),
    vnin: z.string().optional().meta({ description: 'Virtual NIN, 16 letters and digits: kept sealed in Redis only until its row is queued, never stored' }),
    phone_no: z.string().optional().meta({ description: 'Nigerian phone number, 11 digits starting with 0' }),
    client_ref: clientRefSchema.optional(),
    consent: consentSchema.optional(),
  })
  .meta({ id: 'BatchRowInput', description: 'Exactly one of nin, vnin, phone_no. A row that breaks a rule is accepted as invalid, with its reason in the results.' });

/** JSON body. Rows are checked one by one (a bad row is `invalid`, not a 400), so they arrive as unknown. */
export const batchJsonBody = z.object({
  reason: z.string().trim().min(1, 'reason must not be empty').max(100, 'reason is too long'),
  rows: z.array(z.unknown()),
  consent: consentSchema.optional(),
});
export const batchJsonBodyDoc = z
  .object({ reason: z.string().meta({ description: 'A key from GET /nimc-reasons' }), rows: z.array(row).max(50_000), consent: consentSchema.optional() })
  .meta({ id: 'BatchInput' });

/** CSV upload: the query string carries the default reason and the batch's consent. */
export const batchCsvQuery = z.object({
  reason: z.string().trim().min(1, 'reason must not be empty').max(100, 'reason is too long').optional(),
  consent_obtained_at: z.string().optional(),
  consent_channel: z.string().optional(),
  consent_notice_version: z.string().optional(),
});

export const batchAccepted = z
  .object({
    id: z.string().meta({ example: 'BAT-7K2M9Q4X1B8C' }),
    status: z.literal('queued'),
    total: z.number().int(),
    invalid: z.number().int(),
    estimated_units: z.number().int().meta({ description: 'Distinct live identifiers: the most the batch can cost' }),
  })
  .meta({ id: 'BatchAccepted' });

export const batchView = z
  .object({
    id: z.string(),
    status: z.enum(BATCH_STATUSES),
    // z.enum, not z.literal: the generator puts null into a nullable enum's values, not into a literal's.
    paused_reason: z.enum(['insufficient_units']).nullable(),
    total: z.number().int(),
    done: z.number().int().meta({ description: 'Rows that have ended, whichever way: found + not_found + failed + invalid + cancelled' }),
    found: z.number().int(),
    not_found: z.number().int(),
    failed: z.number().int(),
    invalid: z.number().int(),
    cancelled: z.number().int(),
    units_charged: z.number().int(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'Batch' });
export type BatchView = z.infer<typeof batchView>;

export const batchList = z.object({ data: z.array(batchView), next_cursor: z.string().nullable() }).meta({ id: 'BatchList' });
export const batchListQuery = z.object({ limit: limitParam, cursor: cursorParam });

export const BATCH_ID_RE = /^BAT-[A-Z0-9]{12}$/;
/** A path naming a batch: the routes' check (anything else is not found) and the OpenAPI document's pattern. */
export const batchPathParams = z.object({ id: z.string().regex(BATCH_ID_RE).meta({ description: 'The batch id, BAT- and 12 letters or digits', example: 'BAT-7K2M9Q4X1B8C' }) });

export const RESULT_COLUMNS = ['row', 'client_ref', 'status', 'reference_id', 'fname', 'mname', 'lname', 'dob', 'gender', 'phone', 'detail'] as const;
export const ROW_STATUSES = ['pending', 'found', 'not_found', 'failed', 'invalid', 'cancelled'] as const;

export const batchResult = z
  .object({
    row: z.number().int().meta({ description: 'Position of the row in the upload, from 1 (the CSV header excluded)' }),
    client_ref: z.string().nullable(),
    status: z.enum(ROW_STATUSES),
    reference_id: z.string().nullable().meta({ description: 'The verification of this identifier (shared by duplicate rows): requery or print its slip' }),
    fname: z.string().nullable(),
    mname: z.string().nullable(),
    lname: z.string().nullable(),
    dob: z.string().nullable(),
    gender: z.string().nullable(),
    phone: z.string().nullable(),
    detail: z.string().nullable().meta({ description: 'Why the row is invalid, not found, failed or cancelled' }),
  })
  .meta({ id: 'BatchResultRow' });
export type BatchResult = z.infer<typeof batchResult>;

export const batchResults = z.object({ data: z.array(batchResult), next_cursor: z.string().nullable() }).meta({ id: 'BatchResults' });
export const batchResultsQuery = z.object({ limit: limitParam, cursor: cursorParam });
