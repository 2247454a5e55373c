import { describe, expect, it } from 'vitest';
import { FIXTURE_NINS, fixtureOutcome } from '../../src/modules/verification/fixtures.ts';
import {
  normaliseDob,
  normaliseGender,
  normaliseImage,
  normalisePerson,
  normalisePhone,
  personRecordSchema,
  type PersonRecord,
} from '../../src/modules/verification/person.ts';

const FIELDS: (keyof PersonRecord)[] = [
  'nin',
  'fname',
  'mname',
  'lname',
  'dob',
  'gender',
  'phone',
  'residenceAdress',
  'residenceTown',
  'residenceLga',
  'residenceState',
  'stateOfOrigin',
  'lgaOfOrigin',
  'image',
  'transaction_id',
];

const TINY_B64 = '/9j/4AAQSkZJRg==';

describe('normalisePerson', () => {
  const cases: [string, keyof PersonRecord, unknown, string][] = [
    ['nin', 'nin', '12345678901', '12345678901'],
    ['NIN', 'nin', '12345678901', '12345678901'],
    ['identityNumber', 'nin', 12345678901, '12345678901'],
    ['firstname', 'fname', 'Ada', 'Ada'],
    ['firstName', 'fname', 'Ada', 'Ada'],
    ['fname', 'fname', 'Ada', 'Ada'],
    ['middlename', 'mname', 'Chioma', 'Chioma'],
    ['middleName', 'mname', 'Chioma', 'Chioma'],
    ['mname', 'mname', 'Chioma', 'Chioma'],
    ['surname', 'lname', 'Obi', 'Obi'],
    ['lastName', 'lname', 'Obi', 'Obi'],
    ['lname', 'lname', 'Obi', 'Obi'],
    ['dateOfBirth', 'dob', '1990-05-14', '14-05-1990'],
    ['birthdate', 'dob', '14-05-1990', '14-05-1990'],
    ['dob', 'dob', '14 May 1990', '14-05-1990'],
    ['gender', 'gender', 'female', 'F'],
    ['telephoneno', 'phone', '08031234567', '08031234567'],
    ['mobile', 'phone', '2348031234567', '08031234567'],
    ['phone', 'phone', '8031234567', '08031234567'],
    ['phone1', 'phone', '+2348031234567', '08031234567'],
    ['residence_AdressLine1', 'residenceAdress', '12 Bode Thomas Street', '12 Bode Thomas Street'],
    ['address', 'residenceAdress', '12 Bode Thomas Street', '12 Bode Thomas Street'],
    ['town', 'residenceTown', 'Surulere', 'Surulere'],
    ['city', 'residenceTown', 'Surulere', 'Surulere'],
    ['residence_lga', 'residenceLga', 'Surulere', 'Surulere'],
    ['lga', 'residenceLga', 'Surulere', 'Surulere'],
    ['state', 'residenceState', 'Lagos', 'Lagos'],
    ['self_origin_state', 'stateOfOrigin', 'Anambra', 'Anambra'],
    ['birthState', 'stateOfOrigin', 'Anambra', 'Anambra'],
    ['self_origin_lga', 'lgaOfOrigin', 'Onitsha North', 'Onitsha North'],
    ['birthLga', 'lgaOfOrigin', 'Onitsha North', 'Onitsha North'],
    ['photo', 'image', TINY_B64, TINY_B64],
    ['image', 'image', `data:image/jpeg;base64,${TINY_B64}`, TINY_B64],
    ['transaction_id', 'transaction_id', 'T-1', 'T-1'],
    ['transactionId', 'transaction_id', 'T-1', 'T-1'],
    ['trackingId', 'transaction_id', 'T-1', 'T-1'],
  ];

  it.each(cases)('When the upstream sends %s, then it folds into %s', (alias, field, value, expected) => {
    const record = normalisePerson({ [alias]: value });
    expect(record[field]).toBe(expected);
    for (const other of FIELDS.filter((f) => f !== field)) expect(record[other]).toBe('');
    expect(personRecordSchema.safeParse(record).success).toBe(true);
  });

  it('When the raw record is empty or sparse, then every field is an empty string', () => {
    const empty = normalisePerson({});
    expect(Object.keys(empty).sort()).toEqual([...FIELDS].sort());
    for (const field of FIELDS) expect(empty[field]).toBe('');

    const sparse = normalisePerson({ firstname: 'Ada', middlename: null, telephoneno: '', photo: undefined, town: {} });
    expect(sparse).toMatchObject({ fname: 'Ada', mname: '', phone: '', image: '', residenceTown: '' });
    expect(personRecordSchema.parse(sparse)).toEqual(sparse);
  });

  it('When values carry surrounding or repeated spaces, then they are trimmed', () => {
    const record = normalisePerson({ firstname: '  Ada  ', surname: ' Obi\t', address: ' 12  Bode   Thomas St ' });
    expect(record).toMatchObject({ fname: 'Ada', lname: 'Obi', residenceAdress: '12 Bode Thomas St' });
  });

  it('When two aliases are present and the first is empty, then the non-empty one wins', () => {
    expect(normalisePerson({ middlename: '', mname: 'Chioma' }).mname).toBe('Chioma');
  });

  it('When a value is a non-string primitive, then it is stringified', () => {
    const record = normalisePerson({ firstname: 42, surname: true, nin: 12345678901 });
    expect(record).toMatchObject({ fname: '42', lname: 'true', nin: '12345678901' });
  });

  it('When the upstream sends no transaction id, then the fallback is used', () => {
    expect(normalisePerson({}, { transactionId: 'FALLBACK' }).transaction_id).toBe('FALLBACK');
    expect(normalisePerson({ trackingId: 'UP-1' }, { transactionId: 'FALLBACK' }).transaction_id).toBe('UP-1');
  });

  it('When the NIN is not 11 digits, then it becomes empty', () => {
    expect(normalisePerson({ nin: '1234' }).nin).toBe('');
  });
});

