import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpenApiGeneratorV3, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
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
import { registerReceiptsOpenApi as receipts } from '../modules/receipts/index.ts';
import { registerStatementsOpenApi as statements } from '../modules/statements/index.ts';
import { registerLivenessOpenApi as liveness } from '../modules/liveness/index.ts';
import { COMMON_SCHEMAS, OpenAPIRegistry, registerCommon, TAG_DESCRIPTIONS, TAGS, type RegisterOpenApi, type TagName } from '../openapi/common.ts';

/** Each module describes its own paths next to its schemas; this list is the whole API. */
export const MODULES: readonly RegisterOpenApi[] = [auth, accounts, team, settings, verification, batches, reasons, topup, autoTopup, ledger, topupHistory, verificationHistory, receipts, audit, webhooks, links, platform, ops, statements, liveness];

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
export type OpenApiDocument30 = ReturnType<OpenApiGeneratorV3['generateDocument']>;

/**
 * Where a document built outside a running service (the lint, `npm run docs`, the client generator,
 * tests) says the API lives: the sandbox's default address (`npm start`, PORT 8080). The service
 * passes its own PUBLIC_BASE_URL.
 */
export const SANDBOX_BASE_URL = 'http://localhost:8080';

export type DocumentOptions = {
  /** The service's public address without a trailing slash (config.publicBaseUrl): the servers are absolute under it. */
  publicBaseUrl?: string;
};

function registryOf(modules: readonly RegisterOpenApi[]): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registerCommon(registry);
  for (const register of modules) register(registry);
  return registry;
}

function config(publicBaseUrl: string) {
  return {
    info: {
      title: 'Identity Verification and Wallet API',
      version: API_VERSION,
      description: DESCRIPTION,
    },
    // Absolute: a tool given the document alone (Prism, a generated client) finds the API at its real address.
    servers: [{ url: `${publicBaseUrl}/v1`, description: 'Versioned base (this service)' }],
    tags: Object.values(TAGS).map((name) => ({ name, description: tagDescription(name) })),
  };
}

/** Builds the OpenAPI 3.1 document from the modules' zod schemas; pure, so tests and the client generator call it too. */
export function buildOpenApiDocument(opts: DocumentOptions = {}, modules: readonly RegisterOpenApi[] = MODULES): OpenApiDocument {
  const base = opts.publicBaseUrl ?? SANDBOX_BASE_URL;
  const c = config(base);
  const doc = new OpenApiGeneratorV31([...registryOf(modules).definitions, ...COMMON_SCHEMAS], { sortComponents: 'alphabetically' }).generateDocument({
    openapi: '3.1.0',
    ...c,
    info: { ...c.info, license: { name: LICENSE, identifier: 'LicenseRef-Proprietary' } },
  });
  return withAbsoluteServers(withoutUnusedResponses(doc), base);
}

/**
 * The same document in OpenAPI 3.0 (served at /v1/openapi-3.0.json), for tools that cannot read 3.1
 * (Go's kin-openapi under oapi-codegen, older generators): generated from the same zod schemas by
 * zod-to-openapi's 3.0 generator, so `nullable: true` stands for a `null` type, `example` for
 * `examples`, an enum of one value for `const`.
 */
export function buildOpenApiDocument30(opts: DocumentOptions = {}, modules: readonly RegisterOpenApi[] = MODULES): OpenApiDocument30 {
  const base = opts.publicBaseUrl ?? SANDBOX_BASE_URL;
  const c = config(base);
  const doc = new OpenApiGeneratorV3([...registryOf(modules).definitions, ...COMMON_SCHEMAS], { sortComponents: 'alphabetically' }).generateDocument({
    openapi: '3.0.3',
    ...c,
    // 3.0's license has no SPDX identifier.
    info: { ...c.info, license: { name: LICENSE } },
  });
  return withAbsoluteServers(withoutUnusedResponses(withoutTypelessNullable(doc)), base);
}

/**
 * zod's `unknown` (any JSON value) comes out of the 3.0 generator as `{nullable: true}` with no type,
 * which 3.0 gives no meaning (`nullable` qualifies a `type`): any value is `{}` there.
 */
function withoutTypelessNullable<D>(doc: D): D {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    if (o.nullable === true && !('type' in o) && !('$ref' in o) && !('allOf' in o) && !('oneOf' in o) && !('anyOf' in o)) delete o.nullable;
    for (const v of Object.values(o)) visit(v);
  };
  visit(doc);
  return doc;
}

const LICENSE = 'Proprietary: for organisations under contract with the operator';

/**
 * An operation's own relative server (`/` for the probes outside the versioned base) made absolute too.
 * New objects: the generator hands out the registered ones (common.ts's `unversioned`), shared by every build.
 */
function withAbsoluteServers<D extends { paths?: unknown }>(doc: D, base: string): D {
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, { servers?: { url: string }[] }>>)) {
    for (const op of Object.values(item)) {
      if (!op?.servers) continue;
      op.servers = op.servers.map((server) => (server.url.startsWith('/') ? { ...server, url: `${base}${server.url.replace(/\/$/, '')}` } : server));
    }
  }
  return doc;
}

/**
 * The shared error responses are all registered (common.ts) but only some are referenced by the
 * paths of the day: an unreferenced one would be dead weight in the document (and a lint warning).
 */
function withoutUnusedResponses<D extends { paths?: unknown; components?: { responses?: Record<string, unknown> } }>(doc: D): D {
  const responses = doc.components?.responses;
  if (!responses) return doc;
  const text = JSON.stringify(doc.paths);
  for (const name of Object.keys(responses)) if (!text.includes(`"#/components/responses/${name}"`)) delete responses[name];
  return doc;
}
