/**
 * The depth-survival fill model (api/telemetry/depth-survival.ts) on
 * constructed snapshot series whose answer is known by hand: the share of
 * snapshot pairs in which the depth a walk needs is still there.
 */
import { describe, expect, it } from 'vitest';
import { walkBook, type Level } from '../../api/telemetry/book-walk.js';
import {
  chooseFillModel,
  depthSurvivalProbabilities,
  gridIndex,
  MAX_LAG_EXCESS_MS,
  SURVIVAL_GRID_BPS,
  survivalTable,
  type BookPoint,
  type SurvivalTable,
} from '../../api/telemetry/depth-survival.js';

const T0 = Date.UTC(2026, 0, 5, 12);
const BIDS: Level[] = [[1999, 5]];
/** Best ask 2000 (1), a level exactly 5 bps out (2001, 2), a deep one 50 bps out (2010, 10). */
const FULL_ASKS: Level[] = [
  [2000, 1],
  [2001, 2],
  [2010, 10],
];
const WITHOUT_5BPS: Level[] = [
  [2000, 1],
  [2010, 10],
];

const point = (i: number, asks: readonly Level[], stepMs = 1000): BookPoint => ({
  t_ms: T0 + i * stepMs,
  bids: BIDS,
  asks,
});

/** The model's answer for `size_base` (or `size_usd`) of a buy against `asks`, with `table`. */
function answer(table: SurvivalTable, asks: readonly Level[], size: { base?: number; usd?: number }) {
  const walk = walkBook({ side: 'buy', sizeBase: size.base, sizeUsd: size.usd, bids: BIDS, asks });
  return depthSurvivalProbabilities(
    {
      side: 'buy',
      levels: asks,
      requested: size.usd ?? size.base!,
      byUsd: size.usd !== undefined,
      fillDepthDistanceBps: walk.fill_depth_distance_bps,
      lastLevelDistanceBps: walk.last_level_distance_bps,
    },
    table,
  );
}

