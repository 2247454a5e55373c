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

  it('When a batch of several fails for an item (retryOneByOne says so), then each item is run alone and only the faulty one fails', async () => {
    const batches: string[][] = [];
    const run = batcher({
      maxBatch: 10,
      retryOneByOne: (err) => (err as Error).message === 'bad item',
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

  it('When a failed batch is run again item by item, then those runs go at once: one waiting on another does not hold it', async () => {
    let cStarted!: () => void;
    const cRuns = new Promise<void>((resolve) => (cStarted = resolve));
    const run = batcher({
      maxBatch: 10,
      retryOneByOne: () => true,
      run: async (items: string[]) => {
        if (items.length > 1) throw new Error('bad item');
        if (items[0] === 'c') cStarted();
        // The retry of b finishes only once the retry of c has started: one at a time would never end.
        if (items[0] === 'b') await cRuns;
        return items;
      },
    });
    const first = run('a');
    expect(await Promise.all([first, run('b'), run('c')])).toEqual(['a', 'b', 'c']);
  });

  it('When a batch of ten is run again item by item, then at most four of those runs are under way at once', async () => {
    let running = 0;
    let most = 0;
    const run = batcher({
      maxBatch: 10,
      retryOneByOne: () => true,
      run: async (items: number[]) => {
        if (items.length > 1) throw new Error('bad item');
        most = Math.max(most, ++running);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        return items;
      },
    });
    const first = run(0);
    const rest = Array.from({ length: 10 }, (_, i) => run(i + 1));
    expect(await Promise.all([first, ...rest])).toEqual(Array.from({ length: 11 }, (_, i) => i));
    expect(most).toBe(4);
  });

  it('When retryOneByOne itself throws, then the batch fails as if it had said no, and its callers hear of it', async () => {
    let calls = 0;
    const run = batcher({
      maxBatch: 10,
      retryOneByOne: () => {
        throw new Error('predicate broke');
      },
      run: async (items: number[]) => (++calls === 2 ? Promise.reject(new Error('lost')) : items),
    });
    const settled = await Promise.allSettled([1, 2, 3].map((i) => run(i)));
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([1, 'lost', 'lost']);
  });

  it('When a batch of several fails without retryOneByOne, or with a failure it does not accept, then every item of it fails, none is run again, and the next batch runs', async () => {
    for (const retryOneByOne of [undefined, (err: unknown) => (err as Error).message === 'bad item']) {
      const batches: number[][] = [];
      const run = batcher({ maxBatch: 10, retryOneByOne, run: async (items: number[]) => (batches.push(items), batches.length === 2 ? Promise.reject(new Error('lost')) : items) });
      const settled = await Promise.allSettled([1, 2, 3].map((i) => run(i)));
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
      expect(await run(4)).toBe(4);
      expect(batches).toEqual([[1], [2, 3], [4]]);
    }
  });

  it('When a run returns fewer results than items, then every caller of that batch fails', async () => {
    const run = batcher({ maxBatch: 10, run: async (items: number[]) => items.slice(1) });
    await expect(run(1)).rejects.toThrow('batch: 1 items run, 0 results');
  });
});
