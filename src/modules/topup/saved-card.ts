import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { ReusableAuthorization } from '../../adapters/payment-processor/paystack.ts';
import { openJson, reseal, retiredKeyIds, sealJson, type KeyRing, type SealedCount } from '../../lib/crypto.ts';

// The card of an organisation's last successful top-up, kept so that automatic top-ups can charge it
// again (Paystack's reusable authorization). The authorization code and the e-mail it belongs to are a
// card credential: sealed together, opened only by the worker that charges, never logged. The
// associated data binds the ciphertext to its organisation's row.
const aad = (orgId: number) => `saved_card:${orgId}`;
const credential = z.object({ authorization_code: z.string(), email: z.string() });

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));

export const savedCardRow = z.object({
  org_id: z.coerce.number(),
  key_id: z.string(),
  authorization_enc: z.instanceof(Buffer),
  card_type: z.string(),
  last4: z.string(),
  bank: z.string().nullable(),
  exp_month: z.string().nullable(),
  exp_year: z.string().nullable(),
  topup_reference: z.string(),
  saved_at: time,
  declined_at: time.nullable(),
});
export type SavedCardRow = z.infer<typeof savedCardRow>;

/** How a person recognises the card: `visa ending 4081`. */
export const cardLabel = (c: { card_type: string; last4: string }): string => `${c.card_type} ending ${c.last4}`;

/**
 * Keeps the card of a top-up being credited, in the credit's transaction: the latest credited payment
 * wins (an older credit finishing late leaves a newer card alone), and a new card is usable again even
 * if the one it replaces was declined.
 */
export async function saveCard(tx: CommonQueryMethods, ring: KeyRing, c: { orgId: number; reference: string; authorization: ReusableAuthorization; at: Date }): Promise<void> {
  const a = c.authorization;
  const sealed = sealJson(ring, { authorization_code: a.code, email: a.email }, aad(c.orgId));
  await tx.query(sql.unsafe`
    INSERT INTO saved_cards AS s (org_id, key_id, authorization_enc, card_type, last4, bank, exp_month, exp_year, topup_reference, saved_at)
    VALUES (${c.orgId}, ${sealed.keyId}, ${sql.binary(sealed.data)}, ${a.cardType}, ${a.last4}, ${a.bank}, ${a.expMonth}, ${a.expYear}, ${c.reference}, ${sql.timestamp(c.at)})
    ON CONFLICT (org_id) DO UPDATE SET
      key_id = EXCLUDED.key_id, authorization_enc = EXCLUDED.authorization_enc, card_type = EXCLUDED.card_type, last4 = EXCLUDED.last4,
      bank = EXCLUDED.bank, exp_month = EXCLUDED.exp_month, exp_year = EXCLUDED.exp_year, topup_reference = EXCLUDED.topup_reference,
      saved_at = EXCLUDED.saved_at, declined_at = NULL
    WHERE s.saved_at <= EXCLUDED.saved_at`);
}

export async function findSavedCard(db: CommonQueryMethods, orgId: number): Promise<SavedCardRow | null> {
  return db.maybeOne(sql.type(savedCardRow)`SELECT * FROM saved_cards WHERE org_id = ${orgId}`);
}

/** The authorization code and its e-mail, for the one call that charges the card. */
export function openSavedCard(ring: KeyRing, row: SavedCardRow): { authorizationCode: string; email: string } {
  const c = credential.parse(openJson(ring, { keyId: row.key_id, data: row.authorization_enc }, aad(row.org_id)));
  return { authorizationCode: c.authorization_code, email: c.email };
}

/** The card charged was declined: not charged again until a new top-up saves a card (the same or another). */
export async function markCardDeclined(tx: CommonQueryMethods, orgId: number, cardReference: string, at: Date): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE saved_cards SET declined_at = ${sql.timestamp(at)}
    WHERE org_id = ${orgId} AND topup_reference = ${cardReference} AND declined_at IS NULL`);
}

/** crypto:reencrypt's batch for saved cards (SKIP LOCKED: a card being saved or charged waits for the next batch). */
export async function resealSavedCards(db: DatabasePool, ring: KeyRing, limit: number): Promise<number> {
  const retired = retiredKeyIds(ring);
  if (retired.length === 0) return 0;
  const active = ring[0]!.id;
  return db.transaction(async (tx) => {
    const rows = await tx.any(sql.type(z.object({ org_id: z.coerce.number(), key_id: z.string(), authorization_enc: z.instanceof(Buffer) }))`
      SELECT org_id, key_id, authorization_enc FROM saved_cards
      WHERE key_id = ANY(${sql.array(retired, 'text')})
      LIMIT ${limit} FOR UPDATE SKIP LOCKED`);
    for (const r of rows) {
      const sealed = reseal(ring, { keyId: r.key_id, data: r.authorization_enc }, aad(r.org_id));
      await tx.query(sql.unsafe`UPDATE saved_cards SET authorization_enc = ${sql.binary(sealed.data)}, key_id = ${active} WHERE org_id = ${r.org_id}`);
    }
    return rows.length;
  });
}

export async function sealedCardCounts(db: CommonQueryMethods, activeKeyId: string): Promise<SealedCount[]> {
  const rows = await db.any(sql.type(z.object({ key_id: z.string(), rows: z.coerce.number() }))`
    SELECT key_id, count(*) AS rows FROM saved_cards WHERE key_id < ${activeKeyId} OR key_id > ${activeKeyId} GROUP BY key_id`);
  return rows.map((r) => ({ table: 'saved_cards', ...r }));
}