describe('depth survival', () => {
  it('a 5 bps level that is gone in 40 % of the following snapshots: full fill 0.6 for a size that needs it', () => {
    // Snapshots every second, the 5 bps level absent at i % 5 in {1, 3}: over the pairs (i, i + 1), the level
    // present at t vanishes at t + 1 s from i % 5 = 0 and 2 (2 of 5), returns (q = 3) from 1 and 3, stays from 4.
    const series = Array.from({ length: 501 }, (_, i) =>
      point(i, i % 5 === 1 || i % 5 === 3 ? WITHOUT_5BPS : FULL_ASKS),
    );
    const table = survivalTable(series, 800); // a horizon of 0.8 s: the next snapshot, 1 s later
    expect(table.asks.samples).toBe(500);
    const k = SURVIVAL_GRID_BPS.indexOf(5);
    const q = table.asks.ratios[k]!;
    expect(q.filter((r) => r === 1 / 3)).toHaveLength(200);
    expect(q.filter((r) => r === 3)).toHaveLength(200);
    expect(q.filter((r) => r === 1)).toHaveLength(100);

    // 3 ETH: 1 @ 2000 and 2 @ 2001, the deepest level it needs is 5 bps out; D_now(5 bps) = 3.
    const p = answer(table, FULL_ASKS, { base: 3 });
    expect(p.samples).toBe(500);
    expect(p.full_fill_probability).toBeCloseTo(0.6, 12);
    // Some depth survives in every pair (the 50 bps level never goes): partial = 1 - 0.6.
    expect(p.partial_fill_probability).toBeCloseTo(0.4, 12);

    // 1 ETH needs only the best level (0 bps), which never goes: 1.
    expect(answer(table, FULL_ASKS, { base: 1 }).full_fill_probability).toBe(1);
    // The same in USD: 6002 USD needs the 5 bps level (2000 + 4002); 0.6 again.
    expect(answer(table, FULL_ASKS, { usd: 6002 }).full_fill_probability).toBeCloseTo(0.6, 12);
  });

  it('a book that replenishes: q >= 1 everywhere and the full fill probability is 1', () => {
    const series = Array.from({ length: 300 }, (_, i) =>
      point(i, [
        [2000, 1 + i * 0.01],
        [2001, 2 + i * 0.05],
        [2010, 10],
      ]),
    );
    const table = survivalTable(series, 1000);
    expect(table.asks.samples).toBe(299);
    for (const ratios of table.asks.ratios) for (const q of ratios) expect(q).toBeGreaterThanOrEqual(1);
    const p = answer(table, FULL_ASKS, { base: 3 });
    expect(p.full_fill_probability).toBe(1);
    expect(p.partial_fill_probability).toBe(0);
  });

  it('ratios are anchored at the first snapshot prices: a book that moved 10 bps away keeps nothing within 5 bps', () => {
    const moved: Level[] = FULL_ASKS.map(([p, s]) => [p * 1.001, s]);
    const series = Array.from({ length: 200 }, (_, i) => point(i, i % 2 ? moved : FULL_ASKS));
    const table = survivalTable(series, 1000);
    // Pairs FULL -> moved: nothing within 5 bps of 2000 (q = 0); moved -> FULL: q = 3 / 1 ... 3 / 3 >= 1.
    const q5 = table.asks.ratios[SURVIVAL_GRID_BPS.indexOf(5)]!;
    expect(q5.filter((r) => r === 0)).toHaveLength(100);
    expect(answer(table, FULL_ASKS, { base: 3 }).full_fill_probability).toBeCloseTo(99 / 199, 12);
  });

  it('the lag is the smallest spacing covering the horizon, and a gap in the history is no sample', () => {
    const series = [0, 1, 2, 3, 4].map((i) => point(i, FULL_ASKS));
    expect(survivalTable(series, 1000).asks.samples).toBe(4);
    expect(survivalTable(series, 1001).asks.samples).toBe(3); // pairs (t, t + 2 s)
    expect(survivalTable(series, 4000).asks.samples).toBe(1);
    expect(survivalTable(series, 4001).asks.samples).toBe(0);
    // A stop of the ingest longer than the horizon + MAX_LAG_EXCESS_MS between two snapshots: that pair is dropped.
    const gapped = [
      point(0, FULL_ASKS),
      point(1, FULL_ASKS),
      { ...point(1, FULL_ASKS), t_ms: T0 + 1000 + 1000 + MAX_LAG_EXCESS_MS + 1 },
    ];
    expect(survivalTable(gapped, 1000).asks.samples).toBe(1);
  });

  it('distances take the next grid point out; beyond the grid the last one', () => {
    expect(gridIndex(0)).toBe(0);
    expect(gridIndex(4.999999999999)).toBe(SURVIVAL_GRID_BPS.indexOf(5));
    expect(gridIndex(5.0000000000001)).toBe(SURVIVAL_GRID_BPS.indexOf(5)); // float rounding of a level set 5 bps out
    expect(gridIndex(5.01)).toBe(SURVIVAL_GRID_BPS.indexOf(10));
    expect(gridIndex(350)).toBe(SURVIVAL_GRID_BPS.length - 1);
  });

  it('a size the visible side cannot hold has no full fill; too few samples fall back to the adverse-sweep model', () => {
    const series = Array.from({ length: 501 }, (_, i) =>
      point(i, i % 5 === 1 || i % 5 === 3 ? WITHOUT_5BPS : FULL_ASKS),
    );
    const table = survivalTable(series, 1000);
    const tooBig = answer(table, FULL_ASKS, { base: 20 });
    expect(tooBig.full_fill_probability).toBe(0);
    expect(tooBig.partial_fill_probability).toBe(1);

    const sweep = () => ({ full_fill_probability: 1, partial_fill_probability: 0 });
    const short = answer(survivalTable(series.slice(0, 11), 1000), FULL_ASKS, { base: 3 });
    expect(short.samples).toBe(10);
    expect(chooseFillModel(short, 100, sweep)).toEqual({
      full_fill_probability: 1,
      partial_fill_probability: 0,
      fill_model: 'adverse_sweep',
      fill_model_samples: 10,
    });
    const long = chooseFillModel(answer(table, FULL_ASKS, { base: 3 }), 100, sweep);
    expect(long.fill_model).toBe('depth_survival');
    expect(long.fill_model_samples).toBe(500);
    expect(long.full_fill_probability).toBeCloseTo(0.6, 12);
    // No history at all: no samples, the fallback answers.
    expect(chooseFillModel(answer(survivalTable([], 1000), FULL_ASKS, { base: 3 }), 1, sweep).fill_model).toBe(
      'adverse_sweep',
    );
  });
});
