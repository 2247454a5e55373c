import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.ts';
import { tooMany } from '../../src/modules/links/page/submit.ts';
import { fill } from '../../src/modules/links/page/render.ts';

/** How long the person on a link page is told to wait after a limit's 429, from its Retry-After. */
const told = (retryAfter: string | undefined) =>
  tooMany(new AppError('rate_limited', 'limited', retryAfter === undefined ? {} : { headers: { 'Retry-After': retryAfter } }), (t, v) => fill(t, v ?? {})).message;

describe("the link page's wait wording", () => {
  it('When a limit asks to wait a minute or less, then the person reads "a minute", never "1 minutes"; longer waits are whole minutes, rounded up', () => {
    for (const s of ['1', '5', '60', undefined]) expect(told(s), String(s)).toBe('Too many tries. Wait a minute, then try again.');
    expect(told('61')).toBe('Too many tries. Wait 2 minutes, then try again.');
    expect(told('3600')).toBe('Too many tries. Wait 60 minutes, then try again.');
  });
});
