import { deliverSoon, queueWindowedMail } from '../mail/index.ts';
import { accountKeepers } from '../organisations/index.ts';
import * as repo from './auto.repository.ts';
import type { TopupDeps } from './deps.ts';

/** What telling needs: a debit's follow-up has no clock of its own (then the system's). */
export type SkipDeps = Pick<TopupDeps, 'db' | 'config' | 'producer' | 'logger'> & { clock?: TopupDeps['clock'] };

// An automatic top-up that was skipped (the day's charges all made, no card it may charge, a card
// declined before) leaves the balance below the line with nobody charging it: the organisation's
// administrators and finance officers are e-mailed, at most once per organisation per hour (the
// mail module's window, topic `auto_topup_skipped`; skips in between are counted in the next e-mail).

/** Skips a person chose (turned off) or that no longer matter (retired): recorded, not e-mailed. */
const QUIET = new Set(['automatic top-up was turned off', 'the organisation is retired']);
const BATCH = 100;

/** Tells of the skipped charges not told of yet: one organisation's (after its debit or skip), or all (the sweep). */
export async function announceSkips(deps: SkipDeps, orgId: number | null): Promise<number> {
  const skips = await repo.unannouncedSkips(deps.db, orgId, BATCH);
  let mailed = 0;
  for (const c of skips) {
    const at = deps.clock?.now() ?? new Date();
    const outboxId = await deps.db.transaction(async (tx) => {
      if (!(await repo.markSkipAnnounced(tx, c.id, at))) return null;
      if (c.detail !== null && QUIET.has(c.detail)) return null;
      const { organisation, recipients } = await accountKeepers(tx, c.org_id);
      const to = recipients.length > 0 ? recipients : [deps.config.MAIL_FALLBACK_TO];
      return queueWindowedMail(tx, deps.config, {
        orgId: c.org_id,
        topic: 'auto_topup_skipped',
        dedupeKey: `auto-topup-skipped-${c.id}`,
        at,
        to,
        message: (heldBack) => ({ template: 'auto_topup_skipped', data: { organisation, units: c.units, below: c.below_units, balance: c.balance_units, reason: c.detail ?? 'not charged', heldBack } }),
      });
    });
    if (outboxId !== null) {
      mailed++;
      await deliverSoon(deps.producer, outboxId, deps.logger, 'automatic top-up skipped e-mail');
    }
  }
  return mailed;
}
