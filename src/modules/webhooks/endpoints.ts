import { randomBytes } from 'node:crypto';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import type { DatabasePool } from 'slonik';
import { realStackReason, type Config } from '../../config.ts';
import { open, seal, type KeyRing } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { decodeCursor, encodeCursor, pageOf } from '../../lib/pagination.ts';
import { z } from 'zod';
import { auditContext, recordAudit } from '../audit/index.ts';
import { checkTarget, TargetRefused, type OwnPorts, type TargetMode } from './address-guard.ts';
import { recordWebhookEvent } from './record.ts';
import { newSecret } from './signing.ts';
import * as repo from './webhooks.repository.ts';

export type EndpointDeps = { db: DatabasePool; config: Config };

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** http and loopback receivers only on a stack that talks to no real upstream, unless WEBHOOK_PUBLIC_ONLY. */
export function targetMode(config: Config): TargetMode {
  return { sandbox: !config.WEBHOOK_PUBLIC_ONLY && realStackReason(config) === null };
}

/** A URL's port, its scheme's default when none is written; null when it is not a URL with a host. */
function portOf(text: string): number | null {
  try {
    const u = new URL(text);
    if (!u.hostname) return null;
    return Number(u.port || ({ 'https:': 443, 'http:': 80, 'smtp:': 25, 'smtps:': 465, 'redis:': 6379, 'rediss:': 6379, 'postgres:': 5432, 'postgresql:': 5432 } as Record<string, number>)[u.protocol] || 0) || null;
  } catch {
    return null;
  }
}

/**
 * The ports this stack listens on, which a loopback receiver may not name in the sandbox: the API
 * (PORT, and `apiPort`, the port a request actually came in on), the payment simulator, the mail sink,
 * the workers' metrics, and PostgreSQL and Redis as configured; the identity simulator's port is
 * allowed for its /sandbox/hooks/{name} receiver only; `interfaces` (this host's, by default) give the
 * addresses judged as loopback (address-guard.ts OwnPorts). The API checks at registration and PATCH, the
 * workers again at every delivery, each from its own configuration.
 */
export function ownPorts(config: Config, apiPort?: number, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): OwnPorts {
  const workerMetrics = [
    ...Array.from({ length: config.WORKER_PROCESSES }, (_, i) => config.WORKER_METRICS_PORT + i),
    ...Array.from({ length: config.FACE_PROCESSES }, (_, i) => config.FACE_METRICS_PORT + i),
  ];
  const refused = [config.PORT, apiPort, portOf(config.paystackBaseUrl), config.sandboxSwitches?.SANDBOX_SMTP_PORT, portOf(config.SMTP_URL), ...workerMetrics, portOf(config.DATABASE_URL), portOf(config.REDIS_URL)];
  const hooks = portOf(config.identityBaseUrl);
  return {
    refused: [...new Set(refused.filter((p): p is number => typeof p === 'number' && p > 0 && p !== hooks))],
    hooksOnly: hooks ? [hooks] : [],
    // Read when asked (each registration, each delivery), so an interface that came up since counts.
    hostAddresses: Object.values(interfaces).flatMap((list) => (list ?? []).map((i) => i.address)),
  };
}

// The associated data binds a sealed secret to its endpoint: copied onto another row, it does not open.
export const secretAad = (endpointId: string) => `webhook-endpoint:${endpointId}`;

export function openSecret(ring: KeyRing, endpointId: string, keyId: string, data: Buffer): string {
  return open(ring, { keyId, data }, secretAad(endpointId)).toString('utf8');
}

export function present(e: repo.EndpointRow) {
  return { id: e.id, url: e.url, events: e.events, description: e.description, enabled: e.enabled, disabled_reason: e.disabled_reason, created_at: e.created_at };
}

async function checkedUrl(config: Config, url: string, apiPort: number | undefined): Promise<string> {
  try {
    return (await checkTarget(url, targetMode(config), undefined, ownPorts(config, apiPort))).toString();
  } catch (err) {
    if (err instanceof TargetRefused) throw new AppError('bad_request', err.message);
    throw err;
  }
}

const NOT_FOUND = 'webhook endpoint not found';

