import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { PersonRecord } from './person.ts';
import type { VerificationQuery } from './verification.schemas.ts';

// A verification's subject hash: HMAC-SHA256 (SUBJECT_HASH_KEY) of the NIN it concerns. It lets an
// operator find every verification of one person (subject:export, subject:erase) without the NIN
// being kept; without the key, a hash cannot be tested against the small space of NINs.

const keys = new Map<string, KeyObject>();

export function subjectHash(key: string, nin: string): Buffer {
  let k = keys.get(key);
  if (!k) keys.set(key, (k = createSecretKey(Buffer.from(key, 'utf8'))));
  return createHmac('sha256', k).update(nin, 'utf8').digest();
}

/**
 * A NIN lookup (and a match by NIN) concerns the NIN asked for, whatever the answer; other modes
 * (phone, demography, vNIN) are known only once found, from the record's NIN.
 */
export function subjectOfQuery(key: string, q: VerificationQuery): Buffer | null {
  if (q.mode === 'nin') return subjectHash(key, q.nin);
  if ((q.mode === 'match' || q.mode === 'face') && 'nin' in q) return subjectHash(key, q.nin);
  return null;
}

/** The NIN of the record the authority returned; none when it carried no NIN. */
export function subjectOfRecord(key: string, record: PersonRecord): Buffer | null {
  return record.nin ? subjectHash(key, record.nin) : null;
}