describe('normaliseImage', () => {
  it('When the photo is a placeholder, a truncated picture or not an image, then there is no photo; a real one passes', () => {
    for (const bad of ['BASE 64 IMAGE', '/9j/4AAQSkZJRg...', '/9j/4AAQSkZJRg=', 'SGVsbG8gd29ybGQ=', 'not base64!']) expect(normaliseImage(bad), bad).toBe('');
    expect(normaliseImage(`data:image/png;base64,iVBORw0KGgo=`)).toBe('iVBORw0KGgo=');
    expect(normaliseImage(TINY_B64)).toBe(TINY_B64);
    // Line breaks, a missing padding and the URL-safe alphabet are the same picture.
    expect(normaliseImage('/9j/4AAQ\nSkZJRg==')).toBe(TINY_B64);
    expect(normaliseImage('/9j/4AAQSkZJRg')).toBe(TINY_B64);
    expect(normaliseImage('_9j_4AAQSkZJRg==')).toBe(TINY_B64);
  });
});

describe('normaliseDob', () => {
  it.each([
    ['1990-05-14', '14-05-1990'],
    ['14-05-1990', '14-05-1990'],
    ['14/05/1990', '14-05-1990'],
    ['4/5/1990', '04-05-1990'],
    ['14-May-1990', '14-05-1990'],
    ['14-MAY-1990', '14-05-1990'],
    ['14 may 1990', '14-05-1990'],
    ['03 Dec 1975', '03-12-1975'],
    ['1990-05-14T00:00:00Z', '14-05-1990'],
    ['1990-05-14T23:30:00.000+01:00', '14-05-1990'],
    ['29-02-2000', '29-02-2000'],
  ])('When the upstream dob is %s, then it becomes %s', (input, expected) => {
    expect(normaliseDob(input)).toBe(expected);
  });

  it.each(['', 'yesterday', '1990/05/14', '31-02-1990', '29-02-1900', '14-Foo-1990', '1990-13-01', '14-05-90', 19900514, null])(
    'When the upstream dob is %s, then it is unparseable and empty',
    (input) => {
      expect(normaliseDob(input)).toBe('');
    },
  );
});

describe('normalisePhone', () => {
  it.each(['+2348012345678', '2348012345678', '8012345678', '08012345678', '0801 234 5678', '+234 (801) 234-5678'])(
    'When the phone is %s, then it becomes 08012345678',
    (input) => {
      expect(normalisePhone(input)).toBe('08012345678');
    },
  );

  it.each(['', '12345', '080123456789', '0012345678', '+4478012345678', 'phone'])('When the phone is %s, then it is empty', (input) => {
    expect(normalisePhone(input)).toBe('');
  });
});

describe('normaliseGender', () => {
  it.each([
    ['m', 'M'],
    ['M', 'M'],
    ['male', 'M'],
    ['Male', 'M'],
    [' MALE ', 'M'],
    ['f', 'F'],
    ['Female', 'F'],
    ['FEMALE', 'F'],
    ['x', ''],
    ['', ''],
    ['other', ''],
  ])('When gender is %s, then it becomes "%s"', (input, expected) => {
    expect(normaliseGender(input)).toBe(expected);
  });
});

describe('fixtures', () => {
  it('When the full fixture is read, then every field is filled and the photo is a real JPEG', () => {
    const outcome = fixtureOutcome('12345678901');
    if (outcome?.kind !== 'found') throw new Error('expected a found fixture');
    const record = personRecordSchema.parse(outcome.record);
    for (const field of FIELDS) expect(record[field], field).not.toBe('');
    expect(record.gender).toBe('F');
    expect(record.dob).toMatch(/^\d{2}-\d{2}-\d{4}$/);

    const bytes = Buffer.from(record.image, 'base64');
    expect(bytes.toString('base64')).toBe(record.image);
    expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect([...bytes.subarray(-2)]).toEqual([0xff, 0xd9]);
    expect(bytes.length).toBeLessThan(2048);
  });

  it('When the sparse fixture is read, then only names, dob, gender, nin and transaction id are filled', () => {
    const outcome = fixtureOutcome('12345678902');
    if (outcome?.kind !== 'found') throw new Error('expected a found fixture');
    const record = personRecordSchema.parse(outcome.record);
    for (const field of ['fname', 'lname', 'dob', 'gender', 'nin', 'transaction_id'] as const) expect(record[field]).not.toBe('');
    for (const field of ['mname', 'phone', 'residenceAdress', 'residenceTown', 'residenceLga', 'residenceState', 'image'] as const) {
      expect(record[field], field).toBe('');
    }
  });

  it('When a fixture is read twice, then its transaction id is stable and the records are copies', () => {
    const a = fixtureOutcome('12345678901');
    const b = fixtureOutcome('12345678901');
    if (a?.kind !== 'found' || b?.kind !== 'found') throw new Error('expected found fixtures');
    expect(a.record.transaction_id).toBe(b.record.transaction_id);
    a.record.fname = 'changed';
    expect(b.record.fname).not.toBe('changed');
  });

  it('When the NIN is 99999999999 or not a fixture, then it is not found or null', () => {
    expect(fixtureOutcome('99999999999')).toEqual({ kind: 'not_found' });
    expect(fixtureOutcome('12345678904')).toBeNull();
    expect(FIXTURE_NINS).toEqual(['12345678901', '12345678902', '12345678903', '99999999999']);
  });
});
