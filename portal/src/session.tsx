import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Schemas } from './api.ts';

/** GET /me: who is signed in, with their organisation (units, badge; the unit cost only for those who keep the accounts). */
export type Me = Schemas['Me'];

export type Session = { me: Me; refresh(): Promise<void>; signOut(reason?: string): Promise<void> };

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('no session');
  return s;
}

export const isAdmin = (me: Me) => me.role === 'org_admin';
/** Administrators and finance officers: top-ups, invoices, statements, the ledger, the audit trail (the API's keep_accounts). */
export const keepsAccounts = (me: Me) => me.role === 'org_admin' || me.role === 'finance';
/** Those who may verify and run batches: not the finance role, which only pays and reads. */
export const verifies = (me: Me) => me.role === 'org_admin' || me.role === 'member';

/** How a role reads in a sentence ("Signed in as ... (finance officer)"). */
export const ROLE_NAMES: Record<Me['role'], string> = { org_admin: 'administrator', member: 'team member', finance: 'finance officer', platform_admin: 'platform administrator' };
