import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { makerMayStillAct } from '../organisations/index.ts';
import { SUBMISSION_STATUSES } from './links.schemas.ts';

// The links module's tables: verification_links and verification_link_submissions. Only it writes them.

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString());

export const linkRow = z.object({
  id: z.string(),
  seq: z.coerce.number(),
  org_id: z.coerce.number(),
  reason: z.string(),
  purpose: z.string(),
  require_face: z.boolean(),
  liveness: z.boolean(),
  expires_at: time,
  max_uses: z.coerce.number(),
  uses: z.coerce.number(),
  client_ref: z.string().nullable(),
  status: z.enum(['active', 'revoked']),
  created_by_user: z.coerce.number().nullable(),
  created_by_client: z.coerce.number().nullable(),
  created_by_client_id: z.string().nullable(),
  created_at: time,
  revoked_at: time.nullable(),
  // Read where a link is shown or its page served (absent where a row is just written): false once its
  // maker may no longer make links (disabled, demoted, a client revoked or suspended).
  maker_may_act: z.boolean().optional(),
});
export type LinkRow = z.infer<typeof linkRow>;

const columns = sql.fragment`id, seq, org_id, reason, purpose, require_face, liveness, expires_at, max_uses, uses, client_ref, status, created_by_user, created_by_client, created_by_client_id, created_at, revoked_at`;

/** A link acts for its maker: it takes submissions only while they may still make links at `at` (read live). */
const makerMayAct = (l: string, at: Date) =>
  makerMayStillAct(sql.fragment`${sql.identifier([l, 'created_by_user'])}`, sql.fragment`${sql.identifier([l, 'created_by_client'])}`, sql.fragment`${sql.identifier([l, 'org_id'])}`, at);
/** A link as shown at `at`: its maker's standing judged at the same instant as the rest of it. */
const shown = (at: Date) => sql.fragment`${columns}, ${makerMayAct('verification_links', at)} AS maker_may_act`;

export type NewLink = {
  id: string;
  orgId: number;
  tokenHash: Buffer;
  reason: string;
  purpose: string;
  requireFace: boolean;
  liveness: boolean;
  expiresAt: Date;
  maxUses: number;
  clientRef: string | null;
  maker: { userId: number | null; apiClientId: number | null; clientId: string | null };
  createdAt: Date;
};

export async function insertLink(db: CommonQueryMethods, l: NewLink): Promise<LinkRow> {
  return db.one(sql.type(linkRow)`
    INSERT INTO verification_links (id, org_id, token_hash, reason, purpose, require_face, liveness, expires_at, max_uses, client_ref, created_by_user, created_by_client, created_by_client_id, created_at)
    VALUES (${l.id}, ${l.orgId}, ${sql.binary(l.tokenHash)}, ${l.reason}, ${l.purpose}, ${l.requireFace}, ${l.liveness}, ${sql.timestamp(l.expiresAt)}, ${l.maxUses}, ${l.clientRef},
            ${l.maker.userId}, ${l.maker.apiClientId}, ${l.maker.clientId}, ${sql.timestamp(l.createdAt)})
    RETURNING ${columns}`);
}

export async function findLink(db: CommonQueryMethods, orgId: number, id: string, at: Date): Promise<LinkRow | null> {
  return db.maybeOne(sql.type(linkRow)`SELECT ${shown(at)} FROM verification_links WHERE id = ${id} AND org_id = ${orgId}`);
}

export async function findLinkByToken(db: CommonQueryMethods, tokenHash: Buffer, at: Date): Promise<LinkRow | null> {
  return db.maybeOne(sql.type(linkRow)`SELECT ${shown(at)} FROM verification_links WHERE token_hash = ${sql.binary(tokenHash)}`);
}

/** A page of the organisation's links, newest first, after `before` (a seq) when given; one row more than `limit`. */
export async function listLinks(db: CommonQueryMethods, orgId: number, p: { before: number | null; limit: number; at: Date }): Promise<readonly LinkRow[]> {
  const after = p.before === null ? sql.fragment`` : sql.fragment`AND seq < ${p.before}`;
  return db.any(sql.type(linkRow)`
    SELECT ${shown(p.at)} FROM verification_links WHERE org_id = ${orgId} ${after} ORDER BY seq DESC LIMIT ${p.limit + 1}`);
}

