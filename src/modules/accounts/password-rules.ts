import { AppError } from '../../lib/errors.ts';

export const MIN_PASSWORD_LENGTH = 8;
// A username this short ("al") would forbid too many passwords by mere containment; it must still
// not be the whole password.
const MIN_CONTAINED_USERNAME = 3;

/**
 * NFKC (full-width and compatibility forms become their plain letters) and a case fold (upper then
 * lower, so `ß` meets `ss`): `ＢＥＲＴ` and `Bert` are the same text to the rules below.
 */
export function foldForComparison(s: string): string {
  return s.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}

/**
 * The rules a chosen password must meet, each refused with a detail naming it. "Not the current
 * one" needs the stored hash, so the caller checks it (see passwords.service.ts).
 */
export function checkNewPassword(newPassword: string, username: string): void {
  // Control characters (NUL, line breaks, tab, escape...) cannot be typed reliably and hide what a
  // password is compared with.
  if (/\p{Cc}/u.test(newPassword)) throw new AppError('bad_request', 'New password must not contain control characters');
  if ([...newPassword].length < MIN_PASSWORD_LENGTH) throw new AppError('bad_request', `New password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  const password = foldForComparison(newPassword).trim();
  const name = foldForComparison(username).trim();
  if (password === name) throw new AppError('bad_request', 'New password must not be the username');
  if ([...name].length >= MIN_CONTAINED_USERNAME && password.includes(name)) throw new AppError('bad_request', 'New password must not contain the username');
}

export const SAME_AS_CURRENT = 'New password must not be the current password';
