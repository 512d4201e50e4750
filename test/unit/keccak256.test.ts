/**
 * The reused native sponge (api/payment/keccak256.ts) against viem's
 * keccak256 (noble): empty input, inputs across the 136-byte rate boundary,
 * and calls in a row (each starts from a fresh state).
 */
import { describe, expect, it } from 'vitest';
import { keccak256 as viemKeccak, toHex } from 'viem';
import { keccak256 } from '../../api/payment/keccak256.js';
import { seededRandom } from '../helpers/seeded-random.js';

describe('keccak256', () => {
  it('matches viem on empty, short, rate-sized and multi-block inputs, call after call', () => {
    const random = seededRandom(42);
    const lengths = [0, 1, 31, 32, 66, 135, 136, 137, 224, 272, 1000, 4096];
    for (const length of [...lengths, ...lengths.reverse()]) {
      const data = Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
      expect(toHex(keccak256(data))).toBe(viemKeccak(data));
    }
  });

  it('answers a fresh 32-byte buffer each time', () => {
    const a = keccak256(Buffer.from('a'));
    const b = keccak256(Buffer.from('b'));
    expect(a.length).toBe(32);
    expect(a.equals(b)).toBe(false);
    expect(toHex(a)).toBe(viemKeccak(Buffer.from('a')));
  });
});
