import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { CanonicalFields } from './canonical.ts';
import { actorOf, type AuditAction, type AuditActor } from './actions.ts';
import { insertEvents } from './audit.repository.ts';
import { batcher } from '../../lib/batch.ts';
import { isPool, refusedForItsValues } from '../../lib/db.ts';
import { currentOrigin } from '../../lib/request-scope.ts';

export type AuditEvent = {
  orgId: number | null;
  actor: AuditActor;
  action: AuditAction;
  /** What was acted on, by id or reference: `user:12`, `client:cli_...`, `REF-...`, `TOP-...`. Never personal data. */
  target?: string | null;
  /** Ids, counts, names of settings; never a NIN, phone number, name, e-mail address or secret. */
  details?: Record<string, unknown>;
};

/**
 * The audit module's one writer. Call it in the transaction of the action when there is one (as
 * its last statement: it locks the chain head until COMMIT), or right after the action and before
 * answering, so a read of personal data whose event cannot be written is not served.
 */
export async function recordAudit(db: CommonQueryMethods, e: AuditEvent): Promise<number> {
  const fields = canonicalOf(e);
  if (!isPool(db)) return (await insertEvents(db, [fields]))[0]!;
  let writer = writers.get(db);
  if (!writer) writers.set(db, (writer = batchWriter(db)));
  return writer(fields);
}

/**
 * An event as the chain keeps it, timed now (the wall clock of the recording, whatever clock the
 * caller's business rules run on). Its request id and address are those of the request it is
 * recorded for (lib/request-scope.ts), never passed by the caller, so no event a request causes can
 * lack them; an event written outside any request (a job, a command) has neither.
 */
export function canonicalOf(e: AuditEvent): CanonicalFields {
  const origin = currentOrigin();
  return {
    at: new Date(),
    orgId: e.orgId,
    actor: e.actor,
    action: e.action,
    target: e.target ?? null,
    requestId: origin?.requestId ?? null,
    ip: origin?.ip ?? null,
    details: e.details ?? {},
  };
}

const writers = new WeakMap<DatabasePool, (e: CanonicalFields) => Promise<number>>();
const MAX_BATCH = 200;

/**
 * Events written outside a transaction go through one writer per pool (lib/batch.ts): while a write
 * is under way, the events that arrive wait and are written together by the next statement. Every
 * write holds the chain head until its COMMIT (a disk flush), so one COMMIT for many events is what
 * keeps the trail from capping the requests that record one (requeries, slips, sign-ins). A batch of
 * several that PostgreSQL refused for its values is written again one event at a time, so one
 * event's fault is its own caller's alone; any other failure (a lost connection: the batch may have
 * committed) fails the batch's callers, and nothing is written twice.
 */
function batchWriter(db: DatabasePool): (e: CanonicalFields) => Promise<number> {
  return batcher({ maxBatch: MAX_BATCH, retryOneByOne: refusedForItsValues, run: (events: CanonicalFields[]) => insertEvents(db, events) });
}

/** Organisation and actor of an authenticated request (its id and address come from the request's scope). */
export function auditContext(p: { orgId: number | null; userId: number | null; clientId: string | null }): Pick<AuditEvent, 'orgId' | 'actor'> {
  return { orgId: p.orgId, actor: actorOf(p) };
}
