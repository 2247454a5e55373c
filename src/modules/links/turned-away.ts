import type { AppContext } from '../../context.ts';
import { deliverSoon, queueWindowedMail, type SealedMail } from '../mail/index.ts';
import { accountKeepers } from '../organisations/index.ts';
import { settleSubmission, type PendingSubmission, type TurnAwayCode } from './submissions.ts';

// A page submission the organisation could not take is not turned away in silence: it is listed on the
// link (`refused`, why, no reference), sent as `verification_link.submitted`, and its administrators and
// finance officers are e-mailed, at most once per organisation per hour (mail_windows).

const WHY: Record<TurnAwayCode, string> = {
  insufficient_units: 'your wallet did not hold the units to pay for it',
  organisation_cannot_verify: "your organisation's subscription is not active, so it cannot make verifications",
};

/** Settles the pending submission as turned away, with its event and (unless one went within the hour) the e-mail, in one transaction. */
export async function turnAway(ctx: AppContext, s: PendingSubmission, code: TurnAwayCode): Promise<void> {
  const at = ctx.clock.now();
  let outboxId: number | null = null;
  const settled = await settleSubmission(ctx.db, s, { kind: 'turned_away', code }, async (tx) => {
    const { organisation, recipients } = await accountKeepers(tx, s.orgId);
    const to = recipients.length > 0 ? recipients : [ctx.config.MAIL_FALLBACK_TO];
    outboxId = await queueWindowedMail(tx, ctx.config.encryptionKeys, {
      orgId: s.orgId,
      topic: 'link_refused',
      kind: 'link_refused_email',
      dedupeKey: `link-refused-${s.referenceId}`,
      at,
      render: (heldBack) => renderTurnedAwayMail(ctx.config.publicBaseUrl, to, { organisation, linkId: s.linkId, clientRef: s.clientRef, code, heldBack }),
    });
  });
  if (!settled) ctx.logger.warn({ referenceId: s.referenceId, linkId: s.linkId }, 'link submission already settled by the sweep');
  if (outboxId !== null) await deliverSoon(ctx.producer, outboxId, ctx.logger, 'turned-away e-mail');
}

/** The e-mail: which link, why, what to do; never the person (the page never told us who they are). */
export function renderTurnedAwayMail(portal: string, to: string[], m: { organisation: string; linkId: string; clientRef: string | null; code: TurnAwayCode; heldBack: number }): SealedMail {
  const fix = m.code === 'insufficient_units' ? `Top up (or check automatic top-up): ${portal}/portal/top-up` : 'Ask us to make the subscription active again: reply to this e-mail.';
  const text = [
    `Someone opened a verification link of ${m.organisation} (${m.linkId}${m.clientRef ? `, your reference ${m.clientRef}` : ''}) and tried to verify, but ${WHY[m.code]}.`,
    'They were told that you cannot take verifications at the moment, shown your support contact, and offered to try again. Nothing was charged and the link keeps its use.',
    ...(m.heldBack > 0 ? [`${m.heldBack} more ${m.heldBack === 1 ? 'person was' : 'people were'} turned away in the hour before this e-mail (listed on their links).`] : []),
    '',
    fix,
    '',
    `The link lists this as a refused submission (GET /v1/verification-links/${m.linkId}), and your webhook endpoints received verification_link.submitted. You get at most one such e-mail an hour.`,
    '',
  ].join('\n');
  return { to: to.join(', '), subject: `A person could not verify: ${m.organisation} cannot take verifications`, text };
}
