import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

// The webhooks module's tables: endpoints, events (the outbox) and deliveries. Only this module writes them.

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString());
const maybeTime = time.nullable();

export const endpointRow = z.object({
  id: z.string(),
  org_id: z.coerce.number(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  enabled: z.boolean(),
  disabled_reason: z.enum(['gone', 'failing']).nullable(),
  created_at: time,
});
export type EndpointRow = z.infer<typeof endpointRow>;

const columns = sql.fragment`id, org_id, url, events, description, enabled, disabled_reason, created_at`;

export async function insertEndpoint(
  db: CommonQueryMethods,
  e: { id: string; orgId: number; url: string; events: string[]; description: string | null; secretEnc: Buffer; keyId: string },
): Promise<EndpointRow> {
  return db.one(sql.type(endpointRow)`
    INSERT INTO webhook_endpoints (id, org_id, url, events, description, secret_enc, key_id)
    VALUES (${e.id}, ${e.orgId}, ${e.url}, ${sql.array(e.events, 'text')}, ${e.description}, ${sql.binary(e.secretEnc)}, ${e.keyId})
    RETURNING ${columns}`);
}

// First key of pg_advisory_xact_lock(int, int) for an organisation's endpoint count; the second is the organisation.
const ENDPOINTS_LOCK = 0x77686570;

/**
 * The organisation's endpoints (switched off ones too, not deleted ones), counted under a lock held
 * until the transaction ends, so two registrations at once never both see room for the last one.
 */
export async function lockEndpointCount(db: CommonQueryMethods, orgId: number): Promise<number> {
  await db.query(sql.unsafe`SELECT pg_advisory_xact_lock(${ENDPOINTS_LOCK}, (${orgId}::bigint % 2147483647)::int)`);
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = ${orgId} AND deleted_at IS NULL`);
}

export async function listEndpoints(db: CommonQueryMethods, orgId: number): Promise<readonly EndpointRow[]> {
  return db.any(sql.type(endpointRow)`
    SELECT ${columns} FROM webhook_endpoints WHERE org_id = ${orgId} AND deleted_at IS NULL ORDER BY created_at, id`);
}

export async function findEndpoint(db: CommonQueryMethods, orgId: number, id: string): Promise<EndpointRow | null> {
  return db.maybeOne(sql.type(endpointRow)`
    SELECT ${columns} FROM webhook_endpoints WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL`);
}

export async function updateEndpoint(
  db: CommonQueryMethods,
  orgId: number,
  id: string,
  p: { url?: string | undefined; events?: string[] | undefined; enabled?: boolean | undefined; description?: string | null | undefined },
): Promise<EndpointRow | null> {
  const sets = [
    p.url === undefined ? null : sql.fragment`url = ${p.url}`,
    p.events === undefined ? null : sql.fragment`events = ${sql.array(p.events, 'text')}`,
    p.description === undefined ? null : sql.fragment`description = ${p.description}`,
    // Switching on again clears the service's reason for switching off.
    p.enabled === undefined ? null : sql.fragment`enabled = ${p.enabled}, disabled_reason = NULL`,
  ].filter((f) => f !== null);
  return db.maybeOne(sql.type(endpointRow)`
    UPDATE webhook_endpoints SET ${sql.join(sets, sql.fragment`, `)}
    WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL
    RETURNING ${columns}`);
}

export async function deleteEndpoint(db: CommonQueryMethods, orgId: number, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE webhook_endpoints SET deleted_at = now(), enabled = false, secret_enc = '\\x'::bytea, previous_secret_enc = NULL, previous_until = NULL
    WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL`);
  return r.rowCount === 1;
}

const secretsRow = z.object({
  id: z.string(),
  secret_enc: z.instanceof(Buffer),
  previous_secret_enc: z.instanceof(Buffer).nullable(),
  previous_until: maybeTime,
  key_id: z.string(),
});
export type SecretsRow = z.infer<typeof secretsRow>;

/** The row's secrets, locked for a rotation. */
export async function lockSecrets(db: CommonQueryMethods, orgId: number, id: string): Promise<SecretsRow | null> {
  return db.maybeOne(sql.type(secretsRow)`
    SELECT id, secret_enc, previous_secret_enc, previous_until, key_id FROM webhook_endpoints
    WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL FOR UPDATE`);
}

export async function storeSecrets(db: CommonQueryMethods, id: string, s: { secretEnc: Buffer; previousEnc: Buffer; previousUntil: Date; keyId: string }): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE webhook_endpoints SET secret_enc = ${sql.binary(s.secretEnc)}, previous_secret_enc = ${sql.binary(s.previousEnc)},
      previous_until = ${sql.timestamp(s.previousUntil)}, key_id = ${s.keyId}
    WHERE id = ${id}`);
}

/** Pending deliveries of an endpoint that stopped (switched off, deleted, gone) end as failed. */
export async function failPending(db: CommonQueryMethods, endpointId: string, reason: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE webhook_deliveries SET status = 'failed', last_error = ${reason}, lease_until = NULL
    WHERE endpoint_id = ${endpointId} AND status = 'pending'`);
}

/**
 * The event and one delivery per enabled endpoint of the organisation subscribed to its type, in one
 * statement, and a notification the workers' dispatcher hears at COMMIT. Nothing is written when no
 * endpoint listens (the usual case costs one indexed read). Returns the event id, or null.
 */
