import { describe, expect, it } from 'vitest';
import { batcher } from '../../src/lib/batch.ts';

// The shared batching of statements (lib/batch.ts): the audit trail's appends and the principal reads.
describe('batcher', () => {
  it('When items arrive while a batch runs, then they are run together by the next, each caller getting its own result', async () => {
    const batches: number[][] = [];
    const run = batcher({ maxBatch: 3, run: async (items: number[]) => (batches.push(items), items.map((i) => i * 10)) });
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => run(i)));
    expect(results).toEqual([10, 20, 30, 40, 50, 60]);
    expect(batches).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it('When a batch of several fails and retryOneByOne is set, then each item is run alone and only the faulty one fails', async () => {
    const batches: string[][] = [];
    const run = batcher({
      maxBatch: 10,
      retryOneByOne: true,
      run: async (items: string[]) => {
        batches.push(items);
        if (items.includes('bad')) throw new Error('bad item');
        return items.map((s) => s.toUpperCase());
      },
    });
    const first = run('a');
    const rest = ['b', 'bad', 'c'].map((s) => run(s));
    const settled = await Promise.allSettled([first, ...rest]);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual(['A', 'B', 'bad item', 'C']);
    expect(batches).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
  });

  it('When a batch of several fails without retryOneByOne, then every item of it fails and the next batch runs', async () => {
    let calls = 0;
    const run = batcher({ maxBatch: 10, run: async (items: number[]) => (++calls === 2 ? Promise.reject(new Error('lost')) : items) });
    const settled = await Promise.allSettled([1, 2, 3].map((i) => run(i)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(await run(4)).toBe(4);
  });

  it('When a run returns fewer results than items, then every caller of that batch fails', async () => {
    const run = batcher({ maxBatch: 10, run: async (items: number[]) => items.slice(1) });
    await expect(run(1)).rejects.toThrow('batch: 1 items run, 0 results');
  });
});
