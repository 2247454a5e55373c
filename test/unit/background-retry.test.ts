import { describe, expect, it } from 'vitest';
import { afterFailedTry, RETRY_MAX_DELAY_MS } from '../../src/modules/verification/background.ts';

const now = 1_000_000;
const deadline = now + 3600_000;

describe('when a background lookup tries again', () => {
  it('When the authority keeps failing, then the next try comes after a delay doubling from about a second and never more than 30 s', () => {
    for (const code of ['upstream_unavailable', 'upstream_timeout', 'upstream_rate_limited', 'upstream_circuit_open', 'upstream_error']) {
      for (let tries = 1; tries <= 40; tries++) {
        const next = afterFailedTry({ code, tries, now, deadline, oneShot: false });
        if (!('retryAt' in next)) throw new Error(`${code} ended at try ${tries}`);
        const delay = next.retryAt - now;
        expect(delay).toBeGreaterThan(0);
        expect(delay).toBeLessThanOrEqual(RETRY_MAX_DELAY_MS);
        if (tries === 1) expect(delay).toBeLessThanOrEqual(1000);
        if (tries >= 7) expect(delay).toBeGreaterThanOrEqual(RETRY_MAX_DELAY_MS / 2);
      }
    }
  });

  it('When the deadline is near or past, then the try comes at the deadline at the latest, and past it the lookup ends upstream_unavailable', () => {
    const near = afterFailedTry({ code: 'upstream_unavailable', tries: 10, now, deadline: now + 500, oneShot: false });
    expect(near).toEqual({ retryAt: expect.any(Number) });
    expect((near as { retryAt: number }).retryAt).toBeLessThanOrEqual(now + 500);
    expect(afterFailedTry({ code: 'upstream_circuit_open', tries: 3, now, deadline: now, oneShot: false })).toEqual({ endWith: 'upstream_unavailable' });
  });

  it('When the authority refused the query (4xx), then it ends with that code; a one-shot lookup that reached the authority ends, one it never reached tries again', () => {
    expect(afterFailedTry({ code: 'upstream_rejected', tries: 1, now, deadline, oneShot: false })).toEqual({ endWith: 'upstream_rejected' });
    expect(afterFailedTry({ code: 'upstream_timeout', tries: 1, now, deadline, oneShot: true })).toEqual({ endWith: 'upstream_timeout' });
    expect(afterFailedTry({ code: 'upstream_unavailable', tries: 1, now, deadline, oneShot: true })).toEqual({ endWith: 'upstream_unavailable' });
    expect(afterFailedTry({ code: 'upstream_circuit_open', tries: 1, now, deadline, oneShot: true })).toEqual({ retryAt: expect.any(Number) });
    expect(afterFailedTry({ code: 'upstream_rate_limited', tries: 1, now, deadline, oneShot: true })).toEqual({ retryAt: expect.any(Number) });
  });
});
