import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { AppError } from '../../lib/errors.ts';
import * as repo from './api-clients.repository.ts';
import { requireOrganisation } from './organisations.service.ts';

export type { ApiClientRow } from './api-clients.repository.ts';
export { findClientPrincipal } from './api-clients.repository.ts';

/**
 * The secret is 256 random bits, so a plain SHA-256 digest resists guessing as well as a slow hash
 * would, and a token request costs no argon2 run.
 */
const digest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

export async function createApiClient(db: DatabasePool, c: { orgId: number; name: string; role: 'org_admin' | 'member'; createdBy: number | null }) {
  await requireOrganisation(db, c.orgId);
  const clientSecret = randomBytes(32).toString('base64url');
  const row = await repo.insertApiClient(db, {
    clientId: `cli_${randomBytes(12).toString('hex')}`,
    orgId: c.orgId,
    name: c.name,
    role: c.role,
    secretHash: digest(clientSecret),
    createdBy: c.createdBy,
  });
  return { ...row, client_secret: clientSecret };
}

export async function listApiClients(db: DatabasePool, orgId: number) {
  return repo.listApiClients(db, orgId);
}

export async function retireApiClient(db: DatabasePool, orgId: number, clientId: string): Promise<void> {
  if (!(await repo.retireApiClient(db, orgId, clientId))) throw new AppError('not_found', 'API client not found');
}

// Compared against when the client id is unknown, so both failures cost the same.
const NO_SECRET = Buffer.alloc(32);

/** The active client with these credentials (last_used_at updated), or null. */
export async function checkClientCredentials(db: DatabasePool, clientId: string, clientSecret: string) {
  const row = /^cli_[0-9a-f]{24}$/.test(clientId) ? await repo.findApiClientForLogin(db, clientId) : null;
  const stored = row?.secret_hash.length === 32 ? row.secret_hash : NO_SECRET;
  const ok = timingSafeEqual(stored, digest(clientSecret));
  if (!row || !ok || !row.active) return null;
  await repo.touchApiClient(db, row.id);
  return row;
}
