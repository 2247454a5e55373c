import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString());

export const apiClientRow = z.object({
  id: z.coerce.number(),
  client_id: z.string(),
  org_id: z.coerce.number(),
  name: z.string(),
  role: z.enum(['org_admin', 'member']),
  created_at: time,
  last_used_at: time.nullable(),
});
export type ApiClientRow = z.infer<typeof apiClientRow>;

const columns = sql.fragment`id, client_id, org_id, name, role, created_at, last_used_at`;

export async function insertApiClient(
  db: CommonQueryMethods,
  c: { clientId: string; orgId: number; name: string; role: 'org_admin' | 'member'; secretHash: Buffer; createdBy: number | null },
) {
  return db.one(sql.type(apiClientRow)`
    INSERT INTO api_clients (client_id, org_id, name, role, secret_hash, created_by)
    VALUES (${c.clientId}, ${c.orgId}, ${c.name}, ${c.role}, ${sql.binary(c.secretHash)}, ${c.createdBy})
    RETURNING ${columns}`);
}

export async function listApiClients(db: CommonQueryMethods, orgId: number) {
  return db.any(sql.type(apiClientRow)`
    SELECT ${columns} FROM api_clients WHERE org_id = ${orgId} AND deleted_at IS NULL ORDER BY id`);
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
});

export async function findApiClientForLogin(db: CommonQueryMethods, clientId: string) {
  return db.maybeOne(sql.type(loginRow)`
    SELECT c.id, c.client_id, c.org_id, c.name, c.role, c.created_at, c.last_used_at, c.secret_hash,
           (c.deleted_at IS NULL AND o.deleted_at IS NULL) AS active
    FROM api_clients c JOIN organisations o ON o.id = c.org_id
    WHERE c.client_id = ${clientId}`);
}

/** last_used_at is the time of the last token issued: a write per token, not per request. */
export async function touchApiClient(db: CommonQueryMethods, id: number): Promise<void> {
  await db.query(sql.unsafe`UPDATE api_clients SET last_used_at = now() WHERE id = ${id}`);
}

const clientPrincipalRow = z.object({
  id: z.coerce.number(),
  client_id: z.string(),
  org_id: z.coerce.number(),
  name: z.string(),
  role: z.enum(['org_admin', 'member']),
  active: z.boolean(),
  subscription_active: z.boolean(),
  max_in_flight: z.coerce.number().nullable(),
});

/** Read on every request made with a client's token, so a retired client stops at once. */
export async function findClientPrincipal(db: CommonQueryMethods, clientId: string) {
  return db.maybeOne(sql.type(clientPrincipalRow)`
    SELECT c.id, c.client_id, c.org_id, c.name, c.role,
           (c.deleted_at IS NULL AND o.deleted_at IS NULL) AS active,
           o.subscription_active, o.max_in_flight
    FROM api_clients c JOIN organisations o ON o.id = c.org_id
    WHERE c.client_id = ${clientId}`);
}
