import type { AppContext } from '../../context.ts';
import { deliverSoon, queueWindowedMail } from '../mail/index.ts';
import { accountKeepers } from '../organisations/index.ts';
import { settleSubmission, type PendingSubmission, type TurnAwayCode } from './submissions.ts';

// A page submission the organisation could not take is not turned away in silence: it is listed on the
// link (`refused`, why, no reference), sent as `verification_link.submitted`, and its administrators and
// finance officers are e-mailed, at most once per organisation per hour (mail_windows).

/** Settles the pending submission as turned away, with its event and (unless one went within the hour) the e-mail, in one transaction. */
export async function turnAway(ctx: AppContext, s: PendingSubmission, code: TurnAwayCode): Promise<void> {
  const at = ctx.clock.now();
  let outboxId: number | null = null;
  const settled = await settleSubmission(ctx.db, s, { kind: 'turned_away', code }, async (tx) => {
    const { organisation, recipients } = await accountKeepers(tx, s.orgId);
    const to = recipients.length > 0 ? recipients : [ctx.config.MAIL_FALLBACK_TO];
    outboxId = await queueWindowedMail(tx, ctx.config, {
      orgId: s.orgId,
      topic: 'link_refused',
      dedupeKey: `link-refused-${s.referenceId}`,
      at,
      to,
      message: (heldBack) => ({ template: 'link_refused', data: { organisation, linkId: s.linkId, clientRef: s.clientRef, code, heldBack } }),
    });
  });
  if (!settled) ctx.logger.warn({ referenceId: s.referenceId, linkId: s.linkId }, 'link submission already settled by the sweep');
  if (outboxId !== null) await deliverSoon(ctx.producer, outboxId, ctx.logger, 'turned-away e-mail');
}
