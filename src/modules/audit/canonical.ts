import { createHash } from 'node:crypto';

// An event's hash is SHA-256 over the previous event's hash (32 bytes) and the event's canonical
// text: its id, a line feed, then a JSON array of its other fields in a fixed order, with the keys
// of `details` sorted at every depth. The database computes it when the event is written (the id
// is only known there, see audit.repository.ts); audit:verify computes it again from the columns.

export const GENESIS_HASH = Buffer.alloc(32);

export type CanonicalFields = {
  at: Date;
  orgId: number | null;
  actor: string;
  action: string;
  target: string | null;
  requestId: string | null;
  ip: string | null;
  details: Record<string, unknown>;
};

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** Everything of the canonical text but the id; the same text whether written or read back. */
export function canonicalBody(e: CanonicalFields): string {
  return JSON.stringify([e.at.toISOString(), e.orgId, e.actor, e.action, e.target, e.requestId, e.ip, sorted(e.details)]);
}

export function eventHash(prevHash: Buffer, id: number, body: string): Buffer {
  return createHash('sha256').update(prevHash).update(`${id}\n${body}`, 'utf8').digest();
}
