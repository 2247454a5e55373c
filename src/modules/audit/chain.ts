import type { CommonQueryMethods } from 'slonik';
import { canonicalBody, eventHash, GENESIS_HASH } from './canonical.ts';
import { chainBatch, chainHead, type EventRow } from './audit.repository.ts';

export type ChainReport =
  | { ok: true; events: number; head_id: number; head_hash: string }
  | { ok: false; events: number; broken_at: number | null; after: number; reason: string };

const BATCH = 2000;

function recomputed(row: EventRow, prevHash: Buffer): Buffer {
  const body = canonicalBody({
    at: row.at,
    orgId: row.org_id,
    actor: row.actor,
    action: row.action,
    target: row.target,
    requestId: row.request_id,
    ip: row.ip,
    details: row.details,
  });
  return eventHash(prevHash, row.id, body);
}

/**
 * audit:verify. Walks the chain from the first event, recomputing each hash from the event's
 * columns and the hash before it, and names the first link that does not hold: an edited event
 * (its hash no longer matches), a removed one (a gap in the ids, or a prev_hash naming another
 * event), an added one (its hash cannot be recomputed, or the head does not know it), or a tail cut
 * off (the head remembers more events than are left).
 */
export async function verifyChain(db: CommonQueryMethods): Promise<ChainReport> {
  // The head is read before the events: every event it counts was committed with it, so is visible.
  let head = await chainHead(db);
  let prevId = 0;
  let prevHash: Buffer = GENESIS_HASH;
  let events = 0;
  const broken = (at: number | null, reason: string): ChainReport => ({ ok: false, events, broken_at: at, after: prevId, reason });
  for (;;) {
    const rows = await chainBatch(db, prevId, BATCH);
    for (const row of rows) {
      // Appended since the head was read, or written outside the chain: a fresh head tells which.
      if (row.id > head.last_id) head = await chainHead(db);
      if (row.id > head.last_id) return broken(row.id, `event ${row.id} is not part of the chain (its head ends at event ${head.last_id})`);
      if (row.id !== prevId + 1) return broken(row.id, `event ${prevId + 1} is missing (the next event is ${row.id})`);
      if (!row.prev_hash.equals(prevHash)) return broken(row.id, `event ${row.id} does not follow the event before it (prev_hash differs)`);
      const hash = recomputed(row, prevHash);
      if (!hash.equals(row.hash)) return broken(row.id, `event ${row.id} was altered (its hash does not match its contents)`);
      prevId = row.id;
      prevHash = hash;
      events++;
    }
    if (rows.length < BATCH) break;
  }
  if (prevId < head.last_id) return broken(prevId + 1, `the chain ends at event ${prevId} but its head records event ${head.last_id}`);
  if (!prevHash.equals(head.last_hash)) return broken(prevId, `the last event ${prevId} does not match the hash the chain head records`);
  return { ok: true, events, head_id: prevId, head_hash: prevHash.toString('hex') };
}
