/**
 * Presentation of the telemetry: the documented precision of served numbers,
 * enums in any case, boolean flags from query strings, the guide's readable
 * JSON, and which slice the live examples name.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readableJson } from '../../api/discovery/agents-md.js';
import { candidateSlices, newestEndedSlice } from '../../api/discovery/live-examples.js';
import { booleanFlag, caseInsensitiveEnum } from '../../api/telemetry/params.js';
import { decimals, orNull, PRECISION, significant } from '../../api/telemetry/precision.js';

describe('served precision', () => {
  it('rounds each kind as docs/metrics.md says', () => {
    expect(PRECISION.bps(0.5000000000004823)).toBe(0.5);
    expect(PRECISION.bps(-12.345)).toBe(-12.35); // half away from zero
    expect(PRECISION.bps(-0.001)).toBe(0); // no -0
    expect(Object.is(PRECISION.bps(-0.001), -0)).toBe(false);
    expect(PRECISION.fineBps(0.033333333)).toBe(0.0333);
    expect(PRECISION.usd(24.465034965)).toBe(24.47);
    expect(PRECISION.price(3000.123456)).toBe(3000.12);
    expect(PRECISION.price(0.000412345678)).toBe(0.000412346);
    expect(PRECISION.price(97123.456)).toBe(97123.46); // never coarser than a cent
    expect(PRECISION.base(12.468827930174564)).toBe(12.468828);
    expect(PRECISION.probability(0.93124999)).toBe(0.9312);
    expect(PRECISION.pct(27.42483923)).toBe(27.42);
    expect(PRECISION.ms(121.6666)).toBe(121.7);
    expect(orNull(PRECISION.pct)(null)).toBeNull();
    expect(decimals(Number.NaN, 2)).toBeNaN();
    expect(significant(0, 6)).toBe(0);
  });

  it('never serves a nonzero dislocation spread or profit as 0', () => {
    expect(PRECISION.bpsNonzero(0.0012345)).toBe(0.0012); // 2 decimals would say 0
    expect(PRECISION.bpsNonzero(0.004)).toBe(0.004);
    expect(PRECISION.bpsNonzero(-0.0031)).toBe(-0.0031);
    expect(PRECISION.bpsNonzero(0.005)).toBe(0.01); // rounds to a nonzero: as bps
    expect(PRECISION.bpsNonzero(12.345)).toBe(12.35);
    expect(PRECISION.bpsNonzero(0)).toBe(0);
    expect(PRECISION.usdNonzero(0.0049)).toBe(0.0049);
    expect(PRECISION.usdNonzero(0.1)).toBe(0.1);
    expect(PRECISION.usdNonzero(24.465034965)).toBe(24.47);
    // Within half a unit of the 2-decimal rounding of the stored value (what the doc's SQL reproductions check).
    for (const v of [1e-9, 0.00499, 0.0031, 3e-7])
      expect(Math.abs(PRECISION.bpsNonzero(v) - v)).toBeLessThanOrEqual(0.005);
  });
});

describe('telemetry parameters', () => {
  it('accepts enums in any case and returns the canonical spelling; the published schema keeps the values', () => {
    const side = caseInsensitiveEnum(['buy', 'sell']);
    expect(side.parse('BUY')).toBe('buy');
    expect(side.parse('Sell')).toBe('sell');
    expect(side.safeParse('hold').success).toBe(false);
    expect(caseInsensitiveEnum(['15m', '1h']).parse('1H')).toBe('1h');
    expect(z.toJSONSchema(z.object({ side }), { io: 'input' }).properties).toMatchObject({
      side: { type: 'string', enum: ['buy', 'sell'] },
    });
  });

  it('reads boolean flags from JSON and from query strings', () => {
    const flag = booleanFlag();
    for (const [v, out] of [
      [true, true],
      ['TRUE', true],
      ['1', true],
      ['yes', true],
      [false, false],
      ['False', false],
      ['0', false],
      ['no', false],
    ] as const)
      expect(flag.parse(v)).toBe(out);
    expect(flag.safeParse('maybe').success).toBe(false);
  });
});

describe("the guide's example bodies", () => {
  it('cut long number arrays and long strings with a note, and keep small values inline', () => {
    const text = readableJson({
      data: [{ index: 0, embedding: Array.from({ length: 768 }, (_, i) => i / 1000) }],
      text: 'x'.repeat(500),
      n: 1,
    });
    expect(text).toContain(
      '"embedding": [0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, "... (768 numbers, 760 more not shown here)"]',
    );
    expect(text).toContain('... (500 characters)');
    expect(text.split('\n').length).toBeLessThan(10);
  });
});

describe("the live examples' slice", () => {
  const Q = 900_000;
  const at = (h: number, m: number, s = 0) => Date.UTC(2026, 0, 5, h, m, s);
  it('is the newest 15-minute slice that ended before the newest data, or the newest one before any is complete', () => {
    expect(newestEndedSlice(at(9, 0), at(10, 7))).toBe(at(9, 45));
    expect(newestEndedSlice(at(9, 0), at(10, 15))).toBe(at(10, 0)); // 10:00-10:15 ended with the newest sample
    expect(newestEndedSlice(at(10, 3), at(10, 7))).toBe(at(10, 0)); // nothing complete yet: the newest
    expect(newestEndedSlice(at(9, 50), at(10, 7)) + Q).toBeGreaterThan(at(9, 50));
  });
  it('offers only final slices (ended at or before the closed end) while one exists, newest first', () => {
    // Data 08:00-10:07, closed through 09:07 (an hour of data margin): 08:45 is the newest final slice.
    expect(candidateSlices(at(8, 0), at(10, 7), at(9, 7))).toEqual([at(8, 45), at(8, 30), at(8, 15), at(8, 0)]);
    expect(candidateSlices(at(8, 40), at(10, 7), at(9, 7))).toEqual([at(8, 45), at(8, 30)]);
    // Nothing final yet (20 minutes of data): the newest ended slice, then the newest (partial) one.
    expect(candidateSlices(at(9, 47), at(10, 7), at(9, 7))).toEqual([at(9, 45), at(10, 0)]);
  });
});
