import { describe, expect, it } from 'vitest';
import { compareClaims, foldName, nameScore } from '../../src/modules/verification/match.ts';
import { FIXTURE_NINS } from '../../src/modules/verification/fixtures.ts';

describe('name comparison', () => {
  it('When names differ only by case, accents (combining marks too), spaces and hyphens, then they are one name', () => {
    expect(foldName('Adébáyọ̀-Okafor')).toBe('adebayookafor');
    expect(nameScore('Adébáyọ̀-Okafor', 'adebayo okafor')).toBe(100);
    expect(nameScore('ADEBAYOOKAFOR', 'Adébáyọ̀-Okafor')).toBe(100);
  });

  it('When names differ by letters, then the score falls with the edit distance and an empty name scores 0', () => {
    expect(nameScore('Okafor', 'Okafur')).toBe(83);
    expect(nameScore('Okonkwo', 'Okafor')).toBeLessThan(90);
    expect(nameScore('', 'Okafor')).toBe(0);
  });

  it('When a field is not sent, then it is absent from match; all_match covers only what was sent', () => {
    expect(FIXTURE_NINS).toContain('12345678901');
    const record = { nin: '1', fname: 'Adaeze', mname: 'Chioma', lname: 'Okonkwo', dob: '14-03-1991', gender: 'F', phone: '08031234567' } as never;
    expect(compareClaims({ fname: 'adaeze chioma', lname: 'okonkwo' }, record)).toEqual({ match: { fname: true, lname: true }, scores: { fname: 100, lname: 100 }, all_match: true });
    expect(compareClaims({ fname: 'adaeze', lname: 'okonkwo', gender: 'm', phone: '2348031234567' }, record).match).toEqual({ fname: true, lname: true, gender: false, phone: true });
  });
});
