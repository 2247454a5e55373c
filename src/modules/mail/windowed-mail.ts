import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { kindOf, mailOf, type MailMessage, type MailSite } from './messages.ts';
import { queueSealedMail } from './sealed-mail.ts';

/**
 * Notices an organisation should hear of, but not once per occurrence: a page submission it could not
 * take, an automatic top-up skipped. The table's CHECK lists the same topics.
 */
export type MailTopic = 'link_refused' | 'auto_topup_skipped';

const WINDOW_MS = 60 * 60 * 1000;

/**
 * Queues an e-mail about `topic` in the caller's transaction, at most one per organisation and topic
 * per rolling hour. The rule is a keyed row (mail_windows: organisation, topic), locked for the
 * transaction, so parallel notices queue on it and only the first in an hour e-mails; the others are
 * counted (`held_back`), and the next e-mail is rendered with that count. Null when held back.
 */
export async function queueWindowedMail(
  db: CommonQueryMethods,
  site: MailSite,
  m: { orgId: number; topic: MailTopic; dedupeKey: string; at: Date; to: string | readonly string[]; message: (heldBack: number) => MailMessage },
): Promise<number | null> {
  await db.query(sql.unsafe`
    INSERT INTO mail_windows (org_id, topic, last_mailed_at) VALUES (${m.orgId}, ${m.topic}, '-infinity')
    ON CONFLICT (org_id, topic) DO NOTHING`);
  const w = await db.one(sql.type(z.object({ recent: z.boolean(), held_back: z.coerce.number() }))`
    SELECT last_mailed_at > ${sql.timestamp(m.at)} - make_interval(secs => ${WINDOW_MS / 1000}) AS recent, held_back
    FROM mail_windows WHERE org_id = ${m.orgId} AND topic = ${m.topic} FOR UPDATE`);
  if (w.recent) {
    await db.query(sql.unsafe`UPDATE mail_windows SET held_back = held_back + 1 WHERE org_id = ${m.orgId} AND topic = ${m.topic}`);
    return null;
  }
  const message = m.message(w.held_back);
  const id = await queueSealedMail(db, site.encryptionKeys, { kind: kindOf(message), dedupeKey: m.dedupeKey, mail: mailOf(site, m.to, message) });
  await db.query(sql.unsafe`
    UPDATE mail_windows SET last_mailed_at = ${sql.timestamp(m.at)}, held_back = 0, outbox_id = ${id}
    WHERE org_id = ${m.orgId} AND topic = ${m.topic}`);
  return id;
}
