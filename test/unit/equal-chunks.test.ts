import { describe, expect, it } from 'vitest';
import { equalChunkSize } from '../../core/bus/equal-chunks.js';

/** The chunks `pending` messages are handed over in. */
function chunks(pending: number, max: number): number[] {
  const out: number[] = [];
  for (let left = pending; left > 0;) {
    const size = equalChunkSize(left, max);
    out.push(size);
    left -= size;
  }
  return out;
}

describe('equal chunks of a fetched backlog', () => {
  it('cuts equal chunks of at most the maximum instead of full ones and a small tail', () => {
    expect(chunks(46_000, 40_000)).toEqual([23_000, 23_000]);
    expect(chunks(100, 37)).toEqual([34, 33, 33]);
    expect(chunks(120_001, 60_000)).toEqual([40_001, 40_000, 40_000]);
  });

  it('keeps what fits in one chunk whole, and never exceeds the maximum', () => {
    expect(chunks(40_000, 40_000)).toEqual([40_000]);
    expect(chunks(1, 40_000)).toEqual([1]);
    for (const [pending, max] of [
      [7, 1],
      [1_000_003, 60_000],
      [59_999, 60_000],
      [60_001, 60_000],
    ] as const) {
      const sizes = chunks(pending, max);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(pending);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(max);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
  });
});
