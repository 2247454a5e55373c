import { describe, expect, it } from 'vitest';
import { batcher } from '../../src/lib/batch.ts';
import { currentOrigin, withinOrigin, type RequestOrigin } from '../../src/lib/request-scope.ts';

// The audit trail's writer and the fixture rows' writer are batchers made lazily, by the first request
// that writes: a batcher's statements run in its own context, which must not be that request's scope
// (it would keep that request, its body included, a sign-in's password or a NIN, for the process's life,
// and hand its origin to whatever runs in a statement).
describe('batcher and the request scope', () => {
  it("When a batcher is made while a request is served, then its statements run in no request's scope", async () => {
    const seen: (RequestOrigin | null)[] = [];
    const run = withinOrigin({ requestId: 'first', ip: '203.0.113.1' }, () =>
      batcher({ maxBatch: 10, run: async (items: number[]) => (seen.push(currentOrigin()), items) }),
    );
    await withinOrigin({ requestId: 'second', ip: '203.0.113.2' }, () => run(1));
    await run(2);
    expect(seen).toEqual([null, null]);
  });
});
