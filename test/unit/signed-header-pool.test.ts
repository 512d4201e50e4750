/**
 * The load generator's off-heap pool of signed headers (test/bench/
 * signed-header-pool.ts): every header comes back byte for byte, in order,
 * once; takes across chunk boundaries; stale chunks are never handed out.
 */
import { describe, expect, it } from 'vitest';
import { SignedHeaderPool } from '../bench/signed-header-pool.js';
import { seededRandom } from '../helpers/seeded-random.js';

/** Base64-like headers of varied lengths (the real ones are ~3.3 KB of base64). */
function headers(n: number, seed = 7): string[] {
  const random = seededRandom(seed);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';
  const text = Array.from({ length: 10_000 }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  return Array.from({ length: n }, (_, i) => {
    const at = Math.floor(random() * 5000);
    return `${i}:${text.slice(at, at + 1 + Math.floor(random() * 5000))}`;
  });
}

describe('SignedHeaderPool', () => {
  it('hands every header back once, in order, across chunks and takes', () => {
    const all = headers(10_000);
    const pool = new SignedHeaderPool(60_000);
    for (const h of all) pool.add(h);
    expect(pool.available).toBe(10_000);
    const first = pool.take(4_000);
    const second = pool.take(5_000);
    const rest = pool.take();
    expect([first.length, second.length, rest.length, pool.available]).toEqual([4_000, 5_000, 1_000, 0]);
    const back = [first, second, rest].flatMap((list) => Array.from({ length: list.length }, (_, i) => list.get(i)));
    expect(back).toEqual(all);
    // Random access as well as sequential.
    expect(second.get(4_999)).toBe(all[8_999]);
    expect(second.get(0)).toBe(all[4_000]);
    expect(() => rest.get(1_000)).toThrow(RangeError);
  });

  it('keeps adding after a partial take of a chunk still being filled', () => {
    const all = headers(30, 11);
    const pool = new SignedHeaderPool(60_000);
    for (const h of all.slice(0, 10)) pool.add(h);
    const a = pool.take(4);
    for (const h of all.slice(10)) pool.add(h);
    const b = pool.take();
    expect(Array.from({ length: a.length }, (_, i) => a.get(i))).toEqual(all.slice(0, 4));
    expect(Array.from({ length: b.length }, (_, i) => b.get(i))).toEqual(all.slice(4));
  });

  it('never hands out a header signed more than maxAgeMs ago', () => {
    let now = 1_000_000;
    const pool = new SignedHeaderPool(30_000, () => now);
    const old = headers(5_000, 3);
    for (const h of old) pool.add(h); // two chunks, both signed at t = 1,000,000
    now += 31_000;
    const fresh = headers(10, 5);
    for (const h of fresh) pool.add(h);
    expect(pool.take(100).length).toBe(10);
    expect(pool.available).toBe(0);
  });
});
