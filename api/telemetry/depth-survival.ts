/**
 * The depth-survival fill model of impact-simulation, pure: how much of the
 * visible depth is still offered when a taker order arrives, calibrated on the
 * stored level-2 history of the venue and pair (impact-inputs.ts reads and
 * shares that history; book-walk.ts has the walk and the adverse-sweep model
 * this one replaces when the history suffices).
 *
 * Pairs. With h the request's horizon (book age + the venue's median REST
 * round trip), each snapshot at t is paired with the first snapshot at
 * t' >= t + h: the lag t' - t is the smallest snapshot spacing that covers
 * the horizon. When the cadence (about one book per pair per second) is
 * coarser than h, the lag is longer than the order's real delay and the model
 * is conservative (more time for the depth to go). A pair whose lag exceeds
 * h + MAX_LAG_EXCESS_MS spans a gap in the history (the ingest stopped) and
 * is not a sample.
 *
 * Survival ratio. For a pair and a side, at each distance g of SURVIVAL_GRID_BPS
 * from t's best price of that side, price-anchored at t (asks at or below
 * best_ask(t) x (1 + g / 1e4), bids at or above best_bid(t) x (1 - g / 1e4)):
 *   q(g) = base size offered within g at t' / base size offered within g at t.
 * q can exceed 1 (the book replenished). Levels of size 0 are ignored, and a
 * level counts as within g when its distance from the best is at most
 * g + DISTANCE_TOLERANCE_BPS (float rounding of prices set exactly g apart).
 *
 * Probabilities. The walk (book-walk.ts) needs the depth within d_need of the
 * side's best (the distance of the deepest level it consumes for the whole
 * size; none when the visible side cannot hold it) and the last visible level
 * lies at d_last. Each distance is taken to the next grid point out, g_k >= d
 * (an observed ratio, never an interpolated one; beyond the last grid point
 * the last point's ratio), and D_now(x) is the amount the current book offers
 * within x of its best, in the unit of the request (base, or USD at the level
 * prices):
 *   full_fill_probability    = share of samples with q(g_need) x D_now(max(g_need, d_need)) >= size
 *   partial_fill_probability = share with q(g_last) x D_now(max(g_last, d_last)) > 0, minus full
 * (full is 0 when the visible side cannot hold the size): "full" is a fill of
 * the whole size at prices no worse than g_need from the best, as a marketable
 * limit there would get (at g_need = 0: the best price itself still offered).
 * The next grid point out is used rather than an interpolation because each
 * ratio is then one observed at that price bound. With fewer samples
 * than the configured minimum the adverse-sweep model answers instead.
 */
import type { FillProbabilities, Level, Side } from './book-walk.js';

/** Distances from the side's best price (bps) at which survival is measured. */
export const SURVIVAL_GRID_BPS = [0, 1, 2, 5, 10, 20, 50, 100, 200] as const;
/** A pair whose lag is longer than the horizon by more than this spans a gap in the history: no sample. */
export const MAX_LAG_EXCESS_MS = 5_000;
/** A level this close beyond a distance still counts as within it (float rounding). */
export const DISTANCE_TOLERANCE_BPS = 1e-9;

/** One stored snapshot: its event time and its two sides (any order; sizes in base units). */
export interface BookPoint {
  t_ms: number;
  bids: readonly Level[];
  asks: readonly Level[];
}

/** The survival ratios of one side: `ratios[k]` holds q(SURVIVAL_GRID_BPS[k]) of every sample. */
export interface SideSurvival {
  ratios: number[][];
  samples: number;
}

export interface SurvivalTable {
  /** The horizon the pairs cover (ms): each lag is at least this. */
  horizon_ms: number;
  /** Event times of the oldest and newest snapshot of the series (null when empty). */
  history_from_ms: number | null;
  history_to_ms: number | null;
  asks: SideSurvival;
  bids: SideSurvival;
}

const within = (distance: number, bound: number) => distance <= bound + DISTANCE_TOLERANCE_BPS;

/** Distance (bps) of `price` from `best`, worse side positive. */
const distanceFrom = (side: 'asks' | 'bids', best: number, price: number) =>
  ((side === 'asks' ? price - best : best - price) / best) * 1e4;

/** A side's positive levels, best first (prices and base sizes in parallel arrays). */
interface SortedSide {
  prices: Float64Array;
  sizes: Float64Array;
}

function sortedSide(levels: readonly Level[], side: 'asks' | 'bids'): SortedSide {
  const kept = levels.filter(([p, s]) => p > 0 && s > 0).sort((a, b) => (side === 'asks' ? a[0] - b[0] : b[0] - a[0]));
  return { prices: Float64Array.from(kept, (l) => l[0]), sizes: Float64Array.from(kept, (l) => l[1]) };
}

/**
 * Base size offered within each grid distance of `best` on `side`, cumulative:
 * one pass over the levels (best first) and the grid (ascending).
 */
function offeredOnGrid(levels: SortedSide, side: 'asks' | 'bids', best: number): Float64Array {
  const out = new Float64Array(SURVIVAL_GRID_BPS.length);
  let i = 0;
  let total = 0;
  for (let k = 0; k < SURVIVAL_GRID_BPS.length; k++) {
    while (i < levels.prices.length && within(distanceFrom(side, best, levels.prices[i]!), SURVIVAL_GRID_BPS[k]!)) {
      total += levels.sizes[i]!;
      i++;
    }
    out[k] = total;
  }
  return out;
}

