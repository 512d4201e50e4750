/**
 * The verbatim-echo shortcut of the extension echo check (api/payment/extension-echo.ts): `sameJson` says two
 * values are equal exactly when their JSON texts with sorted keys are, over random JSON-like values and
 * single mutations of them (a changed leaf, a dropped or added member, a member set to undefined).
 */
import { describe, expect, it } from 'vitest';
import { seededRandom as prng } from '../helpers/seeded-random.js';
import { sameJson } from '../../api/payment/extension-echo.js';

/** JSON with sorted keys and undefined members left out: the reference equality. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonical(x))).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function randomValue(rand: () => number, depth = 0): unknown {
  const r = rand();
  if (depth > 3 || r < 0.4) return [0, 1, 'a', 'b', true, false, null, 2.5][Math.floor(rand() * 8)];
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 3) }, () => randomValue(rand, depth + 1));
  return Object.fromEntries(
    Array.from({ length: Math.floor(rand() * 4) }, () => [
      ['x', 'y', 'z', 'w'][Math.floor(rand() * 4)]!,
      randomValue(rand, depth + 1),
    ]),
  );
}

/** A copy of `v` with one change somewhere (or none, when the spot drawn is not changeable). */
function mutate(v: unknown, rand: () => number): unknown {
  if (Array.isArray(v)) {
    if (!v.length || rand() < 0.3) return [...v, 1];
    const i = Math.floor(rand() * v.length);
    return v.map((x, j) => (j === i ? mutate(x, rand) : x));
  }
  if (v && typeof v === 'object') {
    const o = { ...(v as Record<string, unknown>) };
    const keys = Object.keys(o);
    const r = rand();
    if (!keys.length || r < 0.2) o.added = 'n';
    else if (r < 0.35) delete o[keys[0]!];
    else if (r < 0.45) o[keys[0]!] = undefined;
    else o[keys[Math.floor(rand() * keys.length)]!] = mutate(o[keys[Math.floor(rand() * keys.length)]!], rand);
    return o;
  }
  return rand() < 0.5 ? 'changed' : 7;
}

describe('sameJson', () => {
  it('agrees with sorted-key JSON equality on random values and their mutations', () => {
    const rand = prng(2026);
    let equal = 0;
    for (let i = 0; i < 4000; i++) {
      const a = randomValue(rand);
      const b = rand() < 0.3 ? JSON.parse(JSON.stringify(a ?? null)) : mutate(a, rand);
      const expected = canonical(a) === canonical(b);
      if (expected) equal += 1;
      expect(sameJson(a, b), `${canonical(a)} vs ${canonical(b)}`).toBe(expected);
      expect(sameJson(b, a)).toBe(expected);
    }
    expect(equal).toBeGreaterThan(1000); // both answers were exercised
    expect(equal).toBeLessThan(3900);
  });

  it('treats a member holding undefined as absent, and an array as different from an object', () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(sameJson({ info: { input: { type: 'http' } } }, { info: { input: { type: 'mcp' } } })).toBe(false);
  });
});
