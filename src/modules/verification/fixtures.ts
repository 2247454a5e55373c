import { readFileSync } from 'node:fs';
import type { VninRefusal } from '../../adapters/identity-authority/index.ts';
import type { PersonRecord } from './person.ts';
import type { VerificationQuery } from './verification.schemas.ts';

/**
 * Reserved test-mode NINs (README: Fixture NINs). They never reach the upstream authority, so their records
 * live here, already normalised. The people are invented.
 */
export const FIXTURE_NINS = ['12345678901', '12345678902', '12345678903', '99999999999'] as const;

export type FixtureNin = (typeof FIXTURE_NINS)[number];

export type FixtureOutcome = { kind: 'found'; record: PersonRecord } | { kind: 'not_found'; refusal?: VninRefusal };

/** A real 8x8 baseline JPEG (310 bytes): integrators decode the placeholder, so it must be valid. */
const FIXTURE_JPEG_BASE64 =
  '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA0JCgsKCA0LCgsODg0PEyAVExISEyccHhcgLikxMC4pLSwzOko+MzZGNywtQFdBRkxOUlNSMj5aYVpQYEpRUk//' +
  '2wBDAQ4ODhMREyYVFSZPNS01T09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT0//wAARCAAIAAgDASIAAhEBAxEB/8QA' +
  'FQABAQAAAAAAAAAAAAAAAAAAAAT/xAAfEAABAgYDAAAAAAAAAAAAAAAAAhIDBAUTFFEhMXH/xAAUAQEAAAAAAAAAAAAAAAAAAAAE/8QAFREBAQAAAAAAAAAA' +
  'AAAAAAAAAAH/2gAMAwEAAhEDEQA/AJKjOR89S3qs6dx1r0ABoW//2Q==';

const FULL_RECORD: PersonRecord = {
  nin: '12345678901',
  fname: 'Adaeze',
  mname: 'Chioma',
  lname: 'Okonkwo',
  dob: '14-03-1991',
  gender: 'F',
  phone: '08031234567',
  residenceAdress: '12 Bode Thomas Street',
  residenceTown: 'Surulere',
  residenceLga: 'Surulere',
  residenceState: 'Lagos',
  stateOfOrigin: 'Anambra',
  lgaOfOrigin: 'Onitsha North',
  image: FIXTURE_JPEG_BASE64,
  // Stable per fixture so integrators can assert on it.
  transaction_id: 'FIXTURE-TXN-12345678901',
};

const SPARSE_RECORD: PersonRecord = {
  nin: '12345678902',
  fname: 'Ibrahim',
  mname: '',
  lname: 'Musa',
  dob: '02-11-1987',
  gender: 'M',
  phone: '',
  residenceAdress: '',
  residenceTown: '',
  residenceLga: '',
  residenceState: '',
  stateOfOrigin: '',
  lgaOfOrigin: '',
  image: '',
  transaction_id: 'FIXTURE-TXN-12345678902',
};

/**
 * A fixture with a real portrait for face matches: Grace Hopper's passport-style crop (public domain,
 * US Navy; src/simulators/identity-authority/faces/README.md), the photo the simulator gives her NIN.
 */
const PORTRAIT_RECORD: PersonRecord = {
  ...FULL_RECORD,
  nin: '12345678903',
  fname: 'Grace',
  mname: '',
  lname: 'Hopper',
  dob: '09-12-1906',
  phone: '',
  image: readFileSync(new URL('../../simulators/identity-authority/faces/grace-hopper.reference.jpg', import.meta.url)).toString('base64'),
  transaction_id: 'FIXTURE-TXN-12345678903',
};

/** null when the NIN is not a fixture, so the caller goes to the upstream authority. */
export function fixtureOutcome(nin: string): FixtureOutcome | null {
  switch (nin) {
    case '12345678901':
      return { kind: 'found', record: { ...FULL_RECORD } };
    case '12345678902':
      return { kind: 'found', record: { ...SPARSE_RECORD } };
    case '12345678903':
      return { kind: 'found', record: { ...PORTRAIT_RECORD } };
    case '99999999999':
      return { kind: 'not_found' };
    default:
      return null;
  }
}

export function isFixtureNin(nin: string): nin is FixtureNin {
  return (FIXTURE_NINS as readonly string[]).includes(nin);
}

/**
 * Reserved test-mode vNINs (README: vNIN): the full fixture person (the authority giving the NIN),
 * the sparse one as a vNIN answer without a NIN, Grace Hopper with her portrait (a verification link
 * reaches a face comparison with it, free), and two refusals.
 */
export const FIXTURE_VNINS = ['AA000000000001ZZ', 'AA000000000002ZZ', 'AA000000000003ZZ', 'AA000000000009ZZ', 'AA000000000008ZZ'] as const;

export function isFixtureVnin(vnin: string): boolean {
  return (FIXTURE_VNINS as readonly string[]).includes(vnin);
}

export function fixtureVninOutcome(vnin: string): FixtureOutcome | null {
  switch (vnin) {
    case 'AA000000000001ZZ':
      return { kind: 'found', record: { ...FULL_RECORD, transaction_id: 'FIXTURE-TXN-VNIN-0001' } };
    case 'AA000000000002ZZ':
      return { kind: 'found', record: { ...SPARSE_RECORD, nin: '', transaction_id: 'FIXTURE-TXN-VNIN-0002' } };
    case 'AA000000000003ZZ':
      return { kind: 'found', record: { ...PORTRAIT_RECORD, transaction_id: 'FIXTURE-TXN-VNIN-0003' } };
    case 'AA000000000009ZZ':
      return { kind: 'not_found', refusal: 'vnin_not_found' };
    case 'AA000000000008ZZ':
      return { kind: 'not_found', refusal: 'vnin_expired' };
    default:
      return null;
  }
}

/** A query's fixture, if it names one: a match or face verification looks its identifier up like the NIN or vNIN call would. */
export function fixtureOf(query: VerificationQuery): FixtureOutcome | null {
  if ('nin' in query) return fixtureOutcome(query.nin);
  if ('vnin' in query) return fixtureVninOutcome(query.vnin);
  return null;
}
