import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export type Me = {
  id: number;
  username: string | null;
  role: 'org_admin' | 'member' | 'platform_admin';
  organisation: null | {
    id: number;
    name: string;
    subscription_active: boolean;
    units?: number;
    reserved_units?: number;
    loyalty_badge?: string | null;
  };
};

export type Session = { me: Me; refresh(): Promise<void>; signOut(reason?: string): Promise<void> };

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('no session');
  return s;
}

export const isAdmin = (me: Me) => me.role === 'org_admin';
