import type { CommonQueryMethods } from 'slonik';
import type { KeyRing } from '../../lib/crypto.ts';
import type { SealedMailKind } from './mail.schemas.ts';
import { queueSealedMail, type SealedMail } from './sealed-mail.ts';
import { autoTopupDeclined } from './templates/auto-topup-declined.ts';
import { autoTopupSkipped } from './templates/auto-topup-skipped.ts';
import { consentReceipt } from './templates/consent-receipt.ts';
import type { Words } from './templates/format.ts';
import { invitationUsernameTaken } from './templates/invitation-username-taken.ts';
import { invitation } from './templates/invitation.ts';
import { linkRefused } from './templates/link-refused.ts';
import { lowBalance } from './templates/low-balance.ts';
import { passwordReset } from './templates/password-reset.ts';
import { statement } from './templates/statement.ts';
import { webhookDisabled } from './templates/webhook-disabled.ts';

/**
 * Every e-mail the service seals whole: its template (templates/, one a message) and the outbox kind
 * it waits under. Callers name a message and give its data; the words are written here only. (The
 * top-up receipt is the one e-mail rendered at delivery, from its row: templates/receipt.ts.)
 */
const MESSAGES = {
  password_reset: { kind: 'password_reset_email', render: passwordReset },
  invitation: { kind: 'invitation_email', render: invitation },
  invitation_username_taken: { kind: 'invitation_email', render: invitationUsernameTaken },
  low_balance: { kind: 'low_balance_email', render: lowBalance },
  webhook_disabled: { kind: 'webhook_disabled_email', render: webhookDisabled },
  statement: { kind: 'statement_email', render: statement },
  auto_topup_declined: { kind: 'auto_topup_declined_email', render: autoTopupDeclined },
  consent_receipt: { kind: 'consent_receipt_email', render: consentReceipt },
  link_refused: { kind: 'link_refused_email', render: linkRefused },
  auto_topup_skipped: { kind: 'auto_topup_skipped_email', render: autoTopupSkipped },
} as const satisfies Record<string, { kind: SealedMailKind; render: (data: never, portal: string) => Words }>;

type Messages = typeof MESSAGES;

/** One e-mail to queue: which message, and the data its template words. */
export type MailMessage = { [K in keyof Messages]: { template: K; data: Parameters<Messages[K]['render']>[0] } }[keyof Messages];

/** `publicBaseUrl`: the service's public address, whose portal pages the e-mails link. */
export type MailSite = { encryptionKeys: KeyRing; publicBaseUrl: string };

/**
 * Words the message and queues it sealed in the caller's transaction (its recipients with it); the
 * caller calls deliverSoon after commit (the outbox sweep sends it if that is lost).
 */
export async function queueMail(db: CommonQueryMethods, site: MailSite, m: { dedupeKey: string; to: string | readonly string[]; message: MailMessage }): Promise<number> {
  return queueSealedMail(db, site.encryptionKeys, { kind: kindOf(m.message), dedupeKey: m.dedupeKey, mail: mailOf(site, m.to, m.message) });
}

/** The outbox kind a message waits under. */
export const kindOf = (message: MailMessage): SealedMailKind => MESSAGES[message.template].kind;

/** The message worded for its recipients. */
export function mailOf(site: MailSite, to: string | readonly string[], message: MailMessage): SealedMail {
  const words = MESSAGES[message.template].render(message.data as never, site.publicBaseUrl);
  return { to: typeof to === 'string' ? to : to.join(', '), ...words };
}
