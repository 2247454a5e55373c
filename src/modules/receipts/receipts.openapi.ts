import { bearer, errors, errorResponse, json, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { consentReceipt, referenceParam } from './receipts.schemas.ts';

/** The operation's own rules, markdown (docs/receipts.md tells the whole story). */
const RECEIPT = md(
  'Everyone of the organisation (API clients: `history:read`), as reading its verifications. The consent receipt of one of',
  "its verifications, the same JSON document the person reads at `/r/<token>.json` after a verification link's submission:",
  'the fields of ISO/IEC TS 27560 (consent record information structure) as the Data Privacy Vocabulary names them. It',
  'names no NIN, vNIN, name or photo.',
  '',
  'A verification made over the API with a `consent` object has a receipt too (the same document: `privacy_notice.text` is',
  'null, since the API names only the notice version, `event[0].given_by` is `organisation`, `purpose.description` null).',
  'A 404 says which: `Unknown reference_id` (none of your organisation), a verification with no `consent` recorded',
  '(`code: receipt_no_consent`), or one erased or past its retention period (`code: receipt_erased`): a receipt is kept',
  'exactly as long as its verification.',
);

export function register(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/verifications/{reference_id}/receipt',
    operationId: 'getVerificationReceipt',
    tags: [TAGS.history],
    summary: "A verification's consent receipt (ISO/IEC TS 27560)",
    description: RECEIPT,
    security: bearer,
    request: { params: referenceParam },
    responses: {
      200: json(consentReceipt, 'The consent receipt'),
      ...errors(401, 403, 429),
      400: errorResponse('reference_id is not REF- and 12 characters'),
      404: errorResponse('No receipt: unknown reference_id, no consent recorded, or erased with its verification'),
    },
  });
}
