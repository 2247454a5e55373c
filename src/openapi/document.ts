import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { registerAccountsOpenApi as accounts } from '../modules/accounts/index.ts';
import { registerAuditOpenApi as audit } from '../modules/audit/index.ts';
import { registerBatchesOpenApi as batches } from '../modules/batches/index.ts';
import { registerAuthOpenApi as auth } from '../modules/auth/index.ts';
import { registerOpsOpenApi as ops } from '../modules/ops/index.ts';
import { registerPlatformOpenApi as platform } from '../modules/platform/index.ts';
import { registerReasonsOpenApi as reasons } from '../modules/reasons/index.ts';
import { registerSettingsOpenApi as settings, registerTeamOpenApi as team } from '../modules/team/index.ts';
import { registerAutoTopupOpenApi as autoTopup, registerTopupHistoryOpenApi as topupHistory, registerTopupOpenApi as topup } from '../modules/topup/index.ts';
import { registerVerificationHistoryOpenApi as verificationHistory, registerVerificationOpenApi as verification } from '../modules/verification/index.ts';
import { registerLedgerOpenApi as ledger } from '../modules/wallet/index.ts';
import { registerWebhooksOpenApi as webhooks } from '../modules/webhooks/index.ts';
import { registerLinksOpenApi as links } from '../modules/links/index.ts';
import { registerStatementsOpenApi as statements } from '../modules/statements/index.ts';
import { COMMON_SCHEMAS, OpenAPIRegistry, registerCommon, TAG_DESCRIPTIONS, TAGS, type RegisterOpenApi, type TagName } from './common.ts';

/** Each module describes its own paths next to its schemas; this list is the whole API. */
export const MODULES: readonly RegisterOpenApi[] = [auth, accounts, team, settings, verification, batches, reasons, topup, autoTopup, ledger, topupHistory, verificationHistory, audit, webhooks, links, platform, ops, statements];

export const API_VERSION = '1.0.0';

/**
 * The reference's prose is markdown, so that it stays editable: the introduction (conventions,
 * versioning, errors) beside this file, and each tag's guide next to the module that owns the topic.
 * The service runs from source, so the files ship with it; they are read once, when this module loads.
 */
const guide = (path: string): string => readFileSync(join(import.meta.dirname, path), 'utf8').trim();

const DESCRIPTION = guide('introduction.md');

const TAG_GUIDES: Partial<Record<TagName, string>> = {
  Authentication: [guide('../modules/auth/auth.guide.md'), guide('../modules/accounts/accounts.guide.md')].join('\n\n'),
  Team: guide('../modules/team/team.guide.md'),
  Verification: [guide('../modules/verification/verification.guide.md'), guide('../modules/verification/face.guide.md')].join('\n\n'),
  Batches: guide('../modules/batches/batches.guide.md'),
  Reasons: guide('../modules/reasons/reasons.guide.md'),
  'Top-up': guide('../modules/topup/topup.guide.md'),
  'Inbound webhooks': guide('../modules/topup/webhooks.guide.md'),
  Webhooks: guide('../modules/webhooks/webhooks.guide.md'),
  'Verification links': guide('../modules/links/links.guide.md'),
  History: guide('../modules/wallet/history.guide.md'),
  'Audit trail': guide('../modules/audit/audit.guide.md'),
};

function tagDescription(name: TagName): string {
  const more = TAG_GUIDES[name];
  return more ? `${TAG_DESCRIPTIONS[name]}\n\n${more}` : TAG_DESCRIPTIONS[name];
}

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
    tags: Object.values(TAGS).map((name) => ({ name, description: tagDescription(name) })),
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
