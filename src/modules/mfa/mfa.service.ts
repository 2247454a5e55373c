import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import { open, seal } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { organisationSettings } from '../organisations/index.ts';
import { countedCode, type CodeAttempt, type CodeCountDeps } from './code-attempts.ts';
import * as repo from './mfa.repository.ts';
import { matchStep, newRecoveryCode, newSecret, otpauthUri, recoveryCodeHash } from './totp.ts';
import { roles } from '../../lib/roles.ts';

export type MfaDeps = CodeCountDeps & { db: DatabasePool; clock: Clock; config: Pick<Config, 'encryptionKeys' | 'JWT_ISSUER' | 'REDIS_PREFIX'> };

/** The user a code is sent for (the lock-out's audit event names them). */
export type CodeSender = { id: number; orgId: number | null };

const attempt = (user: CodeSender): CodeAttempt => ({ userId: user.id, orgId: user.orgId });

export const INVALID_CODE = 'Invalid one-time code';
export const ALREADY_ON = 'Two-factor sign-in is already on: turn it off first to enrol again';
export const NOT_ON = 'Two-factor sign-in is not on';
export const RECOVERY_CODES = 10;

/** The sealed secret is bound to its user: copied onto another user's row it does not open. */
export const secretAad = (userId: number) => `mfa-totp:${userId}`;

function secretOf(deps: MfaDeps, row: repo.MfaRow): Uint8Array {
  return open(deps.config.encryptionKeys, { keyId: row.key_id, data: row.secret_enc }, secretAad(row.user_id));
}

/** Starts (or restarts) enrolment: a fresh secret, not in use until a code from it is confirmed. */
export async function enrolTotp(deps: MfaDeps, user: { id: number; username: string }) {
  const secret = newSecret();
  const sealed = seal(deps.config.encryptionKeys, Buffer.from(secret.bytes), secretAad(user.id));
  if (!(await repo.upsertPending(deps.db, user.id, sealed))) throw new AppError('conflict', ALREADY_ON);
  return { secret: secret.base32, otpauth_uri: otpauthUri(secret, deps.config.JWT_ISSUER, user.username) };
}

/**
 * Turns two-factor sign-in on with a code from the new secret; answers the recovery codes, shown
 * once. Turning it on ends every earlier token of the user (the user_mfa_turned_on trigger).
 */
export async function confirmTotp(deps: MfaDeps, user: CodeSender, code: string) {
  const row = await repo.findMfa(deps.db, user.id);
  if (!row) throw new AppError('conflict', 'No enrolment to confirm: start with POST /me/mfa/totp');
  if (row.enabled) throw new AppError('conflict', ALREADY_ON);
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
  const right = await countedCode(deps, attempt(user), async () => {
    const step = matchStep(secretOf(deps, row), code, deps.clock.now());
    if (step === null) return false;
    return deps.db.transaction(async (tx) => {
      // The confirming code's step is taken too, so it cannot also sign in.
      if (!(await repo.takeStep(tx, user.id, step, true))) return false;
      await repo.replaceRecoveryCodes(tx, user.id, codes.map((c) => recoveryCodeHash(user.id, c)!));
      return true;
    });
  });
  if (!right) throw new AppError('bad_request', INVALID_CODE);
  return { recovery_codes: codes };
}

/**
 * Takes a TOTP code (once) or spends a recovery code, under the user's failure count; null when
 * neither. Spending a recovery code ends every earlier token of the user (a trigger).
 */
async function takeCode(deps: MfaDeps, row: repo.MfaRow, user: CodeSender, code: string): Promise<'totp' | 'recovery' | null> {
  let taken: 'totp' | 'recovery' | null = null;
  await countedCode(deps, attempt(user), async () => {
    const step = matchStep(secretOf(deps, row), code.trim(), deps.clock.now());
    if (step !== null) {
      if (await repo.takeStep(deps.db, row.user_id, step, false)) taken = 'totp';
    } else {
      const hash = recoveryCodeHash(row.user_id, code);
      if (hash !== null && (await repo.useRecoveryCode(deps.db, row.user_id, hash))) taken = 'recovery';
    }
    return taken !== null;
  });
  return taken;
}

/**
 * Turns two-factor sign-in off; the caller has proven the current password already. Ends every
 * earlier token of the user (the user_mfa_turned_off trigger).
 */
export async function disableTotp(deps: MfaDeps, user: CodeSender & { role: string }, code: string): Promise<void> {
  const row = await repo.findMfa(deps.db, user.id);
  if (!row?.enabled) throw new AppError('conflict', NOT_ON);
  if (roles.may(user.role, 'administer_organisation') && user.orgId !== null && (await organisationSettings(deps.db, user.orgId)).require_mfa) {
    throw new AppError('forbidden', 'Your organisation requires two-factor sign-in for administrators', { extra: { code: 'mfa_required_by_organisation' } });
  }
  if (!(await takeCode(deps, row, user, code))) throw new AppError('bad_request', INVALID_CODE);
  await repo.deleteMfa(deps.db, user.id);
}

/**
 * The second factor at sign-in, once the password is proven: `off` when the user has not turned
 * it on, `missing` without a code, `wrong` for a code that is not (or no longer) good, `recovery`
 * for a recovery code spent (the user's earlier tokens have just ended). A code counts towards the
 * user's failures like any other (429 past the count).
 */
export async function checkSignInCode(deps: MfaDeps, user: CodeSender, code: string | undefined): Promise<'off' | 'ok' | 'recovery' | 'missing' | 'wrong'> {
  const row = await repo.findMfa(deps.db, user.id);
  if (!row?.enabled) return 'off';
  if (code === undefined || code.trim() === '') return 'missing';
  const taken = await takeCode(deps, row, user, code);
  return taken === 'totp' ? 'ok' : taken ?? 'wrong';
}

/** Whether the user has two-factor sign-in on (a sign-in that cannot carry a code is then refused). */
export async function mfaIsOn(db: DatabasePool, userId: number): Promise<boolean> {
  return (await repo.findMfa(db, userId))?.enabled === true;
}

/** The operator's way out for a user who lost the authenticator and the recovery codes. */
export async function resetMfa(db: DatabasePool, userId: number): Promise<void> {
  await repo.deleteMfa(db, userId);
}
