import { describe, expect, it } from 'vitest';
import { depthWhileInteractive } from '../../src/modules/batches/feeder.ts';

const config = { BATCH_QUEUE_DEPTH: 64, BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE: 2, BATCH_ROWS_PER_SECOND_WHILE_INTERACTIVE: 100 };

describe('a batch queue depth while interactive lookups come and go', () => {
  it('When the authority answers fast, then the batch keeps the floor of two queued (a hundred rows a second already)', () => {
    expect(depthWhileInteractive(config, 5)).toBe(2);
    expect(depthWhileInteractive(config, 0)).toBe(2);
  });

  it('When the authority is slow, then the depth grows with the mean lookup time to keep about the same rows a second, up to the full depth', () => {
    expect(depthWhileInteractive(config, 100)).toBe(10);
    expect(depthWhileInteractive(config, 101)).toBe(11);
    // 1.2 s a lookup: 120 would be needed for 100 rows a second; a batch never holds more than its depth.
    expect(depthWhileInteractive(config, 1200)).toBe(64);
  });

  it('When the floor is above what the rate needs, then the floor wins; when the full depth is below it, the full depth wins', () => {
    expect(depthWhileInteractive({ ...config, BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE: 8 }, 10)).toBe(8);
    expect(depthWhileInteractive({ ...config, BATCH_QUEUE_DEPTH: 4, BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE: 8 }, 10)).toBe(4);
  });
});
