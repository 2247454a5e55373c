import { createHash, randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { decodeCursor, encodeCursor, pageOf } from '../../lib/pagination.ts';
import type { Principal } from '../auth/index.ts';
import { requireKnownReason, type ReasonsDeps } from '../reasons/index.ts';
import { faceResultsOf, newReferenceId, verdictOfLink } from '../verification/index.ts';
import * as repo from './links.repository.ts';
import type { CreateLink, Link } from './links.schemas.ts';

export type LinkDeps = ReasonsDeps & { db: DatabasePool; config: Config; clock: Clock };

export const LINK_NOT_FOUND = 'verification link not found';
export const LIVENESS_NEEDS_FACE = 'liveness: true needs require_face: true (a liveness check comes with the face match); leave liveness out or set require_face';
export const LINK_ALREADY_REVOKED = 'This verification link is already revoked';

/** The SHA-256 of a token: 128 random bits need no slow hash to stay unguessable. */
export const tokenHash = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export type GoneReason = 'revoked' | 'expired' | 'used_up' | 'suspended';

/**
 * Why a link takes no more submissions, or null while it is active. `suspended`: its maker may no
 * longer make links (disabled or demoted; an API client revoked or suspended); read live, so it takes
 * submissions again if they are enabled or promoted again before it expires. Revoke it to end it for good.
 */
export function goneReason(row: Pick<repo.LinkRow, 'status' | 'expires_at' | 'uses' | 'max_uses' | 'maker_may_act'>, now: Date): GoneReason | null {
  if (row.status === 'revoked') return 'revoked';
  if (new Date(row.expires_at).getTime() <= now.getTime()) return 'expired';
  if (row.uses >= row.max_uses) return 'used_up';
  if (row.maker_may_act === false) return 'suspended';
  return null;
}

export function present(row: repo.LinkRow, now: Date): Link {
  return {
    id: row.id,
    status: goneReason(row, now) ?? 'active',
    reason: row.reason,
    purpose: row.purpose,
    require_face: row.require_face,
    liveness: row.liveness,
    expires_at: row.expires_at,
    max_uses: row.max_uses,
    uses: row.uses,
    client_ref: row.client_ref,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
  };
}

/** The link's address for the person: the configured public base, else the address this request came to. */
export function linkUrl(base: string, token: string): string {
  return `${base.replace(/\/$/, '')}/v/${token}`;
}

export async function createLink(deps: LinkDeps, principal: Principal, orgId: number, b: CreateLink, base: string) {
  await requireKnownReason(deps, b.reason);
  if (b.liveness === true && !b.require_face) throw new AppError('bad_request', LIVENESS_NEEDS_FACE);
  const token = randomBytes(16).toString('base64url');
  const now = deps.clock.now();
  const row = await repo.insertLink(deps.db, {
    // The reference's alphabet and randomness, under the link's own prefix.
    id: newReferenceId().replace(/^REF-/, 'LNK-'),
    orgId,
    tokenHash: tokenHash(token),
    reason: b.reason,
    purpose: b.purpose,
    requireFace: b.require_face,
    // A face asked for is a live one unless the maker says otherwise (links.schemas.ts refuses liveness without a face).
    liveness: b.liveness ?? b.require_face,
    expiresAt: new Date(now.getTime() + b.expires_in_hours * 3600_000),
    maxUses: b.max_uses,
    clientRef: b.client_ref ?? null,
    maker: { userId: principal.userId, apiClientId: principal.apiClientId, clientId: principal.clientId },
    createdAt: now,
  });
  return { ...present(row, now), url: linkUrl(base, token) };
}

const CURSOR_SCOPE = 'verification-links';

export async function listLinks(deps: LinkDeps, orgId: number, q: { limit: number; cursor?: string | undefined }) {
  const before = q.cursor ? decodeCursor(CURSOR_SCOPE, q.cursor, z.tuple([z.number().int().positive()]))[0] : null;
  const now = deps.clock.now();
  const rows = await repo.listLinks(deps.db, orgId, { before, limit: q.limit, at: now });
  const page = pageOf(rows, q.limit, (last) => encodeCursor(CURSOR_SCOPE, [last.seq]));
  return { data: page.data.map((r) => present(r, now)), next_cursor: page.next };
}

export async function getLink(deps: LinkDeps, orgId: number, id: string) {
  const now = deps.clock.now();
  const row = await repo.findLink(deps.db, orgId, id, now);
  if (!row) throw new AppError('not_found', LINK_NOT_FOUND);
  const submissions = await repo.listSubmissions(deps.db, id);
  const faces = await faceResultsOf(deps, orgId, submissions.flatMap((s) => (s.reference_id === null ? [] : [s.reference_id])));
  return {
    ...present(row, now),
    submissions: submissions.map((s) => {
      const face = (s.reference_id === null ? null : faces.get(s.reference_id)) ?? null;
      return { ...s, face, ...verdictOfLink(s, row.require_face ? face : undefined) };
    }),
  };
}

export async function revokeLink(deps: LinkDeps, orgId: number, id: string) {
  const now = deps.clock.now();
  const row = await repo.revokeLink(deps.db, orgId, id, now);
  if (row) return present(row, now);
  // A second revocation changes nothing, so it answers 409 (and records no second audit event).
  if (await repo.findLink(deps.db, orgId, id, now)) throw new AppError('conflict', LINK_ALREADY_REVOKED);
  throw new AppError('not_found', LINK_NOT_FOUND);
}
