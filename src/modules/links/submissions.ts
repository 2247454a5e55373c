import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import type { JobResult } from '../../jobs/catalog.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import { faceResultsOf, faceSummary, verdictOfLink, type FaceAnswer } from '../verification/index.ts';
import { linkEndsOf, longestLinkRunMs, type LinkStatus } from './link-run.ts';
import { recordWebhookEvent } from '../webhooks/index.ts';
import * as repo from './links.repository.ts';

// What happens to a submission once its use is taken and its row recorded `pending`
// (links.repository.ts takeUse): the page settles it after its verification, or the links sweep
// does when the page's process stopped first.

/** A submission recorded pending: its link, what its webhook event names, and its verification's reference. */
export type PendingSubmission = { linkId: string; orgId: number; clientRef: string | null; referenceId: string };

/**
 * How a pending submission ends:
 * - `ended`: its verification ended; the row takes its status, and its event is recorded;
 * - `refused`: refused before any verification was recorded, and the person was told so on the page:
 *   nothing happened worth listing, so the row goes;
 * - `abandoned`: no verification was recorded and no request is waiting any more (the sweep): listed
 *   `abandoned`, so the organisation sees why a use was held for a while;
 * - `turned_away`: the organisation could not take it (its wallet could not pay, it may not verify):
 *   listed `refused` with why and no reference, with its event, so the organisation hears of the
 *   person it turned away.
 */
export type SubmissionEnd =
  // face: the comparison when the link asked for a face (null: none was made); absent when it did not.
  | { kind: 'ended'; status: LinkStatus; code: string | null; face?: FaceAnswer | null }
  | { kind: 'refused' }
  | { kind: 'abandoned' }
  | { kind: 'turned_away'; code: TurnAwayCode };

/** Why an organisation could not take a page submission (the submission's `code`). */
export type TurnAwayCode = 'insufficient_units' | 'organisation_cannot_verify';

/**
 * Settles a pending submission in one transaction: its row, its use (kept only when the verification
 * found the person, so was charged) and, when its verification ended, the `verification_link.submitted`
 * event, so the event exists exactly when the ended row does. The row's `pending` guards it all: the
 * page and the sweep may both come, and only the first does anything. False when it was settled already.
 */
export async function settleSubmission(db: DatabasePool, s: PendingSubmission, end: SubmissionEnd, also?: (tx: CommonQueryMethods) => Promise<void>): Promise<boolean> {
  return db.transaction(async (tx) => {
    const moved =
      end.kind === 'refused'
        ? await repo.dropPendingSubmission(tx, s.referenceId)
        : end.kind === 'turned_away'
          ? await repo.turnAwayPendingSubmission(tx, s.referenceId, end.code)
          : await repo.endPendingSubmission(tx, s.referenceId, end.kind === 'ended' ? { status: end.status, code: end.code } : { status: 'abandoned', code: null });
    if (!moved) return false;
    if (end.kind !== 'ended' || end.status !== 'found') await repo.giveBackUse(tx, s.linkId);
    if (end.kind === 'ended') {
      await recordWebhookEvent(tx, {
        orgId: s.orgId,
        type: 'verification_link.submitted',
        // The verdict and the face summary (verdict.ts), never personal data.
        data: { link_id: s.linkId, client_ref: s.clientRef, reference_id: s.referenceId, status: end.status, face: faceSummary(end.face ?? null), ...verdictOfLink(end, end.face) },
      });
    }
    if (end.kind === 'turned_away') {
      // No verification behind it: no reference; `code` says why.
      await recordWebhookEvent(tx, {
        orgId: s.orgId,
        type: 'verification_link.submitted',
        data: { link_id: s.linkId, client_ref: s.clientRef, reference_id: null, status: 'refused', code: end.code, face: null, ...verdictOfLink({ status: 'refused', code: end.code }, undefined) },
      });
    }
    // In the same transaction: what else the settlement tells (the e-mail of a turned-away submission).
    if (also) await also(tx);
    return true;
  });
}

// A pending submission younger than twice the longest a link's verification runs may still have its
// request on the way (the steps around the waits, on a loaded machine, fit in the other half): the
// request settles it itself, so the sweep does not look. Past that, no verification recorded means
// none will be.
const GRACE_FACTOR = 2;
// Oldest first; a row whose verification is still pending stays in the way only until that
// verification ends (its job, or the verification sweep within the hour).
const SWEEP_BATCH = 200;

export type LinkSweepDeps = { db: DatabasePool; config: Config; clock: Clock };

/** How long a submission is left to its own request before the sweep settles it. */
export const submissionGraceMs = (config: Config): number => GRACE_FACTOR * longestLinkRunMs(config);

/**
 * `links.sweep`: submissions left pending past the grace period (the page's process stopped, or the
 * page stopped waiting for a verification still running) are settled from their verification as
 * the page would settle them; one whose verification is still pending is left; one with no
 * verification is abandoned and its use given back.
 */
export async function sweepSubmissions(deps: LinkSweepDeps, log: Logger): Promise<JobResult<'links.sweep'>> {
  const before = new Date(deps.clock.now().getTime() - submissionGraceMs(deps.config));
  const rows = await repo.findStalePendingSubmissions(deps.db, before, SWEEP_BATCH);
  const ends = await linkEndsOf(deps, rows.map((r) => r.reference_id));
  let settled = 0;
  let abandoned = 0;
  for (const row of rows) {
    const s = { linkId: row.link_id, orgId: row.org_id, clientRef: row.client_ref, referenceId: row.reference_id };
    const v = ends.get(row.reference_id);
    if (!v) {
      if (await settleSubmission(deps.db, s, { kind: 'abandoned' })) abandoned++;
      continue;
    }
    if (v.status === 'pending') continue;
    // A face link's comparison, read from its sealed verification (none when it found no one).
    const face = row.require_face ? ((v.status === 'found' ? (await faceResultsOf(deps, row.org_id, [row.reference_id])).get(row.reference_id) : undefined) ?? null) : undefined;
    if (await settleSubmission(deps.db, s, { kind: 'ended', status: v.status, code: v.code, ...(face === undefined ? {} : { face }) })) settled++;
  }
  if (settled > 0 || abandoned > 0) log.info({ settled, abandoned }, 'verification link sweep');
  return { settled, abandoned };
}
