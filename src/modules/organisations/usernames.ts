import { z } from 'zod';

/**
 * What a username may be. Usernames reach the team list, the platform page and the reset e-mail,
 * where a line break, a bidirectional override or an invisible character changes what a person
 * reads, and a look-alike (`аdmin` with a Cyrillic `а`) passes for someone else. New usernames are
 * NFKC-normalised (full-width and compatibility forms become the plain letters) and lower-cased.
 */
export const USERNAME_RULES = {
  control: 'must not contain line breaks or other control characters',
  bidi: 'must not contain bidirectional control characters',
  invisible: 'must not contain zero-width or other invisible formatting characters',
  mixedScripts: 'must not mix Latin letters with Cyrillic or Greek ones',
} as const;

const CONTROL = /\p{Cc}/u;
// Marks, embeddings, overrides and isolates (U+200E-F, U+202A-E, U+2066-9, U+061C).
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
// Every other format character: zero-width space, joiners, word joiner, BOM, soft hyphen...
const FORMAT = /\p{Cf}/u;
const SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u];

export function normaliseUsername(raw: string): string {
  return raw.normalize('NFKC').trim().toLowerCase().normalize('NFKC');
}

/** Every rule the username breaks (empty when it is acceptable), checked before and after NFKC. */
export function usernameProblems(raw: string): string[] {
  const problems: string[] = [];
  const normalised = normaliseUsername(raw);
  const both = (re: RegExp) => re.test(raw) || re.test(normalised);
  if (both(CONTROL)) problems.push(USERNAME_RULES.control);
  if (both(BIDI)) problems.push(USERNAME_RULES.bidi);
  else if (both(FORMAT)) problems.push(USERNAME_RULES.invisible);
  if (SCRIPTS.filter((re) => re.test(normalised)).length > 1) problems.push(USERNAME_RULES.mixedScripts);
  return problems;
}

/** A new username: 400 naming the first rule it breaks (parseInput: `username: <rule>`), else normalised. */
export const usernameSchema = z
  .string()
  .max(1024, 'is too long')
  .superRefine((raw, ctx) => {
    const [problem] = usernameProblems(raw);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .overwrite(normaliseUsername)
  .min(1, 'must not be empty')
  .max(254, 'is too long');
