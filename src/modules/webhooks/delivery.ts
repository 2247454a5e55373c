import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import pg from 'pg';
import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { deliverSoon, queueMail } from '../mail/index.ts';
import { lowBalanceRecipients } from '../organisations/index.ts';
import { checkedLookup, TARGET_REFUSED, targetAddressRefusal, TargetRefused, urlRefusal, type OwnPorts, type TargetMode } from './address-guard.ts';
import { openSecret, ownPorts, targetMode } from './endpoints.ts';
import { failPending } from './webhooks.repository.ts';
import { signatureHeader, standardSignatureHeader } from './signing.ts';

/**
 * The workers' webhook dispatcher. Deliveries wait in PostgreSQL (written with the change they report),
 * so no Redis queue stands between an event and its receiver: Redis may be away and nothing is lost.
 * Each worker process claims due deliveries in one statement, at most PER_ENDPOINT in flight per
 * endpoint and WEBHOOK_MAX_IN_FLIGHT_PER_ORG per organisation across every process (a lease on the row,
 * so a killed worker's claim expires and the same event is tried again), round-robin over organisations
 * and, within one, over its endpoints (each organisation's oldest due delivery before anyone's second),
 * and sends them concurrently with a hard timeout. An organisation whose receivers are all dead therefore
 * holds at most WEBHOOK_MAX_IN_FLIGHT_PER_ORG of a process's WEBHOOK_CONCURRENCY sockets, for
 * WEBHOOK_TIMEOUT_MS each, and its backlog never stands in front of another organisation's deliveries. A commit notifies the dispatchers
 * (LISTEN/NOTIFY) so a delivery starts at once; the poll is the safety net when a notification is missed.
 */
export const PER_ENDPOINT = 4;

// One claim at a time across every worker process: the in-flight count an endpoint or organisation has is read and
// raised under it, so two processes never both see room for the same slot. A claim is one short
// statement, so the lock is never held for long.
const CLAIM_LOCK = 3_202_032;

const claimedRow = z.object({
  id: z.coerce.number(),
  endpoint_id: z.string(),
  org_id: z.coerce.number(),
  event_id: z.string(),
  type: z.string(),
  body: z.string(),
  attempts: z.number(),
  age_ms: z.coerce.number(),
  url: z.string(),
  key_id: z.string(),
  secret_enc: z.instanceof(Buffer),
  previous_secret_enc: z.instanceof(Buffer).nullable(),
});
type Claimed = z.infer<typeof claimedRow>;

export async function claimDue(db: DatabasePool, limit: number, leaseMs: number, perOrg: number): Promise<readonly Claimed[]> {
  if (limit <= 0) return [];
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${CLAIM_LOCK})`);
    // Candidates: each endpoint's oldest due deliveries up to its free slots (ern: its turn within the
    // endpoint). Then each organisation's candidates are ranked endpoints in turn (orn) and cut to the
    // organisation's free slots, counted over every endpoint and every process (the leases). Ordered by
    // orn, every organisation's first delivery comes before anyone's second.
    return tx.any(sql.type(claimedRow)`
      WITH cand AS (
        SELECT c.id, c.next_attempt_at, e.org_id, c.ern FROM webhook_endpoints e
        CROSS JOIN LATERAL (
          SELECT x.id, x.next_attempt_at, row_number() OVER (ORDER BY x.next_attempt_at, x.id) AS ern
          FROM webhook_deliveries x
          WHERE x.endpoint_id = e.id AND x.status = 'pending' AND x.next_attempt_at <= now() AND (x.lease_until IS NULL OR x.lease_until <= now())
          ORDER BY x.next_attempt_at, x.id
          LIMIT greatest(0, ${PER_ENDPOINT} - (SELECT count(*) FROM webhook_deliveries b WHERE b.endpoint_id = e.id AND b.status = 'pending' AND b.lease_until > now()))
        ) c
        WHERE e.enabled AND e.deleted_at IS NULL
      ), ranked AS (
        SELECT cand.*, row_number() OVER (PARTITION BY cand.org_id ORDER BY cand.ern, cand.next_attempt_at, cand.id) AS orn FROM cand
      ), busy AS (
        SELECT o.org_id, count(*) AS n FROM webhook_endpoints o JOIN webhook_deliveries b ON b.endpoint_id = o.id
        WHERE o.org_id IN (SELECT DISTINCT org_id FROM cand) AND b.status = 'pending' AND b.lease_until > now()
        GROUP BY o.org_id
      ), pick AS (
        SELECT r.id FROM ranked r LEFT JOIN busy ON busy.org_id = r.org_id
        WHERE r.orn <= ${perOrg} - coalesce(busy.n, 0)
        ORDER BY r.orn, r.next_attempt_at, r.id
        LIMIT ${limit}
      )
      UPDATE webhook_deliveries w
      SET lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = w.attempts + 1
      FROM pick p, webhook_endpoints e, webhook_events ev
      WHERE w.id = p.id AND e.id = w.endpoint_id AND ev.id = w.event_id
      RETURNING w.id, w.endpoint_id, e.org_id, w.event_id, ev.type, ev.body, w.attempts,
                (extract(epoch FROM now() - w.created_at) * 1000)::bigint AS age_ms, e.url, e.key_id, e.secret_enc,
                CASE WHEN e.previous_until > now() THEN e.previous_secret_enc END AS previous_secret_enc`);
  });
}

export type Outcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/**
 * One POST. No redirect is followed (node's client never does; a 3xx is a failure). The socket
 * connects only to an address the guard checked: the lookup for names, the same check for a literal.
 */
export function post(url: string, body: string, headers: Record<string, string>, o: { timeoutMs: number; mode: TargetMode; own?: OwnPorts }): Promise<Outcome> {
  return new Promise((resolve) => {
    const why = urlRefusal(url, o.mode);
    if (why) return resolve({ ok: false, status: null, error: why });
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const target = { url: u, own: o.own };
    // The deliveries log shows the same one detail as registration: it tells nothing of the address.
    if (isIP(host) && targetAddressRefusal(host, o.mode, target)) return resolve({ ok: false, status: null, error: TARGET_REFUSED });
    let settled = false;
    const done = (r: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      u,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: checkedLookup(o.mode, undefined, target),
        agent: false,
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        // The answer's body is not read, only drained: a receiver may not make us hold memory.
        res.resume();
        res.on('error', () => undefined);
        req.destroy();
        done(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` });
      },
    );
    const timer = setTimeout(() => {
      done({ ok: false, status: null, error: `no answer within ${o.timeoutMs} ms` });
      req.destroy();
    }, o.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      const cause = (err as { cause?: unknown }).cause;
      const refused = err instanceof TargetRefused ? err : cause instanceof TargetRefused ? cause : null;
      done({ ok: false, status: null, error: refused ? refused.message : (err.code ?? 'connection failed').slice(0, 100) });
    });
    req.end(body);
  });
}