/** Revoked at `at`; null when there is no such link, or it was revoked already (the caller tells which). */
export async function revokeLink(db: CommonQueryMethods, orgId: number, id: string, at: Date): Promise<LinkRow | null> {
  return db.maybeOne(sql.type(linkRow)`
    UPDATE verification_links SET status = 'revoked', revoked_at = ${sql.timestamp(at)}
    WHERE id = ${id} AND org_id = ${orgId} AND status = 'active'
    RETURNING ${columns}`);
}

/**
 * Takes one use of an active, unexpired link and records the submission `pending` under the
 * reference its verification will run under, in one statement: whatever stops the process next, a
 * use is never held without its submission row (the links sweep settles a row left pending).
 * Parallel submissions queue on the link row's lock and each sees the count the one before left, so
 * `uses` never passes `max_uses` (the CHECK says so too). False when there is none to take.
 */
export async function takeUse(db: CommonQueryMethods, s: { linkId: string; referenceId: string; at: Date }): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    WITH taken AS (
      UPDATE verification_links SET uses = uses + 1
      WHERE id = ${s.linkId} AND status = 'active' AND expires_at > ${sql.timestamp(s.at)} AND uses < max_uses
        AND ${makerMayAct('verification_links', s.at)}
      RETURNING id)
    INSERT INTO verification_link_submissions (link_id, reference_id, status, submitted_at)
    SELECT id, ${s.referenceId}, 'pending', ${sql.timestamp(s.at)} FROM taken`);
  return r.rowCount === 1;
}

/** A submission that charged nothing gives its use back. */
export async function giveBackUse(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE verification_links SET uses = uses - 1 WHERE id = ${id} AND uses > 0`);
}

type EndStatus = Exclude<(typeof SUBMISSION_STATUSES)[number], 'pending'>;

/** A pending submission moved to its end; false when it is not pending (settled already). */
export async function endPendingSubmission(db: CommonQueryMethods, referenceId: string, end: { status: EndStatus; code: string | null }): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE verification_link_submissions SET status = ${end.status}, code = ${end.code}
    WHERE reference_id = ${referenceId} AND status = 'pending'`);
  return r.rowCount === 1;
}

/**
 * A pending submission the organisation could not take (its wallet could not pay, it may not verify):
 * kept, `refused` with why, and without a reference (no verification was recorded under it); false
 * when it is not pending.
 */
export async function turnAwayPendingSubmission(db: CommonQueryMethods, referenceId: string, code: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE verification_link_submissions SET status = 'refused', code = ${code}, reference_id = NULL
    WHERE reference_id = ${referenceId} AND status = 'pending'`);
  return r.rowCount === 1;
}

/** A pending submission removed (it recorded no verification); false when it is not pending. */
export async function dropPendingSubmission(db: CommonQueryMethods, referenceId: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`DELETE FROM verification_link_submissions WHERE reference_id = ${referenceId} AND status = 'pending'`);
  return r.rowCount === 1;
}

const staleRow = z.object({ reference_id: z.string(), link_id: z.string(), org_id: z.coerce.number(), client_ref: z.string().nullable(), require_face: z.boolean() });

/** Pending submissions made before `before`, oldest first, with what their webhook event names. */
export async function findStalePendingSubmissions(db: CommonQueryMethods, before: Date, limit: number): Promise<readonly z.infer<typeof staleRow>[]> {
  return db.any(sql.type(staleRow)`
    SELECT s.reference_id, s.link_id, l.org_id, l.client_ref, l.require_face
    FROM verification_link_submissions s JOIN verification_links l ON l.id = s.link_id
    WHERE s.status = 'pending' AND s.submitted_at < ${sql.timestamp(before)}
    ORDER BY s.submitted_at LIMIT ${limit}`);
}

const submissionRow = z.object({ reference_id: z.string().nullable(), status: z.enum(SUBMISSION_STATUSES), code: z.string().nullable(), submitted_at: time });
export type SubmissionRow = z.infer<typeof submissionRow>;

export const SUBMISSIONS_SHOWN = 200;

export async function listSubmissions(db: CommonQueryMethods, linkId: string): Promise<readonly SubmissionRow[]> {
  return db.any(sql.type(submissionRow)`
    SELECT reference_id, status, code, submitted_at FROM verification_link_submissions
    WHERE link_id = ${linkId} ORDER BY id DESC LIMIT ${SUBMISSIONS_SHOWN}`);
}
