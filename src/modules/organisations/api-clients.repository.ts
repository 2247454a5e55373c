import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { orgRoleSchema, type OrgRole } from '../../lib/roles.ts';
import { CREATOR, SUSPENDED } from './principals.ts';

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

/** last_used_at is the time of the last token issued: a write per token, not per request. */
export async function touchApiClient(db: CommonQueryMethods, id: number): Promise<void> {
  await db.query(sql.unsafe`UPDATE api_clients SET last_used_at = now() WHERE id = ${id}`);
}