/** The wait before the next try: WEBHOOK_RETRY_FIRST_MS, four times longer each time, at most WEBHOOK_RETRY_MAX_MS. */
export function backoffMs(config: Config, attempts: number): number {
  return Math.min(config.WEBHOOK_RETRY_FIRST_MS * 4 ** Math.max(0, attempts - 1), config.WEBHOOK_RETRY_MAX_MS);
}

/**
 * `producer`: the worker's job producer once Redis has been reached (null before): the dispatcher
 * starts without it, since deliveries need PostgreSQL only; it queues the disabled-endpoint e-mail.
 */
export type DispatcherDeps = { db: DatabasePool; config: Config; logger: Logger; producer?: () => Producer | null };

async function attempt(deps: DispatcherDeps, d: Claimed): Promise<void> {
  const ring = deps.config.encryptionKeys;
  const secrets = [openSecret(ring, d.endpoint_id, d.key_id, d.secret_enc), ...(d.previous_secret_enc ? [openSecret(ring, d.endpoint_id, d.key_id, d.previous_secret_enc)] : [])];
  const t = Math.floor(Date.now() / 1000);
  const outcome = await post(
    d.url,
    d.body,
    {
      'content-type': 'application/json',
      'user-agent': 'idverify-webhooks/1',
      'idverify-signature': signatureHeader(secrets, t, d.body),
      'idverify-event-id': d.event_id,
      'idverify-event-type': d.type,
      // Standard Webhooks beside our own: the same secrets, the same instant, the event id as the message id.
      'webhook-id': d.event_id,
      'webhook-timestamp': String(t),
      'webhook-signature': standardSignatureHeader(secrets, d.event_id, t, d.body),
    },
    { timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS, mode: targetMode(deps.config), own: ownPorts(deps.config) },
  );
  await recordOutcome(deps, d, outcome);
}