/** `apiPort`: the port the request came in on, refused as a receiver's (the API itself). */
export async function createEndpoint(deps: EndpointDeps, orgId: number, b: { url: string; events: string[]; description?: string | undefined }, apiPort?: number) {
  const url = await checkedUrl(deps.config, b.url, apiPort);
  const id = `we_${randomBytes(12).toString('hex')}`;
  const secret = newSecret();
  const sealed = seal(deps.config.encryptionKeys, secret, secretAad(id));
  const max = deps.config.WEBHOOK_MAX_ENDPOINTS;
  const row = await deps.db.transaction(async (tx) => {
    if ((await repo.lockEndpointCount(tx, orgId)) >= max) {
      throw new AppError('conflict', `This organisation has ${max} webhook endpoints, the most allowed; delete one it no longer uses (DELETE /v1/webhook-endpoints/{id}) before adding another`);
    }
    return repo.insertEndpoint(tx, { id, orgId, url, events: [...new Set(b.events)], description: b.description ?? null, secretEnc: sealed.data, keyId: sealed.keyId });
  });
  return { ...present(row), secret };
}

export async function getEndpoint(deps: EndpointDeps, orgId: number, id: string) {
  const row = await repo.findEndpoint(deps.db, orgId, id);
  if (!row) throw new AppError('not_found', NOT_FOUND);
  return present(row);
}

export async function listEndpoints(deps: EndpointDeps, orgId: number) {
  return { data: (await repo.listEndpoints(deps.db, orgId)).map(present) };
}

export async function updateEndpoint(
  deps: EndpointDeps,
  orgId: number,
  id: string,
  p: { url?: string | undefined; events?: string[] | undefined; enabled?: boolean | undefined; description?: string | null | undefined },
  apiPort?: number,
) {
  const url = p.url === undefined ? undefined : await checkedUrl(deps.config, p.url, apiPort);
  const row = await deps.db.transaction(async (tx) => {
    const updated = await repo.updateEndpoint(tx, orgId, id, { ...p, url, events: p.events && [...new Set(p.events)] });
    if (updated && p.enabled === false) await repo.failPending(tx, id, 'endpoint disabled');
    return updated;
  });
  if (!row) throw new AppError('not_found', NOT_FOUND);
  return present(row);
}

export async function deleteEndpoint(deps: EndpointDeps, orgId: number, id: string): Promise<void> {
  const deleted = await deps.db.transaction(async (tx) => {
    const done = await repo.deleteEndpoint(tx, orgId, id);
    if (done) await repo.failPending(tx, id, 'endpoint deleted');
    return done;
  });
  if (!deleted) throw new AppError('not_found', NOT_FOUND);
}

/** A new secret, shown once; the current one keeps signing beside it for ROTATION_OVERLAP_MS. */
export async function rotateSecret(deps: EndpointDeps, orgId: number, id: string, now: Date) {
  const ring = deps.config.encryptionKeys;
  const secret = newSecret();
  await deps.db.transaction(async (tx) => {
    const row = await repo.lockSecrets(tx, orgId, id);
    if (!row) throw new AppError('not_found', NOT_FOUND);
    const current = openSecret(ring, id, row.key_id, row.secret_enc);
    const sealedNew = seal(ring, secret, secretAad(id));
    const sealedPrevious = seal(ring, current, secretAad(id));
    await repo.storeSecrets(tx, id, { secretEnc: sealedNew.data, previousEnc: sealedPrevious.data, previousUntil: new Date(now.getTime() + ROTATION_OVERLAP_MS), keyId: sealedNew.keyId });
  });
  return { ...(await getEndpoint(deps, orgId, id)), secret };
}

/** The detail of a ping beyond WEBHOOK_PINGS_PER_HOUR. */
export const pingLimit = (perHour: number) => `at most ${perHour} test pings to an endpoint per hour`;

/**
 * A ping to this endpoint only, delivered by the workers at once. Like a redelivery it makes us send
 * on an organisation's word, so it is capped: at most WEBHOOK_PINGS_PER_HOUR (10) per endpoint within the last hour
 * (429 `ping_limit`, Retry-After: when the oldest leaves the hour), counted under a lock on the
 * endpoint. Unlike a redelivery a pending ping does not hold the next back: a ping is how one checks a
 * receiver just fixed, while the previous ping may still be waiting for its next retry.
 */
/**
 * Who asked for a ping or a redelivery, for the trail: we send to a receiver on the caller's word.
 * The event is recorded in the transaction that queues the delivery, as its last statement, so a
 * delivery is never queued without its event (nor an event written for a delivery not queued).
 */
export type AskedBy = ReturnType<typeof auditContext>;

