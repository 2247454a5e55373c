import { createHash } from 'node:crypto';
import { portraitOf } from './faces.ts';
import { PHOTOS } from './photos.ts';

/**
 * Deterministic fake people. Everything about a person follows from a seeded PRNG, so the same
 * NIN (or phone, or demographic query) gives the same person on every run and every machine;
 * only the per-answer transaction id is fresh.
 *
 * Each person is answered in one of four upstream key variants (the aliases the normaliser folds), picked from
 * the same seed, so that the normaliser meets every alias against a real server.
 */
export type Variant = 'A' | 'B' | 'C' | 'D';

export interface SimDate {
  day: number;
  month: number;
  year: number;
}

/** Canonical form; "" means the upstream has no value for it. */
export interface SimPerson {
  nin: string;
  firstName: string;
  middleName: string;
  lastName: string;
  dob: SimDate;
  gender: 'm' | 'f';
  phone: string;
  address: string;
  town: string;
  lga: string;
  state: string;
  originState: string;
  originLga: string;
  photo: string;
  variant: Variant;
}

type Random = () => number;

/** sfc32 seeded from SHA-256 of the text: small, fast and identical on every platform. */
function seeded(text: string): Random {
  const h = createHash('sha256').update(text).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  return () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

function pick<T>(r: Random, items: readonly T[]): T {
  const item = items[Math.floor(r() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

function digits(r: Random, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String(Math.floor(r() * 10));
  return out;
}

const FEMALE = ['Adaeze', 'Ngozi', 'Funmilayo', 'Aisha', 'Zainab', 'Chiamaka', 'Folake', 'Amaka', 'Hauwa', 'Yetunde', 'Nkechi', 'Temitope', 'Fatima', 'Ifeoma', 'Kemi', 'Halima', 'Oluchi', 'Bukola', 'Amina', 'Titilayo'];
const MALE = ['Chinedu', 'Emeka', 'Tunde', 'Olumide', 'Ibrahim', 'Musa', 'Abubakar', 'Segun', 'Obinna', 'Ifeanyi', 'Babatunde', 'Kelechi', 'Yusuf', 'Chukwuma', 'Adewale', 'Nnamdi', 'Aliyu', 'Femi', 'Uche', 'Sani'];
const MIDDLE = ['Oluwaseun', 'Chukwudi', 'Adebayo', 'Ifeoluwa', 'Chinonso', 'Abdullahi', 'Oluwatobi', 'Ebuka', 'Olamide', 'Somtochukwu', 'Ayodele', 'Kayode', 'Nneka', 'Hadiza'];
const SURNAMES = ['Okafor', 'Adeyemi', 'Bello', 'Okonkwo', 'Balogun', 'Eze', 'Abdullahi', 'Olawale', 'Nwosu', 'Usman', 'Adeleke', 'Ogunleye', 'Ibrahim', 'Chukwu', 'Danjuma', 'Oyelaran', 'Obi', 'Lawal', 'Akinola', 'Nnadi'];
const STREETS = ['Adeola Odeku Street', 'Awolowo Road', 'Herbert Macaulay Way', 'Ogui Road', 'Aminu Kano Crescent', 'Ahmadu Bello Way', 'Allen Avenue', 'Old Aba Road', 'Zik Avenue', 'Sokoto Road', 'Ring Road', 'Bode Thomas Street'];

interface Place {
  state: string;
  lgas: readonly { lga: string; towns: readonly string[] }[];
}

const PLACES: readonly Place[] = [
  { state: 'Lagos', lgas: [{ lga: 'Ikeja', towns: ['Ikeja', 'Alausa'] }, { lga: 'Surulere', towns: ['Surulere', 'Ojuelegba'] }, { lga: 'Eti-Osa', towns: ['Lekki', 'Ajah'] }, { lga: 'Alimosho', towns: ['Egbeda', 'Ikotun'] }] },
  { state: 'Oyo', lgas: [{ lga: 'Ibadan North', towns: ['Bodija', 'Agodi'] }, { lga: 'Ogbomosho North', towns: ['Ogbomosho'] }, { lga: 'Oyo West', towns: ['Oyo'] }] },
  { state: 'Kano', lgas: [{ lga: 'Nassarawa', towns: ['Bompai'] }, { lga: 'Fagge', towns: ['Fagge'] }, { lga: 'Kano Municipal', towns: ['Kano'] }] },
  { state: 'Enugu', lgas: [{ lga: 'Enugu North', towns: ['Ogui', 'Asata'] }, { lga: 'Nsukka', towns: ['Nsukka'] }, { lga: 'Udi', towns: ['Udi'] }] },
  { state: 'Anambra', lgas: [{ lga: 'Onitsha North', towns: ['Onitsha'] }, { lga: 'Awka South', towns: ['Awka'] }, { lga: 'Nnewi North', towns: ['Nnewi'] }] },
  { state: 'Rivers', lgas: [{ lga: 'Port Harcourt', towns: ['Diobu', 'D-Line'] }, { lga: 'Obio/Akpor', towns: ['Rumuokoro', 'Rumuola'] }] },
  { state: 'FCT', lgas: [{ lga: 'Abuja Municipal', towns: ['Garki', 'Wuse'] }, { lga: 'Bwari', towns: ['Kubwa'] }] },
  { state: 'Kaduna', lgas: [{ lga: 'Kaduna North', towns: ['Malali'] }, { lga: 'Zaria', towns: ['Zaria'] }] },
  { state: 'Edo', lgas: [{ lga: 'Oredo', towns: ['Benin City'] }, { lga: 'Esan West', towns: ['Ekpoma'] }] },
  { state: 'Ogun', lgas: [{ lga: 'Abeokuta South', towns: ['Abeokuta'] }, { lga: 'Ijebu Ode', towns: ['Ijebu Ode'] }] },
  { state: 'Delta', lgas: [{ lga: 'Warri South', towns: ['Warri'] }, { lga: 'Oshimili South', towns: ['Asaba'] }] },
  { state: 'Imo', lgas: [{ lga: 'Owerri Municipal', towns: ['Owerri'] }] },
];

const VARIANTS: readonly Variant[] = ['A', 'B', 'C', 'D'];

/** Phones the simulator knows: 0, then 7-9, then 0-1, then 8 digits (e.g. 08031234567). */
export const KNOWN_PHONE = /^0[7-9][01]\d{8}$/;

// A reversible digit scramble between a known phone and a NIN starting with 2. Reversible so a
// NIN lookup of a phone-derived NIN shows the same phone again, with no stored state.
const PHONE_KEY = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3];

export function ninForPhone(phone: string): string {
  const scrambled = [...phone.slice(1)].map((ch, i) => (Number(ch) + (PHONE_KEY[i] ?? 0)) % 10);
  return `2${scrambled.reverse().join('')}`;
}

function phoneForNin(nin: string): string | undefined {
  if (!nin.startsWith('2')) return undefined;
  const plain = [...nin.slice(1)]
    .reverse()
    .map((ch, i) => (Number(ch) - (PHONE_KEY[i] ?? 0) + 10) % 10)
    .join('');
  const phone = `0${plain}`;
  return KNOWN_PHONE.test(phone) ? phone : undefined;
}

interface Overrides {
  nin: string;
  firstName?: string;
  lastName?: string;
  dob?: SimDate;
  gender?: 'm' | 'f';
  linkedPhone?: string | undefined;
}

function generate(r: Random, o: Overrides): SimPerson {
  // Every draw happens in the same order whatever the branches, so adding an override never
  // reshuffles the rest of the person.
  const drawnGender: 'm' | 'f' = r() < 0.5 ? 'f' : 'm';
  const gender = o.gender ?? drawnGender;
  const drawnFirst = pick(r, gender === 'f' ? FEMALE : MALE);
  const middle = pick(r, MIDDLE);
  const drawnLast = pick(r, SURNAMES);
  const drawnDob = { year: 1950 + Math.floor(r() * 56), month: 1 + Math.floor(r() * 12), day: 1 + Math.floor(r() * 28) };
  const residence = pick(r, PLACES);
  const residenceLga = pick(r, residence.lgas);
  const town = pick(r, residenceLga.towns);
  const address = `${1 + Math.floor(r() * 120)} ${pick(r, STREETS)}`;
  const origin = pick(r, PLACES);
  const originLga = pick(r, origin.lgas).lga;
  const drawnPhone = `0${pick(r, ['70', '80', '81', '90', '91'])}${digits(r, 8)}`;
  const photo = pick(r, PHOTOS);
  const variant = pick(r, VARIANTS);
  const shape = r();
  const sparse = shape < 0.2;
  const noMiddle = shape < 0.35;

  return {
    nin: o.nin,
    firstName: o.firstName ?? drawnFirst,
    middleName: noMiddle ? '' : middle,
    lastName: o.lastName ?? drawnLast,
    dob: o.dob ?? drawnDob,
    gender,
    // A phone-linked person always shows its phone: the phone lookup found them by it.
    phone: o.linkedPhone ?? (sparse ? '' : drawnPhone),
    address,
    town: sparse ? '' : town,
    lga: residenceLga.lga,
    state: residence.state,
    originState: origin.state,
    originLga,
    photo: sparse ? '' : photo,
    variant,
  };
}

/** Any 11-digit NIN; the caller decides which NINs exist. */
export function personForNin(nin: string): SimPerson {
  // The face match sandbox's people: a real portrait and that person's name (faces.ts).
  const portrait = portraitOf(nin);
  if (portrait) {
    const p = generate(seeded(`nin:${nin}`), { nin, linkedPhone: phoneForNin(nin), firstName: portrait.firstName, lastName: portrait.lastName, gender: portrait.gender });
    return { ...p, photo: portrait.reference, middleName: '' };
  }
  return generate(seeded(`nin:${nin}`), { nin, linkedPhone: phoneForNin(nin) });
}

/** The person behind a known phone, identical to the NIN lookup of ninForPhone(phone). */
export function personForPhone(phone: string): SimPerson {
  return personForNin(ninForPhone(phone));
}

/**
 * A person matching a demographic query, echoing the queried names, dob and gender. Its NIN is
 * derived from the query; a NIN lookup of that NIN yields a different generated person, because
 * names cannot be recovered from a NIN without stored state.
 */
export function personForDemography(q: { firstName: string; lastName: string; dob: SimDate; gender: 'm' | 'f' }): SimPerson {
  const key = [q.firstName.toLowerCase(), q.lastName.toLowerCase(), formatDmy(q.dob), q.gender].join('|');
  const r = seeded(`demography:${key}`);
  // Never 0 (not found), 2 (phone-linked) or 5 (fault triggers) as first digit.
  const nin = pick(r, ['1', '3', '4', '6', '7', '8', '9']) + digits(r, 10);
  return generate(r, { nin, firstName: q.firstName, lastName: q.lastName, dob: q.dob, gender: q.gender });
}

const MONTH_ABBR = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

export function formatDmy(d: SimDate): string {
  return `${pad(d.day)}-${pad(d.month)}-${d.year}`;
}

/** The upstream record as the chosen variant spells it. */
export function rawRecord(p: SimPerson, transactionId: string): Record<string, unknown> {
  const ymd = `${d4(p.dob.year)}-${pad(p.dob.month)}-${pad(p.dob.day)}`;
  switch (p.variant) {
    // NIMC-style keys; absent values as empty strings.
    case 'A':
      return {
        nin: p.nin,
        firstname: p.firstName,
        middlename: p.middleName,
        surname: p.lastName,
        birthdate: formatDmy(p.dob),
        gender: p.gender,
        telephoneno: p.phone,
        residence_AdressLine1: p.address,
        town: p.town,
        residence_lga: p.lga,
        state: p.state,
        self_origin_state: p.originState,
        self_origin_lga: p.originLga,
        photo: p.photo,
        birthcountry: 'nigeria',
        trackingId: transactionId,
      };
    // camelCase keys; absent values left out; 234-form phone; data-URI photo.
    case 'B':
      return omitEmpty({
        nin: p.nin,
        firstName: p.firstName,
        middleName: p.middleName,
        lastName: p.lastName,
        dateOfBirth: ymd,
        gender: p.gender === 'f' ? 'Female' : 'Male',
        mobile: p.phone === '' ? '' : `234${p.phone.slice(1)}`,
        address: p.address,
        city: p.town,
        lga: p.lga,
        state: p.state,
        birthState: p.originState,
        birthLga: p.originLga,
        photo: p.photo === '' ? '' : `data:image/jpeg;base64,${p.photo}`,
        transactionId,
      });
    // Short keys; absent values as null; dd-Mon-yyyy; +234 phone.
    case 'C':
      return {
        NIN: p.nin,
        fname: p.firstName,
        mname: p.middleName === '' ? null : p.middleName,
        lname: p.lastName,
        dob: `${pad(p.dob.day)}-${MONTH_ABBR[p.dob.month - 1] ?? ''}-${p.dob.year}`,
        gender: p.gender.toUpperCase(),
        phone1: p.phone === '' ? null : `+234${p.phone.slice(1)}`,
        residence_AdressLine1: p.address,
        city: p.town === '' ? null : p.town,
        lga: p.lga,
        state: p.state,
        birthState: p.originState,
        self_origin_lga: p.originLga,
        image: p.photo === '' ? null : p.photo,
        transaction_id: transactionId,
      };
    // Mixed keys; ISO datetime dob; 10-digit phone without the leading 0.
    case 'D':
      return omitEmpty({
        identityNumber: p.nin,
        firstname: p.firstName,
        middleName: p.middleName,
        lastName: p.lastName,
        dateOfBirth: `${ymd}T00:00:00Z`,
        gender: p.gender === 'f' ? 'female' : 'male',
        phone: p.phone.slice(1),
        address: p.address,
        town: p.town,
        residence_lga: p.lga,
        state: p.state,
        self_origin_state: p.originState,
        birthLga: p.originLga,
        photo: p.photo,
        transactionId,
      });
  }
}

function d4(year: number): string {
  return String(year).padStart(4, '0');
}

function omitEmpty(record: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== ''));
}