/** The survival ratios of every pair (t, first t' >= t + horizonMs) of `series` (module comment). */
export function survivalTable(series: readonly BookPoint[], horizonMs: number): SurvivalTable {
  const points = [...series].sort((a, b) => a.t_ms - b.t_ms);
  const sides = points.map((p) => ({ asks: sortedSide(p.asks, 'asks'), bids: sortedSide(p.bids, 'bids') }));
  const empty = (): SideSurvival => ({ ratios: SURVIVAL_GRID_BPS.map(() => []), samples: 0 });
  const table: SurvivalTable = {
    horizon_ms: horizonMs,
    history_from_ms: points[0]?.t_ms ?? null,
    history_to_ms: points[points.length - 1]?.t_ms ?? null,
    asks: empty(),
    bids: empty(),
  };
  let j = 0;
  for (let i = 0; i < points.length; i++) {
    const at = points[i]!;
    if (j <= i) j = i + 1;
    while (j < points.length && points[j]!.t_ms < at.t_ms + horizonMs) j++;
    if (j >= points.length) break;
    if (points[j]!.t_ms - at.t_ms > horizonMs + MAX_LAG_EXCESS_MS) continue;
    for (const side of ['asks', 'bids'] as const) {
      const now = sides[i]![side];
      const best = now.prices[0];
      if (best === undefined) continue;
      const before = offeredOnGrid(now, side, best);
      const after = offeredOnGrid(sides[j]![side], side, best);
      const out = table[side];
      for (let k = 0; k < SURVIVAL_GRID_BPS.length; k++) out.ratios[k]!.push(after[k]! / before[k]!);
      out.samples += 1;
    }
  }
  return table;
}

/** The grid index for a distance: the next grid point out, or the last one beyond the grid. */
export function gridIndex(distanceBps: number): number {
  const k = SURVIVAL_GRID_BPS.findIndex((g) => within(distanceBps, g));
  return k === -1 ? SURVIVAL_GRID_BPS.length - 1 : k;
}

export interface SurvivalRequest {
  side: Side;
  /** The current book's side the order trades against (asks for a buy, bids for a sell), best first. */
  levels: readonly Level[];
  /** Requested size, in base units or (byUsd) USD notional. */
  requested: number;
  byUsd: boolean;
  /** Distance of the deepest level the walk consumes for the whole size; null when the side cannot hold it. */
  fillDepthDistanceBps: number | null;
  lastLevelDistanceBps: number;
}

export interface SurvivalProbabilities {
  full_fill_probability: number;
  partial_fill_probability: number;
  samples: number;
}

/** The depth-survival probabilities (module comment) of a request, from the side's calibration. */
export function depthSurvivalProbabilities(req: SurvivalRequest, table: SurvivalTable): SurvivalProbabilities {
  const sideName = req.side === 'buy' ? 'asks' : 'bids';
  const survival = table[sideName];
  const n = survival.samples;
  if (n === 0) return { full_fill_probability: 0, partial_fill_probability: 0, samples: 0 };
  const best = sortedSide(req.levels, sideName).prices[0]!;
  /** D_now(x): amount offered within x bps of the best, in the unit of the request. */
  const offered = (bound: number) => {
    let total = 0;
    for (const [p, s] of req.levels)
      if (p > 0 && s > 0 && within(distanceFrom(sideName, best, p), bound)) total += req.byUsd ? p * s : s;
    return total;
  };
  const share = (distance: number, holds: (amount: number) => boolean) => {
    const k = gridIndex(distance);
    const depth = offered(Math.max(SURVIVAL_GRID_BPS[k]!, distance));
    let hits = 0;
    for (const q of survival.ratios[k]!) if (holds(q * depth)) hits += 1;
    return hits / n;
  };
  const full =
    req.fillDepthDistanceBps === null
      ? 0
      : share(req.fillDepthDistanceBps, (amount) => amount >= req.requested * (1 - 1e-12));
  const any = share(req.lastLevelDistanceBps, (amount) => amount > 0);
  return { full_fill_probability: full, partial_fill_probability: Math.max(0, any - full), samples: n };
}

export type FillModel = 'depth_survival' | 'adverse_sweep';

export interface FillModelAnswer extends FillProbabilities {
  fill_model: FillModel;
  /** Samples of the depth-survival calibration (also when too few made the adverse-sweep model answer). */
  fill_model_samples: number;
}

/** Depth survival with at least `minSamples` samples, else the adverse-sweep model's answer. */
export function chooseFillModel(
  survival: SurvivalProbabilities,
  minSamples: number,
  adverseSweep: () => FillProbabilities,
): FillModelAnswer {
  const bySurvival = survival.samples >= minSamples;
  const p = bySurvival ? survival : adverseSweep();
  return {
    full_fill_probability: p.full_fill_probability,
    partial_fill_probability: p.partial_fill_probability,
    fill_model: bySurvival ? 'depth_survival' : 'adverse_sweep',
    fill_model_samples: survival.samples,
  };
}
