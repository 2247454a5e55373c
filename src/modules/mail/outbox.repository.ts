import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { outboxRow, type ReceiptPayload, type SealedMailKind } from './mail.schemas.ts';

// The outbox table: every e-mail this service sends waits here, queued in the transaction of the
// change it reports, until a delivery job (or the sweep) sends it.

const idRow = z.object({ id: z.coerce.number() });

/**
 * Queues the receipt e-mail in the credit's own transaction, so a committed credit always has its
 * receipt: the figures in plain (rendered at delivery), the addresses sealed. Null when the receipt
 * for this key was queued before.
 */
export async function insertReceipt(db: CommonQueryMethods, m: { dedupeKey: string; payload: Omit<ReceiptPayload, 'recipients'>; keyId: string; body: Buffer }): Promise<number | null> {
  const row = await db.maybeOne(sql.type(idRow)`
    INSERT INTO outbox (kind, dedupe_key, payload, body_enc, key_id) VALUES ('receipt_email', ${m.dedupeKey}, ${sql.jsonb(m.payload)}, ${sql.binary(m.body)}, ${m.keyId})
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id`);
  return row?.id ?? null;
}

/**
 * Queues an e-mail of another module whose whole body (recipient, subject, text) is sealed; the
 * payload keeps nothing secret. Delivered by the same job and sweep as receipts.
 */
export async function insertSealedMail(db: CommonQueryMethods, m: { kind: SealedMailKind; dedupeKey: string; keyId: string; body: Buffer }): Promise<number> {
  return db.oneFirst(sql.type(idRow)`
    INSERT INTO outbox (kind, dedupe_key, payload, body_enc, key_id)
    VALUES (${m.kind}, ${m.dedupeKey}, '{}'::jsonb, ${sql.binary(m.body)}, ${m.keyId})
    RETURNING id`);
}

/**
 * The receipt row, with the balance read from the credit's ledger line and the invoice number from
 * the credit's invoice (both immutable, one per reference, committed with the receipt's row: the
 * number is given after the receipt is queued, as late in the credit as the lock order allows).
 */
export async function findOutbox(db: CommonQueryMethods, id: number) {
  return db.maybeOne(sql.type(outboxRow)`
    SELECT o.id, o.kind, o.status, o.payload, o.attempts, o.body_enc, o.key_id, o.dedupe_key, t.units_after AS new_balance,
           i.number AS invoice_number
    FROM outbox o
    LEFT JOIN wallet_transactions t ON t.kind = 'topup' AND t.reference = o.payload->>'reference'
    LEFT JOIN invoices i ON o.kind = 'receipt_email' AND i.topup_reference = o.payload->>'reference'
    WHERE o.id = ${id}`);
}

/**
 * A sealed body is erased once sent: nothing of it outlives its delivery (nor the plain addresses of
 * a receipt queued before they were sealed).
 */
export async function markOutboxSent(db: CommonQueryMethods, id: number): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE outbox SET status = 'sent', sent_at = now(), attempts = attempts + 1, last_error = NULL, body_enc = NULL, payload = payload - 'recipients'
    WHERE id = ${id} AND status = 'pending'`);
}

export async function markOutboxAttemptFailed(db: CommonQueryMethods, id: number, error: string, final: boolean): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE outbox SET attempts = attempts + 1, last_error = ${error}, status = ${final ? 'failed' : 'pending'},
      body_enc = CASE WHEN ${final} THEN NULL ELSE body_enc END,
      payload = CASE WHEN ${final} THEN payload - 'recipients' ELSE payload END
    WHERE id = ${id} AND status = 'pending'`);
}

/** Receipts whose delivery job was lost (enqueue failed after commit, Redis emptied). */
export async function listStaleOutbox(db: CommonQueryMethods, limit: number) {
  return db.anyFirst(sql.type(idRow)`
    SELECT id FROM outbox WHERE status = 'pending' AND created_at < now() - interval '1 minute'
    ORDER BY created_at LIMIT ${limit}`);
}
