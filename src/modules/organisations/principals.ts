import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { orgRoleSchema, roles, roleSchema } from '../../lib/roles.ts';

/**
 * Principals: a user or an API client as a token's subject, or as the owner of the credentials a
 * sign-in presents. Every path that turns a token, a session (the portal's cookie carries a token) or a
 * credential into a principal reads it here, and only here (test/architecture/principal-reads.test.ts): the
 * rows' schemas and the one query per kind. What the rows mean (still the token's principal? admitted on
 * this route?) is the auth module's to decide (auth/admission.ts); this file only reads.
 */

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString());

/**
 * A client acts only while its creator could still create it: an enabled organisation
 * administrator of the client's organisation. `c` is the client, `cr` its creator (LEFT JOINed on
 * created_by), so the check costs a primary-key join inside the read that loads the client anyway.
 * The listing of API clients (api-clients.repository.ts) shows the same verdict.
 */
export const SUSPENDED = sql.fragment`(cr.id IS NULL OR cr.disabled OR NOT (cr.role = ANY(${sql.array(roles.rolesWith('administer_organisation'), 'text')})) OR cr.org_id IS DISTINCT FROM c.org_id)`;
export const CREATOR = sql.fragment`LEFT JOIN users cr ON cr.id = c.created_by`;

/**
 * Whether the maker of something an organisation keeps acting for it (a verification link: a user or
 * an API client, the other null) may still make it: an enabled administrator of that organisation, or
 * a live API client of an administrator role that is neither suspended (SUSPENDED) nor past its
 * `expires_at` at `at` (the instant judged: a client that may no longer sign in may not spend through
 * its links either). Read live, as an API client's suspension is: a maker enabled or promoted again
 * (a client adopted) makes it act again.
 */
export function makerMayStillAct(userId: FragmentSqlToken, clientId: FragmentSqlToken, orgId: FragmentSqlToken, at: Date) {
  const admins = sql.array(roles.rolesWith('administer_organisation'), 'text');
  return sql.fragment`(CASE WHEN ${userId} IS NOT NULL
      THEN EXISTS (SELECT 1 FROM users mu WHERE mu.id = ${userId} AND mu.org_id = ${orgId} AND NOT mu.disabled AND mu.role = ANY(${admins}))
      ELSE EXISTS (SELECT 1 FROM api_clients c ${CREATOR}
                   WHERE c.id = ${clientId} AND c.org_id = ${orgId} AND c.deleted_at IS NULL AND c.role = ANY(${admins}) AND NOT ${SUSPENDED}
                     AND (c.expires_at IS NULL OR c.expires_at > ${sql.timestamp(at)}))
    END)`;
}

// ---- A token's principal: read on every authenticated request ----

export const userPrincipalRow = z.object({
  id: z.coerce.number(),
  org_id: z.coerce.number().nullable(),
  username: z.string(),
  role: roleSchema,
  active: z.boolean(),
  subscription_active: z.boolean().nullable(),
  max_in_flight: z.coerce.number().nullable(),
  token_version: z.coerce.number(),
  must_change_password: z.boolean(),
  mfa_enrolment_required: z.boolean(),
});
export type UserPrincipalRow = z.infer<typeof userPrincipalRow>;

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
export type ClientPrincipalRow = z.infer<typeof clientPrincipalRow>;

export type PrincipalRow = UserPrincipalRow | ClientPrincipalRow;

/**
 * The user as every authenticated request sees it: read on every request, so a disabled user's
 * tokens stop working at once. A fragment so a hot route can read it in its own statement.
 * `userId`: a value, or a column of the caller's statement (a batched read's `i.user_id`).
 */
function userPrincipalQuery(userId: number | FragmentSqlToken) {
  return sql.fragment`
    SELECT u.id, u.org_id, u.username, u.role,
           (NOT u.disabled AND (u.org_id IS NULL OR o.deleted_at IS NULL)) AS active,
           o.subscription_active, o.max_in_flight, u.token_version, u.must_change_password,
           -- Read here, in the one query of every request, rather than by a second round trip: the
           -- enrolment itself is the mfa module's table, this only asks whether it exists.
           (u.role = ANY(${sql.array(roles.rolesWith('administer_organisation'), 'text')}) AND coalesce(o.require_mfa, false)
             AND NOT EXISTS (SELECT 1 FROM user_mfa m WHERE m.user_id = u.id AND m.enabled_at IS NOT NULL)) AS mfa_enrolment_required
    FROM users u LEFT JOIN organisations o ON o.id = u.org_id
    WHERE u.id = ${userId}`;
}