export async function insertEvent(
  db: CommonQueryMethods,
  e: { id: string; orgId: number; type: string; body: string; endpointId?: string | undefined },
): Promise<string | null> {
  const only = e.endpointId ? sql.fragment`AND id = ${e.endpointId}` : sql.fragment`AND (${e.type} = ANY (events) OR '*' = ANY (events))`;
  return db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    WITH targets AS (
      SELECT id FROM webhook_endpoints WHERE org_id = ${e.orgId} AND enabled AND deleted_at IS NULL ${only}
    ), ev AS (
      INSERT INTO webhook_events (id, org_id, type, body)
      SELECT ${e.id}, ${e.orgId}, ${e.type}, ${e.body} WHERE EXISTS (SELECT 1 FROM targets)
      RETURNING id
    ), d AS (
      INSERT INTO webhook_deliveries (endpoint_id, event_id) SELECT t.id, ev.id FROM targets t CROSS JOIN ev
      RETURNING 1
    )
    SELECT ev.id FROM ev WHERE pg_notify('idverify_webhooks', '') IS NOT NULL`);
}

export const deliveryRow = z.object({
  id: z.coerce.string(),
  event_id: z.string(),
  type: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number(),
  last_status_code: z.number().nullable(),
  last_error: z.string().nullable(),
  next_attempt_at: maybeTime,
  delivered_at: maybeTime,
  created_at: time,
});

/** Newest first, after the keyset position `before` (a delivery id). */
export async function listDeliveries(db: CommonQueryMethods, endpointId: string, o: { before: number | null; limit: number }) {
  const after = o.before === null ? sql.fragment`` : sql.fragment`AND d.id < ${o.before}`;
  return db.any(sql.type(deliveryRow)`
    SELECT d.id, d.event_id, e.type, d.status, d.attempts, d.last_status_code, d.last_error,
           CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at, d.delivered_at, d.created_at
    FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
    WHERE d.endpoint_id = ${endpointId} ${after}
    ORDER BY d.id DESC LIMIT ${o.limit + 1}`);
}

/** A new delivery of a past delivery's event to its endpoint (enabled, of the organisation). */
export async function insertRedelivery(db: CommonQueryMethods, orgId: number, deliveryId: number) {
  return db.maybeOne(sql.type(deliveryRow)`
    WITH src AS (
      SELECT d.id, d.endpoint_id, d.event_id FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.id = ${deliveryId} AND w.org_id = ${orgId} AND w.deleted_at IS NULL
    ), ins AS (
      INSERT INTO webhook_deliveries (endpoint_id, event_id, redelivery_of) SELECT endpoint_id, event_id, id FROM src
      RETURNING id, event_id, status, attempts, last_status_code, last_error, next_attempt_at, delivered_at, created_at
    )
    SELECT ins.id, ins.event_id, e.type, ins.status, ins.attempts, ins.last_status_code, ins.last_error, ins.next_attempt_at, ins.delivered_at, ins.created_at
    FROM ins JOIN webhook_events e ON e.id = ins.event_id WHERE pg_notify('idverify_webhooks', '') IS NOT NULL`);
}

/** Whether the delivery belongs to an endpoint of the organisation, deleted or not (404 otherwise), and its event. */
export async function deliveryEndpoint(db: CommonQueryMethods, orgId: number, deliveryId: number) {
  return db.maybeOne(sql.type(z.object({ endpoint_id: z.string(), event_id: z.string(), enabled: z.boolean(), deleted: z.boolean() }))`
    SELECT w.id AS endpoint_id, d.event_id, w.enabled, w.deleted_at IS NOT NULL AS deleted FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
    WHERE d.id = ${deliveryId} AND w.org_id = ${orgId}`);
}

// The namespace of the (endpoint, event) redelivery locks (pg_advisory_xact_lock's two-key form).
const REDELIVERY_LOCK = 3_202_033;

/**
 * The manual redeliveries of one event to one endpoint, read under a transaction-scoped lock on the
 * pair, so that two requests at once cannot both pass the cap: how many are pending and when the first
 * of them is due; how many were asked for within the last hour and in how many seconds the oldest of
 * those leaves it.
 */
export async function lockRedeliveries(tx: CommonQueryMethods, endpointId: string, eventId: string) {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${REDELIVERY_LOCK}, hashtext(${endpointId} || ' ' || ${eventId}))`);
  return tx.one(sql.type(z.object({ pending: z.number(), pending_due_s: z.number(), recent: z.number(), window_left_s: z.number() }))`
    SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
           coalesce(ceil(extract(epoch FROM min(next_attempt_at) FILTER (WHERE status = 'pending') - now())), 0)::int AS pending_due_s,
           count(*) FILTER (WHERE created_at > now() - interval '1 hour')::int AS recent,
           coalesce(ceil(extract(epoch FROM min(created_at) FILTER (WHERE created_at > now() - interval '1 hour') + interval '1 hour' - now())), 0)::int AS window_left_s
    FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND event_id = ${eventId} AND redelivery_of IS NOT NULL`);
}

// The namespace of the per-endpoint ping locks (pg_advisory_xact_lock's two-key form).
const PING_LOCK = 3_202_034;

/**
 * The endpoint's test pings of the last hour, read under a transaction-scoped lock on the endpoint so
 * that two requests at once cannot both pass the cap: how many, and in how many seconds the oldest
 * of them leaves the hour.
 */
export async function lockPings(tx: CommonQueryMethods, orgId: number, endpointId: string) {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${PING_LOCK}, hashtext(${endpointId}))`);
  return tx.one(sql.type(z.object({ recent: z.number(), window_left_s: z.number() }))`
    SELECT count(*)::int AS recent,
           coalesce(ceil(extract(epoch FROM min(e.created_at) + interval '1 hour' - now())), 0)::int AS window_left_s
    FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id AND d.endpoint_id = ${endpointId} AND d.redelivery_of IS NULL
    WHERE e.org_id = ${orgId} AND e.type = 'ping' AND e.created_at > now() - interval '1 hour'`);
}