export async function sendTestEvent(deps: EndpointDeps, orgId: number, id: string, by: AskedBy) {
  const row = await repo.findEndpoint(deps.db, orgId, id);
  if (!row) throw new AppError('not_found', NOT_FOUND);
  if (!row.enabled) throw new AppError('conflict', 'the endpoint is disabled: enable it first (PATCH enabled: true)');
  const eventId = await deps.db.transaction(async (tx) => {
    const p = await repo.lockPings(tx, orgId, id);
    const max = deps.config.WEBHOOK_PINGS_PER_HOUR;
    if (p.recent >= max) throw new AppError('rate_limited', pingLimit(max), { headers: { 'Retry-After': String(Math.max(1, p.window_left_s)) }, extra: { code: 'ping_limit' } });
    const queued = await recordWebhookEvent(tx, { orgId, type: 'ping', data: { endpoint_id: id }, endpointId: id });
    if (queued) await recordAudit(tx, { ...by, action: 'webhook_endpoint.pinged', target: `webhook_endpoint:${id}`, details: { event_id: queued } });
    return queued;
  });
  if (!eventId) throw new AppError('conflict', 'the endpoint is disabled: enable it first (PATCH enabled: true)');
  return { event_id: eventId, type: 'ping' as const };
}

const CURSOR_SCOPE = 'webhook-deliveries';

export async function listDeliveries(deps: EndpointDeps, orgId: number, id: string, q: { limit: number; cursor?: string | undefined }) {
  const row = await repo.findEndpoint(deps.db, orgId, id);
  if (!row) throw new AppError('not_found', NOT_FOUND);
  const before = q.cursor ? decodeCursor(CURSOR_SCOPE, q.cursor, z.tuple([z.number().int().positive()]))[0] : null;
  const rows = await repo.listDeliveries(deps.db, id, { before, limit: q.limit });
  const page = pageOf(rows, q.limit, (last) => encodeCursor(CURSOR_SCOPE, [Number(last.id)]));
  return { data: page.data, next_cursor: page.next };
}

/** Manual redeliveries of one event to one endpoint within an hour (a 429 beyond). */
export const REDELIVERIES_PER_HOUR = 5;
export const REDELIVERY_PENDING = 'a redelivery of this event to this endpoint is still pending: wait for it to end';
export const REDELIVERY_LIMIT = `at most ${REDELIVERIES_PER_HOUR} redeliveries of an event to an endpoint per hour`;

/**
 * A new delivery of a past delivery's event to its endpoint. So that no organisation can make us
 * flood a receiver, one event goes to one endpoint by hand once at a time (429 `redelivery_pending`
 * while a redelivery of it is pending, its own retries included) and at most REDELIVERIES_PER_HOUR
 * times an hour (429 `redelivery_limit`). Counted per event and endpoint, not per delivery id, so
 * redelivering a redelivery counts too; the automatic retries of the first delivery do not count.
 */
export async function redeliver(deps: EndpointDeps, orgId: number, deliveryId: string, by: AskedBy) {
  const n = Number(deliveryId);
  const owner = await repo.deliveryEndpoint(deps.db, orgId, n);
  if (!owner || owner.deleted) throw new AppError('not_found', 'delivery not found');
  if (!owner.enabled) throw new AppError('conflict', 'the endpoint is disabled: enable it first (PATCH enabled: true)');
  return deps.db.transaction(async (tx) => {
    const r = await repo.lockRedeliveries(tx, owner.endpoint_id, owner.event_id);
    if (r.pending > 0) throw new AppError('rate_limited', REDELIVERY_PENDING, { headers: { 'Retry-After': String(Math.max(1, r.pending_due_s)) }, extra: { code: 'redelivery_pending' } });
    if (r.recent >= REDELIVERIES_PER_HOUR) throw new AppError('rate_limited', REDELIVERY_LIMIT, { headers: { 'Retry-After': String(Math.max(1, r.window_left_s)) }, extra: { code: 'redelivery_limit' } });
    const row = await repo.insertRedelivery(tx, orgId, n);
    if (!row) throw new AppError('not_found', 'delivery not found');
    await recordAudit(tx, { ...by, action: 'webhook_endpoint.redelivered', target: `webhook_endpoint:${owner.endpoint_id}`, details: { event_id: row.event_id, delivery_id: row.id, redelivery_of: deliveryId } });
    return { delivery: row, endpointId: owner.endpoint_id };
  });
}