/**
 * Read on every request made with a client's token, so a retired client, or one whose creator was
 * disabled or demoted, stops at once: one query, the creator joined by primary key. A fragment so a
 * hot route can read it in its own statement.
 * `clientId`: a value, or a column of the caller's statement (a batched read's `i.client_id`).
 */
function clientPrincipalQuery(clientId: string | FragmentSqlToken) {
  return sql.fragment`
    SELECT c.id, c.client_id, c.org_id, c.name, c.role,
           (c.deleted_at IS NULL AND o.deleted_at IS NULL) AS active, ${SUSPENDED} AS suspended, c.token_version,
           o.subscription_active, o.max_in_flight, c.allowed_ips, c.expires_at
    FROM api_clients c JOIN organisations o ON o.id = c.org_id ${CREATOR}
    WHERE c.client_id = ${clientId}`;
}

/**
 * The principal of a token's subject as one JSON value (null when there is no such row), for a
 * statement that reads it beside its own rows (auth/along.ts): `userId` and `clientId` are columns
 * of that statement, one of them null. parsePrincipalRow reads the value back.
 */
export function principalJson(userId: FragmentSqlToken, clientId: FragmentSqlToken) {
  return sql.fragment`CASE WHEN ${userId} IS NOT NULL
             THEN (SELECT row_to_json(p) FROM (${userPrincipalQuery(userId)}) p)
             ELSE (SELECT row_to_json(p) FROM (${clientPrincipalQuery(clientId)}) p)
           END`;
}

/**
 * principalJson's value for a subject of this kind. A row the schema does not know is our fault (a
 * 500), never the caller's: the error is not a ZodError (which the error middleware answers with a 4xx).
 */
export function parsePrincipalRow(kind: 'user' | 'client', json: unknown): PrincipalRow {
  const parsed = kind === 'client' ? clientPrincipalRow.safeParse(json) : userPrincipalRow.safeParse(json);
  if (!parsed.success) throw new Error('principals: the principal row does not match its schema');
  return parsed.data;
}

/** An API client's principal alone (the failed sign-in's audit event names its organisation). */
export async function findClientPrincipal(db: CommonQueryMethods, clientId: string) {
  return db.maybeOne(sql.prepared('client_principal', clientPrincipalRow)`${clientPrincipalQuery(clientId)}`);
}

// ---- The owner of a credential: read where a sign-in or a password change checks it ----

export const authUserRow = z.object({
  id: z.coerce.number(),
  org_id: z.coerce.number().nullable(),
  username: z.string(),
  role: roleSchema,
  disabled: z.boolean(),
  email: z.string().nullable(),
  password_hash: z.string(),
  org_deleted: z.boolean(),
  token_version: z.coerce.number(),
  must_change_password: z.boolean(),
});

const authUserFrom = sql.fragment`
    SELECT u.id, u.org_id, u.username, u.role, u.disabled, u.email, u.password_hash, (o.deleted_at IS NOT NULL) AS org_deleted,
           u.token_version, u.must_change_password
    FROM users u LEFT JOIN organisations o ON o.id = u.org_id`;

/**
 * New usernames are stored NFKC-normalised, so the name as typed is normalised the same way (a
 * full-width `ａｄｍｉｎ` finds `admin`); the lower-cased name as typed still finds a row stored before
 * normalisation, and wins when both exist.
 */
export async function findUserForLogin(db: CommonQueryMethods, username: string) {
  const typed = username.toLowerCase();
  const normalised = username.normalize('NFKC').toLowerCase().normalize('NFKC');
  return db.maybeOne(sql.type(authUserRow)`
    ${authUserFrom}
    WHERE u.username IN (${typed}, ${normalised})
    ORDER BY u.username = ${typed} DESC LIMIT 1`);
}

export async function findUserById(db: CommonQueryMethods, id: number) {
  return db.maybeOne(sql.type(authUserRow)`
    ${authUserFrom}
    WHERE u.id = ${id}`);
}

const apiClientLoginRow = z.object({
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
  secret_hash: z.instanceof(Buffer),
  active: z.boolean(),
  suspended: z.boolean(),
  token_version: z.coerce.number(),
});

/** The client a client-credentials grant names, with its secret's digest (api-clients.ts checks it). */
export async function findApiClientForLogin(db: CommonQueryMethods, clientId: string) {
  return db.maybeOne(sql.type(apiClientLoginRow)`
    SELECT c.id, c.client_id, c.org_id, c.name, c.role, c.created_at, c.last_used_at, c.scopes, c.allowed_ips, c.expires_at, c.secret_hash,
           (c.deleted_at IS NULL AND o.deleted_at IS NULL) AS active, ${SUSPENDED} AS suspended, c.token_version
    FROM api_clients c JOIN organisations o ON o.id = c.org_id ${CREATOR}
    WHERE c.client_id = ${clientId}`);
}
