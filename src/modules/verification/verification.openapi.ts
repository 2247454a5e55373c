import { z } from 'zod';
import { systemClock } from '../../lib/clock.ts';
import { bearer, dataEnvelope, errorResponse, errors, json, jsonBody, TAGS, upstreamErrorBody, type OpenAPIRegistry } from '../../openapi/common.ts';
import { personRecordSchema } from './person.ts';
import { demographyBody, idempotencyKeyHeader, ninBody, phoneBody, REFERENCE_RE, requeryBody } from './verification.schemas.ts';

const referenceId = z.string().regex(REFERENCE_RE).meta({ description: 'Keep it: requery with it, quote it to support', example: 'REF-7K2M9Q4XD1AB' });

const idempotencyHeaders = z.object({
  'Idempotency-Key': idempotencyKeyHeader.meta({
    description:
      'Optional. A repeat with the same key and body gets the first final answer again (header `Idempotent-Replayed: true`) instead of a second verification and debit; ' +
      'the same key with another body, or while the first is still running, answers 409. Kept 24 hours.',
    example: '7f1c2a9e-2d7e-4c3b-9a59-0b8c2f6d1e11',
  }),
});

const replayed = { 'Idempotent-Replayed': { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key', schema: { type: 'string' as const } } };

export function register(registry: OpenAPIRegistry): void {
  // Flat, not an allOf over a registered PersonRecord: the record is a strict object, and two
  // strict objects under allOf would forbid each other's fields.
  const VerifiedPerson = personRecordSchema.extend({ reference_id: referenceId }).meta({ id: 'VerifiedPerson',
    description:
      'Normalised person record plus the reference_id of this verification. Every field is always present, `""` when the authority did not return it.',
  });
  const Verification = dataEnvelope(VerifiedPerson).meta({ id: 'VerificationResponse' });
  const upstream = (description: string) => errorResponse(description, upstreamErrorBody);

  const verifyResponses = {
    200: { ...json(Verification, 'Found; 1 unit debited (0 for fixture NINs)'), headers: replayed },
    ...errors(401, 402, 413, 415, 422, 429),
    400: errorResponse('A field breaks a rule (format, unknown reason key) or the Idempotency-Key is invalid; nothing charged'),
    403: errorResponse('No active subscription (live numbers), no organisation account, or a cross-origin call'),
    404: errorResponse('Not found at the authority (`NIN not found` for NIN lookups); nothing charged'),
    409: errorResponse('Idempotency-Key reused with another body, or its first request is still running', upstreamErrorBody),
    502: upstream('The identity authority failed; nothing charged. Requery later with reference_id'),
    503: upstream('The identity authority is rate limiting, or a dependency is down; nothing charged. Retry with backoff'),
    504: upstream('No answer in time; outcome unknown. Wait 30 s, then requery with reference_id'),
  };

  // Built with the system clock only for its shape; the app's own instance checks the dates.
  const base = demographyBody(systemClock);
  const demography = base.extend({
    gender: base.shape.gender.meta({ enum: ['m', 'f', 'M', 'F'], description: 'm or f, case-insensitive' }),
    date_of_birth: base.shape.date_of_birth.meta({ description: 'dd-mm-yyyy, a real date, not in the future', example: '01-02-1990' }),
  });

  const modes = [
    {
      path: '/verify-nin',
      operationId: 'verifyNin',
      summary: 'Verify a NIN',
      body: ninBody.meta({ id: 'VerifyNinRequest',
        example: { nin: '12345678901', reason: 'corporate' },
        description: 'Fixture NINs (see the introduction) answer without reaching the authority and debit nothing.',
      }),
    },
    {
      path: '/verify-nin/phone',
      operationId: 'verifyPhone',
      summary: 'Verify by phone number',
      body: phoneBody.meta({ id: 'VerifyPhoneRequest', example: { phone_no: '08012345678', reason: 'corporate' } }),
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
        'after a 5xx or a timeout, wait 30 s and requery; or send an Idempotency-Key.',
      security: bearer,
      request: { headers: idempotencyHeaders, body: jsonBody(m.body) },
      responses: verifyResponses,
    });
  }

  const Requery = z
    .object({ status: z.literal('success'), message: z.string().meta({ example: 'Record retrieved successfully' }), data: VerifiedPerson })
    .meta({ id: 'RequeryResponse' });
  const RequeryPending = z
    .object({ status: z.literal('pending'), message: z.string(), reference_id: referenceId })
    .meta({ id: 'RequeryPending' });

  registry.registerPath({
    method: 'post',
    path: '/verify-nin/requery',
    operationId: 'requeryVerification',
    tags: [TAGS.verification],
    summary: 'Read a past verification again',
    description: 'Free and idempotent: retry it freely. Records are erased after the retention period (then 404).',
    security: bearer,
    request: { body: jsonBody(requeryBody.meta({ id: 'RequeryRequest', example: { reference_id: 'REF-7K2M9Q4XD1AB' } })) },
    responses: {
      200: json(Requery, 'The stored record'),
      202: json(RequeryPending, 'Still in progress; requery again shortly'),
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
    description:
      'One A4 page: photo, names, date of birth, NIN, the reference as text and QR code, when and for which organisation; ' +
      'fixture records are marked as test data. Free (no unit, no ledger line); team members may print too. ' +
      'Answered with `Cache-Control: no-store`: the slip carries personal data.',
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
