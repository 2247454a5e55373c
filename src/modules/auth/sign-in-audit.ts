import type { DatabasePool } from 'slonik';
import { auditContext, recordAudit } from '../audit/index.ts';
import { findClientPrincipal, findUserForLogin } from '../organisations/index.ts';

type Who = { userId: number; orgId: number | null } | { clientId: string; orgId: number };

/** auth.login: a user's password sign-in or an API client's token grant. */
export async function auditSignIn(db: DatabasePool, who: Who): Promise<void> {
  const user = 'userId' in who;
  const actor = user ? (`user:${who.userId}` as const) : (`client:${who.clientId}` as const);
  await recordAudit(db, { orgId: who.orgId, actor, action: 'auth.login', target: actor, details: { method: user ? 'password' : 'client_credentials' } });
}

/**
 * auth.login_failed, filed under the organisation of the account that was tried (an unknown name
 * under none, which only operators see). The name itself is not kept: it may be an e-mail address.
 */
export async function auditFailedSignIn(db: DatabasePool, tried: { username: string } | { clientId: string }): Promise<void> {
  let orgId: number | null = null;
  let target: string | null = null;
  if ('username' in tried) {
    const user = await findUserForLogin(db, tried.username.trim());
    if (user) [orgId, target] = [user.org_id, `user:${user.id}`];
  } else {
    const client = await findClientPrincipal(db, tried.clientId);
    if (client) [orgId, target] = [client.org_id, `client:${client.client_id}`];
  }
  const method = 'username' in tried ? 'password' : 'client_credentials';
  await recordAudit(db, { orgId, actor: 'anonymous', action: 'auth.login_failed', target, details: { method, known_account: target !== null } });
}

/**
 * auth.login_failed for a wrong password re-entered to confirm an operation (PUT /settings/auto-topup):
 * it counts toward the sign-in lock as a failed sign-in does, so the trail shows it as one. The caller
 * is signed in, so they are the actor and the target; `confirming` names the operation. Nothing typed is kept.
 */
export async function auditFailedPasswordConfirmation(db: DatabasePool, p: { orgId: number | null; userId: number | null; clientId: string | null }, confirming: string): Promise<void> {
  await recordAudit(db, { ...auditContext(p), action: 'auth.login_failed', target: `user:${p.userId}`, details: { method: 'password', known_account: true, confirming } });
}
