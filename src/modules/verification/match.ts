import { distance } from 'fastest-levenshtein';
import type { PersonRecord } from './person.ts';

/** A name matches at or above this similarity (0-100). */
export const NAME_MATCH_SCORE = 90;

/** What a match-only verification asks: the typed details to compare (the identifier is looked up elsewhere). */
export type MatchClaims = { fname: string; lname: string; dob?: string; gender?: 'm' | 'f'; phone?: string };

/** All that is kept of a match-only verification: booleans and scores, never the record. */
export type MatchOutcome = {
  match: { fname: boolean; lname: boolean; dob?: boolean; gender?: boolean; phone?: boolean };
  scores: { fname: number; lname: number };
  all_match: boolean;
};

/**
 * Case-, accent- and separator-insensitive form of a name: compatibility decomposition splits
 * "é" and "ọ̀" into a base letter and combining marks, the marks (every \p{M}) are dropped, then
 * spaces and hyphens, so "Adébáyọ̀-Okafor", "adebayo okafor" and "ADEBAYOOKAFOR" are one name.
 */
export function foldName(name: string): string {
  return name.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[\s\-‐‑–—]/gu, '');
}

/** Similarity 0-100: the Levenshtein distance over the longer name's length, rounded down. */
export function nameScore(typed: string, recorded: string): number {
  const a = foldName(typed);
  const b = foldName(recorded);
  if (a === '' || b === '') return 0;
  return Math.floor(100 * (1 - distance(a, b) / Math.max(a.length, b.length)));
}

// Nigerian numbers are written 0803..., 234803... or +234803...: the last ten digits identify the line.
function phoneKey(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  return digits.length >= 10 ? digits.slice(-10) : digits;
}

/**
 * Compares what the caller typed with the record the authority returned. A first name also matches
 * the recorded first and middle names together (people type both). Fields that were not sent are
 * absent from `match`; `all_match` is true when every compared field matched.
 */
export function compareClaims(claims: MatchClaims, record: PersonRecord): MatchOutcome {
  const fname = Math.max(nameScore(claims.fname, record.fname), record.mname ? nameScore(claims.fname, `${record.fname} ${record.mname}`) : 0);
  const lname = nameScore(claims.lname, record.lname);
  const match: MatchOutcome['match'] = { fname: fname >= NAME_MATCH_SCORE, lname: lname >= NAME_MATCH_SCORE };
  if (claims.dob !== undefined) match.dob = record.dob !== '' && claims.dob === record.dob;
  if (claims.gender !== undefined) match.gender = record.gender !== '' && record.gender.toLowerCase().startsWith(claims.gender);
  if (claims.phone !== undefined) match.phone = record.phone !== '' && phoneKey(claims.phone) === phoneKey(record.phone);
  return { match, scores: { fname, lname }, all_match: Object.values(match).every(Boolean) };
}
