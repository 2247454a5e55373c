import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { orgRoleSchema, roles, type OrgRole } from '../../lib/roles.ts';

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString());

export const apiClientRow = z.object({
  id: z.coerce.number(),
  client_id: z.string(),
  org_id: z.coerce.number(),
  name: z.string(),
  role: orgRoleSchema,
  created_at: time,
  last_used_at: time.nullable(),
  scopes: z.array(z.string()).nullable(),
  allowed_ips: z.array(z.string()).nullable(),
  expires_at: time.nullable(),
});
export type ApiClientRow = z.infer<typeof apiClientRow>;

const columns = sql.fragment`id, client_id, org_id, name, role, created_at, last_used_at, scopes, allowed_ips, expires_at`;

/**
 * A client acts only while its creator could still create it: an enabled organisation
 * administrator of the client's organisation. `c` is the client, `cr` its creator (LEFT JOINed on
 * created_by), so the check costs a primary-key join inside the read that loads the client anyway.
 */
const SUSPENDED = sql.fragment`(cr.id IS NULL OR cr.disabled OR NOT (cr.role = ANY(${sql.array(roles.rolesWith('administer_organisation'), 'text')})) OR cr.org_id IS DISTINCT FROM c.org_id)`;
const CREATOR = sql.fragment`LEFT JOIN users cr ON cr.id = c.created_by`;

export async function insertApiClient(
  db: CommonQueryMethods,
  c: {
    clientId: string;
    orgId: number;
    name: string;
    role: OrgRole;
    secretHash: Buffer;
    createdBy: number | null;
    scopes: readonly string[];
    allowedIps: readonly string[];
    expiresAt: Date | null;
  },
) {
  return db.one(sql.type(apiClientRow)`
    INSERT INTO api_clients (client_id, org_id, name, role, secret_hash, created_by, scopes, allowed_ips, expires_at)
    VALUES (${c.clientId}, ${c.orgId}, ${c.name}, ${c.role}, ${sql.binary(c.secretHash)}, ${c.createdBy},
            ${sql.array([...c.scopes], 'text')}, ${sql.array([...c.allowedIps], 'text')}, ${c.expiresAt ? sql.timestamp(c.expiresAt) : null})
    RETURNING ${columns}`);
}

export const listedApiClientRow = apiClientRow.extend({
  creator_id: z.coerce.number().nullable(),
  creator_username: z.string().nullable(),
  suspended: z.boolean(),
});
export type ListedApiClient = z.infer<typeof listedApiClientRow>;

const listed = sql.fragment`
  c.id, c.client_id, c.org_id, c.name, c.role, c.created_at, c.last_used_at, c.scopes, c.allowed_ips, c.expires_at,
  cr.id AS creator_id, cr.username AS creator_username, ${SUSPENDED} AS suspended`;

export async function listApiClients(db: CommonQueryMethods, orgId: number) {
  return db.any(sql.type(listedApiClientRow)`
    SELECT ${listed} FROM api_clients c ${CREATOR} WHERE c.org_id = ${orgId} AND c.deleted_at IS NULL ORDER BY c.id`);
}

/**
 * The caller becomes the client's creator; tokens issued before (token_version) stay dead, so the
 * client signs in again with its secret. null: no such live client in the organisation.
 */
export async function adoptApiClient(db: CommonQueryMethods, orgId: number, clientId: string, userId: number) {
  const updated = await db.maybeOne(sql.type(z.object({ id: z.coerce.number() }))`
    UPDATE api_clients SET created_by = ${userId}, token_version = token_version + 1
    WHERE client_id = ${clientId} AND org_id = ${orgId} AND deleted_at IS NULL RETURNING id`);
  if (!updated) return null;
  return db.one(sql.type(listedApiClientRow)`SELECT ${listed} FROM api_clients c ${CREATOR} WHERE c.id = ${updated.id}`);
}

/**
 * A new secret in place of the old one; the old secret stops at once and, with token_version, every
 * token issued under it. null: no such live client in the organisation.
 */
export async function rotateApiClientSecret(db: CommonQueryMethods, orgId: number, clientId: string, secretHash: Buffer) {
  const updated = await db.maybeOne(sql.type(z.object({ id: z.coerce.number() }))`
    UPDATE api_clients SET secret_hash = ${sql.binary(secretHash)}, token_version = token_version + 1
    WHERE client_id = ${clientId} AND org_id = ${orgId} AND deleted_at IS NULL RETURNING id`);
  if (!updated) return null;
  return db.one(sql.type(listedApiClientRow)`SELECT ${listed} FROM api_clients c ${CREATOR} WHERE c.id = ${updated.id}`);
}

/** Retires the client: the principal lookup refuses its tokens from the next request on. */
export async function retireApiClient(db: CommonQueryMethods, orgId: number, clientId: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE api_clients SET deleted_at = now() WHERE client_id = ${clientId} AND org_id = ${orgId} AND deleted_at IS NULL`);
  return r.rowCount === 1;
}

const loginRow = apiClientRow.extend({
  secret_hash: z.instanceof(Buffer),
  active: z.boolean(),
  suspended: z.boolean(),
  token_version: z.coerce.number(),
});

export async function findApiClientForLogin(db: CommonQueryMethods, clientId: string) {
  return db.maybeOne(sql.type(loginRow)`
    SELECT c.id, c.client_id, c.org_id, c.name, c.role, c.created_at, c.last_used_at, c.scopes, c.allowed_ips, c.expires_at, c.secret_hash,
           (c.deleted_at IS NULL AND o.deleted_at IS NULL) AS active, ${SUSPENDED} AS suspended, c.token_version
    FROM api_clients c JOIN organisations o ON o.id = c.org_id ${CREATOR}
    WHERE c.client_id = ${clientId}`);
}

/** last_used_at is the time of the last token issued: a write per token, not per request. */
export async function touchApiClient(db: CommonQueryMethods, id: number): Promise<void> {
  await db.query(sql.unsafe`UPDATE api_clients SET last_used_at = now() WHERE id = ${id}`);
}

export const clientPrincipalRow = z.object({
  id: z.coerce.number(),
  client_id: z.string(),
  org_id: z.coerce.number(),
  name: z.string(),
  role: orgRoleSchema,
  active: z.boolean(),
  suspended: z.boolean(),
  token_version: z.coerce.number(),
  subscription_active: z.boolean(),
  max_in_flight: z.coerce.number().nullable(),
  allowed_ips: z.array(z.string()).nullable(),
  expires_at: time.nullable(),
});

/**
 * Read on every request made with a client's token, so a retired client, or one whose creator was
 * disabled or demoted, stops at once: one query, the creator joined by primary key. A fragment so a
 * hot route can read it in its own statement.
 */
/** `clientId`: a value, or a column of the caller's statement (a batched read's `i.client_id`). */
export function clientPrincipalQuery(clientId: string | FragmentSqlToken) {
  return sql.fragment`
    SELECT c.id, c.client_id, c.org_id, c.name, c.role,
           (c.deleted_at IS NULL AND o.deleted_at IS NULL) AS active, ${SUSPENDED} AS suspended, c.token_version,
           o.subscription_active, o.max_in_flight, c.allowed_ips, c.expires_at
    FROM api_clients c JOIN organisations o ON o.id = c.org_id ${CREATOR}
    WHERE c.client_id = ${clientId}`;
}

export async function findClientPrincipal(db: CommonQueryMethods, clientId: string) {
  return db.maybeOne(sql.prepared('client_principal', clientPrincipalRow)`${clientPrincipalQuery(clientId)}`);
}
