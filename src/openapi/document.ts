import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { registerAccountsOpenApi as accounts } from '../modules/accounts/index.ts';
import { registerAuditOpenApi as audit } from '../modules/audit/index.ts';
import { registerBatchesOpenApi as batches } from '../modules/batches/index.ts';
import { registerAuthOpenApi as auth } from '../modules/auth/index.ts';
import { registerOpsOpenApi as ops } from '../modules/ops/index.ts';
import { registerPlatformOpenApi as platform } from '../modules/platform/index.ts';
import { registerReasonsOpenApi as reasons } from '../modules/reasons/index.ts';
import { registerSettingsOpenApi as settings, registerTeamOpenApi as team } from '../modules/team/index.ts';
import { registerTopupHistoryOpenApi as topupHistory, registerTopupOpenApi as topup } from '../modules/topup/index.ts';
import { registerVerificationHistoryOpenApi as verificationHistory, registerVerificationOpenApi as verification } from '../modules/verification/index.ts';
import { registerLedgerOpenApi as ledger } from '../modules/wallet/index.ts';
import { COMMON_SCHEMAS, OpenAPIRegistry, registerCommon, TAG_DESCRIPTIONS, TAGS, type RegisterOpenApi } from './common.ts';

/** Each module describes its own paths next to its schemas; this list is the whole API. */
export const MODULES: readonly RegisterOpenApi[] = [auth, accounts, team, settings, verification, batches, reasons, topup, ledger, topupHistory, verificationHistory, audit, platform, ops];

export const API_VERSION = '1.0.0';

const DESCRIPTION = `
Verifies Nigerian National Identification Numbers (NIN) against the identity authority and
returns one normalised person record, paid for from a prepaid wallet of units that an
organisation administrator tops up through the payment processor.

## Base address and versions
Every path below is relative to the versioned base \`/v1\` (the same paths without \`/v1\` are
still accepted for older integrations; their answers carry \`Deprecation\` and a \`Link\` to the
\`/v1\` path with \`rel="successor-version"\`). \`/healthz\` and \`/readyz\` live at the root.

## Authentication
\`POST /login\` (form-encoded \`username\`, \`password\`) returns a bearer token valid 60 minutes;
a server logs in with the client credentials grant (\`grant_type=client_credentials\`, the
\`client_id\` and \`client_secret\` an administrator created at \`POST /api-clients\`).
Send the token as \`Authorization: Bearer <token>\` on every other call: only \`POST /login\`,
\`POST /forgot-password\` and \`POST /reset-password\` take none. A missing, expired or invalid
token gives 401; a valid token without the right role gives 403 (top-ups need an organisation
administrator). Call the API from your server: cross-origin browser calls are refused.

## Content types
\`POST /login\`, \`POST /topup/initialize\` and \`POST /topup/verify\` take
\`application/x-www-form-urlencoded\`; every other body is JSON. Another content type gives 415.
Responses are \`application/json; charset=utf-8\`.

## The \`data\` envelope
Every verification mode (NIN, phone, demography, requery) answers
\`{ "data": <person record> }\`; the record always has every field, with \`""\` for what the
authority did not return. The requery adds \`status\`, \`message\` and \`consent\` beside
\`data\`, the same for every verification however it was made. Other endpoints answer with the
resource at the top level. Response objects may gain fields without a new version: ignore the ones
you do not know (the document leaves them open).

## Errors
Every error body is \`{ "detail": "..." }\`. A 422 (missing field, wrong type) adds \`errors\`
(\`[{loc, msg, type}]\`); a 400 is a well-typed value that breaks a rule. 502 and 504 add the
\`reference_id\` of the recorded verification; 500 and 503 add a \`request_id\` for support.
Each response carries \`X-Request-Id\` (send your own, 8-64 of \`[A-Za-z0-9._-]\`, to correlate).

## Retrying verifications
A successful verification debits 1 unit; never retry one blindly:
- 2xx: done; keep the \`reference_id\` and use \`POST /verify-nin/requery\` to read it again (free).
- 4xx: nothing was charged; fix the input.
- 5xx, network failure or timeout: wait 30 seconds, then requery with the \`reference_id\`.
An \`Idempotency-Key\` header makes a repeated verification return the first answer.

## Rate limits
Per token and per organisation; over the limit answers 429 with \`Retry-After\`.

## Fixture NINs (test mode)
On \`POST /verify-nin\`, these numbers never reach the authority, debit 0 units, need no
subscription, and are recorded with amount 0 and \`fixture: true\`. Everything else
(authentication, reason validation, errors, rate limits, response shape) is as in live mode.

| NIN | Behaviour |
|---|---|
| \`12345678901\` | 200 with a full record, including a small base64 JPEG; stable \`transaction_id\` |
| \`12345678902\` | 200 with a sparse record: names, date of birth and gender; other fields \`""\` |
| \`99999999999\` | 404 \`{ "detail": "NIN not found" }\`, like a live not-found |
`.trim();

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/** Builds the document from the modules' zod schemas; pure, so tests and the client generator call it too. */
export function buildOpenApiDocument(modules: readonly RegisterOpenApi[] = MODULES): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registerCommon(registry);
  for (const register of modules) register(registry);
  const doc = new OpenApiGeneratorV31([...registry.definitions, ...COMMON_SCHEMAS], { sortComponents: 'alphabetically' }).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Identity Verification and Wallet API',
      version: API_VERSION,
      description: DESCRIPTION,
      license: { name: 'Proprietary: for organisations under contract with the operator', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/v1', description: 'Versioned base (this service)' }],
    tags: Object.values(TAGS).map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
  });
  return withoutUnusedResponses(doc);
}

/**
 * The shared error responses are all registered (common.ts) but only some are referenced by the
 * paths of the day: an unreferenced one would be dead weight in the document (and a lint warning).
 */
function withoutUnusedResponses(doc: OpenApiDocument): OpenApiDocument {
  const responses = doc.components?.responses;
  if (!responses) return doc;
  const text = JSON.stringify(doc.paths);
  for (const name of Object.keys(responses)) if (!text.includes(`"#/components/responses/${name}"`)) delete responses[name];
  return doc;
}
