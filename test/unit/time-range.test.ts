import { describe, expect, it } from 'vitest';
import { lagosRange, timeBoundParam } from '../../src/lib/pagination.ts';

const to = timeBoundParam('to');
const issue = (v: string) => {
  const r = to.safeParse(v);
  return r.success ? null : r.error.issues[0]!.message;
};
const SHAPE = 'to must be a date YYYY-MM-DD or a date-time with a zone, e.g. 2026-03-01T09:30:00Z';

describe('history lists: from and to', () => {
  it('When a bound is a calendar day or a date-time with a zone, then it is accepted', () => {
    for (const v of [
      '2026-03-01',
      '2030-01-01T00:00:00Z',
      '2026-11-24T09:30:00+01:00',
      '2026-11-24T09:30:00-05:30',
      '2026-11-24T09:30:00.123456Z',
      '2026-11-24T09:30Z',
      '2026-11-24t09:30:00z',
      '2026-11-24T09:30:00+0100',
      // `+01:00` sent unencoded in a query string arrives as ` 01:00`.
      '2026-11-24T09:30:00 01:00',
    ]) expect(issue(v), v).toBeNull();
  });

  it('When a bound is malformed or not real, then the first message says which', () => {
    expect(issue('yesterday')).toBe(SHAPE);
    expect(issue('1-3-2026')).toBe(SHAPE);
    expect(issue('2026-11-24T09:30:00')).toBe(SHAPE); // no zone: which instant is meant is unknown
    expect(issue('2026-11-24 09:30:00Z')).toBe(SHAPE);
    expect(issue('2026-02-30')).toBe('to is not a valid calendar date');
    expect(issue('2026-02-30T10:00:00Z')).toBe('to is not a valid date and time');
    expect(issue('2026-11-24T24:00:00Z')).toBe('to is not a valid date and time');
    expect(issue('2026-11-24T09:30:00+24:00')).toBe('to is not a valid date and time');
  });

  it('When bounds are days, then they are whole Lagos days; when instants, then exact and inclusive to the millisecond', () => {
    expect(lagosRange('2026-03-01', '2026-03-31')).toEqual({
      since: new Date('2026-02-28T23:00:00Z'),
      before: new Date('2026-03-31T23:00:00Z'),
    });
    expect(lagosRange('2026-11-24T09:30:00+01:00', '2026-11-24T10:00:00.123456-05:30')).toEqual({
      since: new Date('2026-11-24T08:30:00Z'),
      before: new Date('2026-11-24T15:30:00.124Z'),
    });
    expect(lagosRange('2026-03-01T12:00:00Z', '2026-03-01T12:00:00Z')).toEqual({
      since: new Date('2026-03-01T12:00:00Z'),
      before: new Date('2026-03-01T12:00:00.001Z'),
    });
    // Mixed: the day 2 March begins at 1 March 23:00 UTC.
    expect(lagosRange('2026-03-02', '2026-03-01T23:30:00Z').since).toEqual(new Date('2026-03-01T23:00:00Z'));
    expect(() => lagosRange('2026-03-02', '2026-03-01T22:59:59.999Z')).toThrow('from must not be after to');
    expect(() => lagosRange('2026-03-05', '2026-03-04')).toThrow('from must not be after to');
    expect(() => lagosRange('2026-03-01T12:00:00.001Z', '2026-03-01T12:00:00Z')).toThrow('from must not be after to');
  });
});
