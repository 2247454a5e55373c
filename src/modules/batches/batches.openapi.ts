import { z } from 'zod';
import { bearer, errorResponse, errors, json, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { batchAccepted, batchJsonBodyDoc, batchList, batchResults, batchView, RESULT_COLUMNS } from './batches.schemas.ts';

const idParam = z.object({ id: z.string().meta({ description: 'The batch id, BAT- and 12 characters', example: 'BAT-7K2M9Q4X1B8C' }) });
const pageParams = {
  limit: z.number().int().min(1).max(200).optional().meta({ description: 'Rows per page, 1 to 200 (default 50)' }),
  cursor: z.string().optional().meta({ description: 'The `next_cursor` of the previous page; opaque' }),
};
const notFound = errorResponse("No such batch in the caller's organisation (another organisation's batch reads the same)");

export function register(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/verify-nin/batches',
    operationId: 'createBatch',
    tags: [TAGS.batches],
    summary: 'Verify up to 50,000 NINs or phone numbers in one batch',
    description:
      'Administrators and team members. JSON `{reason, rows}` or a CSV upload (`Content-Type: text/csv`, a header row naming ' +
      'any of the columns `nin`, `vnin`, `phone_no`, `client_ref`, `reason`; `?reason=` is the default reason). At most 50,000 rows ' +
      'and 10 MB (413 beyond). Answers at once; the rows are looked up in the background, below interactive verifications. ' +
      'A malformed row is `invalid` (never charged); an identifier repeated in the batch is looked up and charged once. ' +
      'A row takes its unit when it is queued for the authority; with no spendable unit the batch pauses and resumes after a top-up.',
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
    description:
      'CSV by default (the whole batch, in row order, sent as it is read); with `Accept: application/json`, pages of rows. ' +
      'Rows not yet looked up show `pending`. No photo: requery or print the slip by `reference_id`. The download is recorded.',
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
    description: 'Every row not yet started ends `cancelled` and its unit is given back; rows already at the authority finish. Answers the batch.',
    security: bearer,
    request: { params: idParam },
    responses: { 200: json(batchView, 'The batch after the cancellation'), ...errors(401, 403, 429), 404: notFound },
  });
}
