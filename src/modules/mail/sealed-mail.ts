import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { openJson, sealJson, type KeyRing } from '../../lib/crypto.ts';
import type { SealedMailKind } from './mail.schemas.ts';
import * as repo from './outbox.repository.ts';

/** An e-mail another module has rendered whole; it waits in the outbox sealed, as nothing of it may be read there. */
export const sealedMail = z.object({ to: z.string(), subject: z.string(), text: z.string() });
export type SealedMail = z.infer<typeof sealedMail>;

// The associated data binds the ciphertext to its row, so a body copied onto another row does not open.
export const sealedMailAad = (dedupeKey: string) => `outbox:${dedupeKey}`;
const aad = sealedMailAad;

/**
 * Queues the mail in the caller's transaction; the caller enqueues `outbox.deliver` after commit
 * (the outbox sweep sends it if that enqueue is lost).
 */
export async function queueSealedMail(db: CommonQueryMethods, ring: KeyRing, m: { kind: SealedMailKind; dedupeKey: string; mail: SealedMail }): Promise<number> {
  const sealed = sealJson(ring, m.mail, aad(m.dedupeKey));
  return repo.insertSealedMail(db, { kind: m.kind, dedupeKey: m.dedupeKey, keyId: sealed.keyId, body: sealed.data });
}

export function openSealedMail(ring: KeyRing, row: { dedupe_key: string; body_enc: Buffer | null; key_id: string | null }): SealedMail | null {
  if (!row.body_enc || !row.key_id) return null;
  return sealedMail.parse(openJson(ring, { keyId: row.key_id, data: row.body_enc }, aad(row.dedupe_key)));
}
