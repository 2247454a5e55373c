import { z } from 'zod';
import type { Reason } from '../../adapters/identity-authority/types.ts';
import { bearer, errors, json, TAGS, type Assert, type OpenAPIRegistry, type Same } from '../../openapi/common.ts';

// The route answers `{ data: Reason[] }` from reasons.service; the Assert keeps this in step with Reason.
const reason = z.object({
  key: z.string().meta({ description: 'The value to send as `reason`', example: 'corporate' }),
  label: z.string().meta({ description: 'Human label', example: 'Corporate' }),
  description: z.string(),
});
type _reasonMatches = Assert<Same<z.infer<typeof reason>, Reason>>;

export function register(registry: OpenAPIRegistry): void {
  const Reasons = z.object({ data: z.array(reason.meta({ id: 'Reason' })) }).meta({ id: 'ReasonList' });
  for (const [path, operationId, summary] of [
    ['/nimc-reasons', 'listNimcReasons', 'Reasons a verification may be made for'],
    ['/upstream-reasons', 'listUpstreamReasons', 'Same list under a provider-neutral name'],
  ] as const) {
    registry.registerPath({
      method: 'get',
      path,
      operationId,
      tags: [TAGS.reasons],
      summary,
      description: 'Verification requests carry the `key`, not the label. Known keys include `corporate`, `nyscCheck` and `telecommunicationSimReg`; the live list may hold more.',
      security: bearer,
      responses: { 200: json(Reasons), ...errors(401, 429) },
    });
  }
}
