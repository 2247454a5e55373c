import type { DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { verifyPassword } from '../../lib/passwords.ts';
import { recordAudit } from '../audit/index.ts';
import { guardedSignIn, type Principal, type SignInDeps } from '../auth/index.ts';
import { findUserById, setPassword } from '../organisations/index.ts';
import { checkNewPassword, SAME_AS_CURRENT } from './password-rules.ts';
import { digestToken } from './reset-token.ts';
import * as repo from './resets.repository.ts';

export const PASSWORD_CHANGED = 'Password changed';
export const WRONG_CURRENT_PASSWORD = 'Current password is incorrect';
export const BAD_RESET_TOKEN = 'Invalid or expired reset token';

/**
 * The caller proves the current password (a password change, turning two-factor sign-in off); a
 * wrong one counts as a failed sign-in, so a stolen token cannot be used to guess the password
 * faster than POST /login allows. Answers the user's row.
 */
export async function proveCurrentPassword(deps: { db: DatabasePool; signIn: SignInDeps }, principal: Principal, password: string, address: string) {
  if (principal.userId === null) throw new AppError('forbidden', 'API clients have no password');
  const user = await findUserById(deps.db, principal.userId);
  if (!user) throw new AppError('unauthorized', 'Could not validate credentials');
  // The same counters as POST /login: a point taken before the check, given back when it is right.
  const right = await guardedSignIn(deps.signIn, user.username, address, async () => ((await verifyPassword(user.password_hash, password)) ? true : null));
  if (!right) throw new AppError('bad_request', WRONG_CURRENT_PASSWORD);
  return user;
}

/** The change ends every earlier token of the user, this one included (the users_token_version trigger). */
export async function changePassword(
  deps: { db: DatabasePool; clock: Clock; signIn: SignInDeps },
  principal: Principal,
  body: { current_password: string; new_password: string },
  address: string,
): Promise<void> {
  const user = await proveCurrentPassword(deps, principal, body.current_password, address);
  checkNewPassword(body.new_password, user.username);
  if (body.new_password === body.current_password) throw new AppError('bad_request', SAME_AS_CURRENT);
  await setPassword(deps.db, user.id, body.new_password);
  await repo.voidOpenResets(deps.db, user.id, deps.clock.now());
}

/**
 * Uses a reset token once and sets the new password, in one transaction: a password that breaks a
 * rule leaves the token usable for a second try.
 */
export async function resetPassword(
  deps: { db: DatabasePool; clock: Clock },
  body: { token: string; new_password: string },
): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const userId = await repo.claimReset(tx, digestToken(body.token), now);
    const user = userId === null ? null : await findUserById(tx, userId);
    // Refused exactly like an unknown token: a disabled user or a retired organisation's user.
    if (!user || user.disabled || user.org_deleted) throw new AppError('bad_request', BAD_RESET_TOKEN);
    checkNewPassword(body.new_password, user.username);
    if (await verifyPassword(user.password_hash, body.new_password)) throw new AppError('bad_request', SAME_AS_CURRENT);
    await setPassword(tx, user.id, body.new_password);
    await repo.voidOpenResets(tx, user.id, now);
    // The token proved who asked: the event is the user's own.
    await recordAudit(tx, { orgId: user.org_id, actor: `user:${user.id}`, action: 'account.password_reset', target: `user:${user.id}` });
  });
}
