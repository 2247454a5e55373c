import { AppError } from '../../lib/errors.ts';

export const MIN_PASSWORD_LENGTH = 8;

/**
 * The rules a chosen password must meet, each refused with a detail naming it. "Not the current
 * one" needs the stored hash, so the caller checks it (see passwords.service.ts).
 */
export function checkNewPassword(newPassword: string, username: string): void {
  if ([...newPassword].length < MIN_PASSWORD_LENGTH) throw new AppError('bad_request', `New password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (newPassword.trim().toLowerCase() === username.toLowerCase()) throw new AppError('bad_request', 'New password must not be the username');
}

export const SAME_AS_CURRENT = 'New password must not be the current password';
