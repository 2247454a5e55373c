import { randomBytes } from 'node:crypto';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { adjustWallet } from '../wallet/index.ts';
import { createOrganisation, createUser } from './organisations.service.ts';
import { ORG_ADMINISTRATOR, ORG_MEMBER } from '../../lib/roles.ts';

export type SeededCredentials = { organisation: number; admin: { username: string; password: string }; member: { username: string; password: string } };

/**
 * Sandbox only: on the very first start (no users at all) creates a demo organisation with an
 * administrator, a team member and some units. The caller prints the passwords once; they are
 * stored only as argon2id hashes.
 */
export async function seedSandbox(db: DatabasePool, config: Config): Promise<SeededCredentials | null> {
  const users = await db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM users`);
  if (users > 0) return null;
  const org = await createOrganisation(
    db,
    {
      name: 'Sandbox Demo Ltd',
      tenancy: 'hosted',
      businessRegistration: 'RC-SANDBOX-0001',
      dataProtection: 'NDPC-SANDBOX-0001',
      billingEmail: 'billing@sandbox-demo.example',
    },
    { unitCostKobo: config.DEFAULT_UNIT_COST_KOBO, minTopupUnits: config.DEFAULT_MIN_TOPUP_UNITS },
  );
  const admin = { username: 'demo-admin', password: randomBytes(12).toString('base64url') };
  const member = { username: 'demo-member', password: randomBytes(12).toString('base64url') };
  // The quick start logs in with these printed passwords as they are: never asked to change them.
  await createUser(db, { orgId: org.id, ...admin, role: ORG_ADMINISTRATOR, email: 'admin@sandbox-demo.example', requirePasswordChange: false });
  await createUser(db, { orgId: org.id, ...member, role: ORG_MEMBER, requirePasswordChange: false });
  await adjustWallet(db, org.id, 100, 'sandbox welcome units', 'system');
  return { organisation: org.id, admin, member };
}
