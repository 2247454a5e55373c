import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { openJson, sealJson, type KeyRing } from '../../lib/crypto.ts';
import type { ReceiptPayload, SealedMailKind } from './mail.schemas.ts';
import * as repo from './outbox.repository.ts';

/** An e-mail worded whole (messages.ts); it waits in the outbox sealed, as nothing of it may be read there. */
export const sealedMail = z.object({ to: z.string(), subject: z.string(), text: z.string() });
export type SealedMail = z.infer<typeof sealedMail>;

// The associated data binds the ciphertext to its row, so a body copied onto another row does not open.
export const sealedMailAad = (dedupeKey: string) => `outbox:${dedupeKey}`;
const aad = sealedMailAad;

/** Queues the mail, worded whole (messages.ts), in the caller's transaction. */
export async function queueSealedMail(db: CommonQueryMethods, ring: KeyRing, m: { kind: SealedMailKind; dedupeKey: string; mail: SealedMail }): Promise<number> {
  const sealed = sealJson(ring, m.mail, aad(m.dedupeKey));
  return repo.insertSealedMail(db, { kind: m.kind, dedupeKey: m.dedupeKey, keyId: sealed.keyId, body: sealed.data });
}

/** A receipt's addresses, sealed beside its plain payload (the receipt is rendered at delivery, with the balance and invoice number). */
const sealedRecipients = z.object({ to: z.array(z.string()).min(1) });

/** Queues a receipt in the credit's transaction with its addresses sealed; null when this key was queued before. */
export async function queueReceipt(db: CommonQueryMethods, ring: KeyRing, m: { dedupeKey: string; payload: Omit<ReceiptPayload, 'recipients'>; recipients: string[] }): Promise<number | null> {
  const sealed = sealJson(ring, sealedRecipients.parse({ to: m.recipients }), aad(m.dedupeKey));
  return repo.insertReceipt(db, { dedupeKey: m.dedupeKey, payload: m.payload, keyId: sealed.keyId, body: sealed.data });
}

/** A receipt's addresses: the sealed ones, else (a receipt queued before they were sealed) the payload's. */
export function openReceiptRecipients(ring: KeyRing, row: { dedupe_key: string; body_enc: Buffer | null; key_id: string | null }, payload: ReceiptPayload): string[] | null {
  if (row.body_enc && row.key_id) return sealedRecipients.parse(openJson(ring, { keyId: row.key_id, data: row.body_enc }, aad(row.dedupe_key))).to;
  return payload.recipients ?? null;
}

export function openSealedMail(ring: KeyRing, row: { dedupe_key: string; body_enc: Buffer | null; key_id: string | null }): SealedMail | null {
  if (!row.body_enc || !row.key_id) return null;
  return sealedMail.parse(openJson(ring, { keyId: row.key_id, data: row.body_enc }, aad(row.dedupe_key)));
}
