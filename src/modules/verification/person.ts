import { z } from 'zod';

/**
 * The normalised person record (README: the person record). Every verification mode (NIN, phone, demography,
 * fixture) answers with exactly this shape, whatever key variant the upstream used.
 *
 * Absent values are empty strings rather than missing keys or nulls: integrators were promised
 * one schema, and sparse upstream records are normal (absent fields become empty strings).
 */
const DOB_RE = /^\d{2}-\d{2}-\d{4}$/;

export const personRecordSchema = z.strictObject({
  // Phone and demography lookups may not carry a NIN, hence the empty string.
  nin: z.string().regex(/^(\d{11})?$/),
  fname: z.string(),
  mname: z.string(),
  lname: z.string(),
  dob: z.string().refine((v) => v === '' || DOB_RE.test(v), 'dob must be dd-mm-yyyy'),
  gender: z.string().regex(/^[MF]?$/),
  phone: z.string().regex(/^(0[1-9]\d{9})?$/),
  residenceAdress: z.string(),
  residenceTown: z.string(),
  residenceLga: z.string(),
  residenceState: z.string(),
  stateOfOrigin: z.string(),
  lgaOfOrigin: z.string(),
  image: z.string(),
  transaction_id: z.string(),
});

export type PersonRecord = z.infer<typeof personRecordSchema>;

/** Upstream key variants folded into each field, in order of preference. */
const ALIASES = {
  nin: ['nin', 'NIN', 'identityNumber'],
  fname: ['firstname', 'firstName', 'fname'],
  mname: ['middlename', 'middleName', 'mname'],
  lname: ['surname', 'lastName', 'lname'],
  dob: ['dateOfBirth', 'birthdate', 'dob'],
  gender: ['gender'],
  phone: ['telephoneno', 'mobile', 'phone', 'phone1'],
  residenceAdress: ['residence_AdressLine1', 'address'],
  residenceTown: ['town', 'city'],
  residenceLga: ['residence_lga', 'lga'],
  residenceState: ['state'],
  stateOfOrigin: ['self_origin_state', 'birthState'],
  lgaOfOrigin: ['self_origin_lga', 'birthLga'],
  image: ['photo', 'image'],
  transaction_id: ['transaction_id', 'transactionId', 'trackingId'],
} as const satisfies Record<keyof PersonRecord, readonly string[]>;

function text(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return '';
}

/** First alias holding a non-empty value: some upstreams send `"middlename": ""` next to `"mname": "Ada"`. */
function pick(raw: Record<string, unknown>, keys: readonly string[]): string {
  for (const key of keys) {
    const value = text(raw[key]);
    if (value !== '') return value;
  }
  return '';
}

function collapseSpaces(value: string): string {
  return value.replace(/\s+/g, ' ');
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

function formatDate(day: number, month: number, year: number): string {
  if (month < 1 || month > 12 || day < 1 || year < 1000) return '';
  // Day 0 of the next month is the last day of this one; this also settles leap years.
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return '';
  return `${String(day).padStart(2, '0')}-${String(month).padStart(2, '0')}-${year}`;
}

/**
 * Converts the date forms upstreams send into our single documented output form, dd-mm-yyyy.
 * Ambiguous or impossible dates give "" rather than a guess: a wrong date of birth is worse
 * than a missing one on an identity record.
 */
export function normaliseDob(value: unknown): string {
  const s = text(value);
  let m = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(s);
  // The calendar date as written, not shifted by the offset: a birth date has no time zone.
  if (m) return formatDate(Number(m[3]), Number(m[2]), Number(m[1]));
  m = /^(\d{1,2})([-/])(\d{1,2})\2(\d{4})$/.exec(s);
  if (m) return formatDate(Number(m[1]), Number(m[3]), Number(m[4]));
  m = /^(\d{1,2})([- ])([A-Za-z]{3})\2(\d{4})$/.exec(s);
  if (m) {
    const month = MONTHS.indexOf((m[3] ?? '').toLowerCase()) + 1;
    return month === 0 ? '' : formatDate(Number(m[1]), month, Number(m[4]));
  }
  return '';
}

export function normaliseGender(value: unknown): string {
  const s = text(value).toLowerCase();
  if (s === 'm' || s === 'male') return 'M';
  if (s === 'f' || s === 'female') return 'F';
  return '';
}

/** Nigerian national format: 11 digits starting with 0, from local, 234 or +234 forms. */
export function normalisePhone(value: unknown): string {
  const s = text(value).replace(/[\s().-]/g, '');
  const m = /^(?:\+?234|0)?([1-9]\d{9})$/.exec(s);
  return m ? `0${m[1]}` : '';
}

// JPEG, PNG, GIF and WebP (RIFF) signatures, as they begin in base64.
const IMAGE_SIGNATURES = ['/9j/', 'iVBORw0KGgo', 'R0lGOD', 'UklGR'];

/**
 * Bare base64: upstreams disagree on whether to send a data-URI prefix, integrators want none.
 * Only a well-formed base64 picture passes: a placeholder such as "BASE 64 IMAGE" (in one provider's
 * published example) or a truncated "/9j/4AAQ..." becomes no photo rather than a broken one.
 */
export function normaliseImage(value: unknown): string {
  const bare = text(value)
    .replace(/^data:image\/[a-z+.-]+;base64,/i, '')
    .replace(/\s+/g, '')
    // The URL-safe alphabet and missing padding are both still a picture: written the standard way.
    .replace(/-/g, '+')
    .replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(bare) || bare.length % 4 === 1) return '';
  const s = bare.includes('=') ? bare : bare.padEnd(Math.ceil(bare.length / 4) * 4, '=');
  return s.length % 4 === 0 && IMAGE_SIGNATURES.some((sig) => s.startsWith(sig)) ? s : '';
}

function normaliseNin(value: string): string {
  const s = value.replace(/\s+/g, '');
  return /^\d{11}$/.test(s) ? s : '';
}

export function normalisePerson(raw: Record<string, unknown>, fallback: { transactionId?: string } = {}): PersonRecord {
  const get = (field: keyof PersonRecord): string => pick(raw, ALIASES[field]);
  return {
    nin: normaliseNin(get('nin')),
    fname: collapseSpaces(get('fname')),
    mname: collapseSpaces(get('mname')),
    lname: collapseSpaces(get('lname')),
    dob: normaliseDob(get('dob')),
    gender: normaliseGender(get('gender')),
    phone: normalisePhone(get('phone')),
    residenceAdress: collapseSpaces(get('residenceAdress')),
    residenceTown: collapseSpaces(get('residenceTown')),
    residenceLga: collapseSpaces(get('residenceLga')),
    residenceState: collapseSpaces(get('residenceState')),
    stateOfOrigin: collapseSpaces(get('stateOfOrigin')),
    lgaOfOrigin: collapseSpaces(get('lgaOfOrigin')),
    image: normaliseImage(get('image')),
    transaction_id: get('transaction_id') || (fallback.transactionId ?? '').trim(),
  };
}