async function recordOutcome(deps: DispatcherDeps, d: Claimed, o: Outcome): Promise<void> {
  const log = deps.logger.child({ deliveryId: d.id, endpointId: d.endpoint_id, eventId: d.event_id, attempt: d.attempts });
  if (o.ok) {
    await deps.db.query(sql.unsafe`
      UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now(), lease_until = NULL, last_status_code = ${o.status}, last_error = NULL
      WHERE id = ${d.id} AND status = 'pending'`);
    log.debug({ status: o.status }, 'webhook delivered');
    return;
  }
  if (o.status === 410) {
    // The receiver says this endpoint is gone for good: stop at once.
    await deps.db.transaction(async (tx) => {
      await failDelivery(tx, d.id, o);
      await tx.query(sql.unsafe`UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'gone' WHERE id = ${d.endpoint_id} AND enabled`);
      await failPending(tx, d.endpoint_id, 'endpoint disabled: the receiver answered 410 Gone');
    });
    log.warn('webhook endpoint disabled: 410 Gone');
    return;
  }
  const windowMs = deps.config.WEBHOOK_RETRY_WINDOW_MS;
  if (d.age_ms < windowMs) {
    // The last try lands at the end of the window, not after it.
    const waitMs = Math.max(0, Math.min(backoffMs(deps.config, d.attempts), windowMs - d.age_ms));
    await deps.db.query(sql.unsafe`
      UPDATE webhook_deliveries SET lease_until = NULL, last_status_code = ${o.status}, last_error = ${o.error.slice(0, 300)},
        next_attempt_at = now() + make_interval(secs => ${waitMs / 1000})
      WHERE id = ${d.id} AND status = 'pending'`);
    log.info({ status: o.status, error: o.error, retryInMs: waitMs }, 'webhook not delivered; will retry');
    return;
  }
  const outboxId = await deps.db.transaction(async (tx) => {
    await failDelivery(tx, d.id, o);
    // Failing every try for the whole window, with nothing delivered to the endpoint meanwhile: switch
    // it off and tell the organisation's administrators (through the mail module's outbox).
    const off = await tx.maybeOne(sql.type(z.object({ id: z.string() }))`
      UPDATE webhook_endpoints e SET enabled = false, disabled_reason = 'failing'
      WHERE e.id = ${d.endpoint_id} AND e.enabled AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries x WHERE x.endpoint_id = e.id AND x.delivered_at > now() - make_interval(secs => ${windowMs / 1000}))
      RETURNING e.id`);
    if (!off) return null;
    await failPending(tx, d.endpoint_id, 'endpoint disabled: every try failed for the retry window');
    const { organisation, recipients } = await lowBalanceRecipients(tx, d.org_id);
    const to = recipients.length > 0 ? recipients : [deps.config.MAIL_FALLBACK_TO];
    return queueMail(tx, deps.config, {
      dedupeKey: `webhook-disabled-${d.endpoint_id}-${randomUUID()}`,
      to,
      message: { template: 'webhook_disabled', data: { organisation, endpointId: d.endpoint_id, failingHours: Math.round(windowMs / 3_600_000), lastError: o.error } },
    });
  });
  log.warn({ status: o.status, error: o.error, endpointDisabled: outboxId !== null }, 'webhook delivery failed for good');
  if (outboxId !== null) await deliverSoon(deps.producer?.() ?? undefined, outboxId, log, 'e-mail');
}

async function failDelivery(tx: CommonQueryMethods, id: number, o: Outcome & { ok: false }): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE webhook_deliveries SET status = 'failed', lease_until = NULL, last_status_code = ${o.status}, last_error = ${o.error.slice(0, 300)}
    WHERE id = ${id} AND status = 'pending'`);
}

export type WebhookDispatcher = { close(): Promise<void> };

export function startWebhookDispatcher(deps: DispatcherDeps): WebhookDispatcher {
  const { config, logger } = deps;
  const leaseMs = config.WEBHOOK_TIMEOUT_MS + 10_000;
  const inFlight = new Set<Promise<void>>();
  let closing = false;
  let pumping = false;
  let again = false;

  const pump = async (): Promise<void> => {
    if (closing) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        const room = config.WEBHOOK_CONCURRENCY - inFlight.size;
        const claimed = await claimDue(deps.db, room, leaseMs, config.WEBHOOK_MAX_IN_FLIGHT_PER_ORG);
        for (const d of claimed) {
          const p: Promise<void> = attempt(deps, d)
            .catch((err: unknown) => logger.error({ err: describe(err), deliveryId: d.id }, 'webhook attempt failed to record; its lease expires and it is tried again'))
            .finally(() => {
              inFlight.delete(p);
              void pump();
            });
          inFlight.add(p);
        }
        // A full claim may have left more due: claim again while there is room.
        if (claimed.length > 0 && claimed.length === room) again = inFlight.size < config.WEBHOOK_CONCURRENCY;
      } while (again && !closing);
    } catch (err) {
      logger.warn({ err: describe(err) }, 'webhook claim failed; the next poll tries again');
    } finally {
      pumping = false;
    }
  };

  const timer = setInterval(() => void pump(), config.WEBHOOK_POLL_MS);
  let listener: pg.Client | null = null;
  let relisten: NodeJS.Timeout | undefined;
  // Without notifications the poll still delivers, only later: reconnect in the background, forever.
  const listenLater = () => {
    if (!closing) relisten = setTimeout(() => void listen(), Math.max(config.WEBHOOK_POLL_MS, 1000));
  };
  const listen = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: config.DATABASE_URL });
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      logger.warn({ err: describe(err) }, 'webhook notifications unavailable; polling every WEBHOOK_POLL_MS until reconnected');
      if (listener === client) listener = null;
      client.end().catch(() => undefined);
      listenLater();
    };
    client.on('error', fail);
    client.on('notification', () => void pump());
    try {
      await client.connect();
      await client.query('LISTEN idverify_webhooks');
    } catch (err) {
      return fail(err);
    }
    if (closing) return void (await client.end().catch(() => undefined));
    listener = client;
    // What committed while no one listened.
    void pump();
  };
  void listen();
  void pump();

  return {
    async close() {
      closing = true;
      clearInterval(timer);
      clearTimeout(relisten);
      await listener?.end().catch(() => undefined);
      // Deliveries in flight finish (each within WEBHOOK_TIMEOUT_MS) before the pool closes.
      await Promise.allSettled([...inFlight]);
    },
  };
}
