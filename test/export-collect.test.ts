import { describe, expect, it } from 'vitest';
import { HEAP_BUDGET, collectIfGrown } from '../src/export/collect.js';

describe('collectIfGrown (between row groups)', () => {
  it('collects when the heap has grown past the budget: garbage made since is freed', () => {
    collectIfGrown();
    let keep: number[][] | null = [];
    // About 3 budgets of short arrays, the shape an encoded row group leaves behind.
    for (let i = 0; i < (3 * HEAP_BUDGET) / 1024; i++) keep.push(new Array<number>(120).fill(i));
    keep = null;
    const before = process.memoryUsage().heapUsed;
    collectIfGrown();
    const after = process.memoryUsage().heapUsed;
    expect(keep).toBe(null);
    expect(before - after).toBeGreaterThan(HEAP_BUDGET);
  });

});
