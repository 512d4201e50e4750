/**
 * The impact simulation's arithmetic, pure: a paper taker order walked through
 * one level-2 snapshot, and the fill-probability model. Nothing here places an
 * order or reads a store (impact-simulation.ts does the reads).
 *
 * Walk. A BUY consumes the asks from the best (lowest) price up, a SELL the
 * bids from the best (highest) price down, until the requested size is filled
 * (in base units for `size_base`, in USD notional at the level prices for
 * `size_usd`) or the visible side is exhausted. Levels of size 0 are ignored.
 *
 * | field | definition |
 * |---|---|
 * | mid_price | (best_bid + best_ask) / 2 |
 * | spread_bps | (best_ask - best_bid) / mid x 1e4 |
 * | requested_size_base / _usd | the requested size, and its equivalent at mid (`size_usd / mid` or `size_base x mid`) |
 * | expected_fill_price | VWAP of the fillable part: filled USD / filled base |
 * | slippage_bps | BUY: (VWAP - mid) / mid x 1e4; SELL: (mid - VWAP) / mid x 1e4 (positive = worse than mid) |
 * | fillable_size_base / _usd | what the visible side fills |
 * | fill_ratio | fillable / requested, in the unit of the request (0..1) |
 * | levels_consumed | levels touched, the last one possibly partly |
 * | opposite_depth_usd | USD notional of the whole side the order trades against (asks for a BUY, bids for a SELL) |
 * | executable | the visible side fills the whole size (fill_ratio = 1) |
 *
 * Fill probabilities. The depth-survival model (depth-survival.ts) answers
 * when the stored book history holds enough samples; otherwise the
 * adverse-sweep model below does (the answer's `fill_model` names which).
 *
 * Adverse-sweep model. Between the snapshot and the
 * order's arrival (horizon h = book age + the venue's median REST round trip)
 * the price moves by X ~ Normal(0, sigma_h) basis points, sigma_h =
 * sigma_1s x sqrt(h in seconds). An adverse move of X > 0 bps is taken to
 * sweep (other takers lift) the levels within X bps of the side's best price;
 * a favourable move removes nothing. With d_i the distance of level i from
 * the best price (bps) and a_i its amount (base, or USD for `size_usd`):
 *   - full fill iff the levels beyond the sweep still hold the size:
 *     X <= d_k, k the deepest level with sum_{i >= k} a_i >= size, so
 *     full_fill_probability = Phi(d_k / sigma_h) (0 when the side cannot hold the size);
 *   - some fill iff any level survives: X <= d_last, so
 *     partial_fill_probability = Phi(d_last / sigma_h) - full_fill_probability.
 * sigma_h = 0 (a perfectly calm market) gives 1 or 0. sigma_1s is the realised
 * volatility of the venue's mid over the 15 minutes before the snapshot:
 * sqrt(sum r_i^2 / sum dt_i), r_i the log return between consecutive quotes in
 * bps, dt_i in seconds; with fewer than two quotes, half the snapshot's spread
 * per sqrt(second).
 */

export type Side = 'buy' | 'sell';
export type Level = readonly [price: number, size: number];

export interface WalkRequest {
  side: Side;
  sizeBase?: number | undefined;
  sizeUsd?: number | undefined;
  bids: readonly Level[];
  asks: readonly Level[];
}

export interface Walk {
  mid_price: number;
  best_bid: number;
  best_ask: number;
  spread_bps: number;
  requested_size_base: number;
  requested_size_usd: number;
  expected_fill_price: number;
  slippage_bps: number;
  fillable_size_base: number;
  fillable_size_usd: number;
  fill_ratio: number;
  levels_consumed: number;
  opposite_depth_usd: number;
  executable: boolean;
  /** Distances (bps from the side's best price) used by the probability models. */
  full_fill_distance_bps: number | null;
  /** Distance of the deepest level the walk consumes for the whole size (depth-survival model); null when not executable. */
  fill_depth_distance_bps: number | null;
  last_level_distance_bps: number;
}

const EPS = 1e-12;

/** Positive levels, best first. */
export function cleanSide(levels: readonly Level[], side: 'bids' | 'asks'): Level[] {
  const kept = levels
    .filter(([p, s]) => Number.isFinite(p) && Number.isFinite(s) && p > 0 && s > 0)
    .map(([p, s]) => [p, s] as const);
  return kept.sort((a, b) => (side === 'bids' ? b[0] - a[0] : a[0] - b[0]));
}

export function walkBook(req: WalkRequest): Walk {
  const bids = cleanSide(req.bids, 'bids');
  const asks = cleanSide(req.asks, 'asks');
  const bestBid = bids[0]?.[0];
  const bestAsk = asks[0]?.[0];
  if (bestBid === undefined || bestAsk === undefined)
    throw new RangeError('the book needs at least one bid and one ask');
  const mid = (bestBid + bestAsk) / 2;
  const byUsd = req.sizeUsd !== undefined;
  const requested = byUsd ? req.sizeUsd! : req.sizeBase!;
  if (!(requested > 0)) throw new RangeError('the size must be positive');
  const levels = req.side === 'buy' ? asks : bids;

  let remaining = requested;
  let filledBase = 0;
  let filledUsd = 0;
  let consumed = 0;
  for (const [price, size] of levels) {
    if (remaining <= requested * EPS) break;
    const available = byUsd ? price * size : size;
    const take = Math.min(available, remaining);
    const base = byUsd ? take / price : take;
    filledBase += base;
    filledUsd += base * price;
    remaining -= take;
    consumed += 1;
  }
  const filled = byUsd ? filledUsd : filledBase;
  const fillRatio = Math.min(1, filled / requested);
  const vwap = filledBase > 0 ? filledUsd / filledBase : levels[0]![0];
  const slippage = req.side === 'buy' ? ((vwap - mid) / mid) * 1e4 : ((mid - vwap) / mid) * 1e4;

  // Adverse-sweep distances.
  const best = levels[0]![0];
  const distance = (price: number) => (Math.abs(price - best) / best) * 1e4;
  const amounts = levels.map(([p, s]) => (byUsd ? p * s : s));
  let tail = 0;
  let fullDistance: number | null = null;
  for (let k = levels.length - 1; k >= 0; k--) {
    tail += amounts[k]!;
    if (tail >= requested * (1 - EPS)) {
      fullDistance = distance(levels[k]![0]);
      break;
    }
  }

  const executable = fillRatio >= 1 - 1e-9;
  return {
    mid_price: mid,
    best_bid: bestBid,
    best_ask: bestAsk,
    spread_bps: ((bestAsk - bestBid) / mid) * 1e4,
    requested_size_base: byUsd ? requested / mid : requested,
    requested_size_usd: byUsd ? requested : requested * mid,
    expected_fill_price: vwap,
    slippage_bps: slippage,
    fillable_size_base: filledBase,
    fillable_size_usd: filledUsd,
    fill_ratio: fillRatio,
    levels_consumed: consumed,
    opposite_depth_usd: levels.reduce((acc, [p, s]) => acc + p * s, 0),
    executable,
    full_fill_distance_bps: fullDistance,
    fill_depth_distance_bps: executable && consumed > 0 ? distance(levels[consumed - 1]![0]) : null,
    last_level_distance_bps: distance(levels[levels.length - 1]![0]),
  };
}

export interface FillProbabilities {
  full_fill_probability: number;
  partial_fill_probability: number;
}

/** The adverse-sweep model (module comment) for a move of standard deviation `sigmaBps` over the horizon. */
export function fillProbabilities(
  walk: Pick<Walk, 'full_fill_distance_bps' | 'last_level_distance_bps'>,
  sigmaBps: number,
): FillProbabilities {
  const p = (x: number) => (sigmaBps > 0 ? normalCdf(x / sigmaBps) : x >= 0 ? 1 : 0);
  const any = p(walk.last_level_distance_bps);
  const full = walk.full_fill_distance_bps === null ? 0 : p(walk.full_fill_distance_bps);
  return { full_fill_probability: full, partial_fill_probability: Math.max(0, any - full) };
}

/** Realised volatility of a mid series, bps per sqrt(second); undefined with fewer than two distinct times. */
export function realisedVolatility(points: readonly { t_ms: number; mid: number }[]): number | undefined {
  // One mid per instant (the later quote of an instant stands), in time order.
  const byTime = new Map<number, number>();
  for (const p of [...points].filter((q) => q.mid > 0).sort((a, b) => a.t_ms - b.t_ms)) byTime.set(p.t_ms, p.mid);
  const series = [...byTime.entries()];
  let sumSq = 0;
  let sumDt = 0;
  for (let i = 1; i < series.length; i++) {
    const [t0, m0] = series[i - 1]!;
    const [t1, m1] = series[i]!;
    const r = Math.log(m1 / m0) * 1e4;
    sumSq += r * r;
    sumDt += (t1 - t0) / 1000;
  }
  return sumDt > 0 ? Math.sqrt(sumSq / sumDt) : undefined;
}

/** Standard normal CDF via erf (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7). */
export function normalCdf(z: number): number {
  if (z === Infinity) return 1;
  if (z === -Infinity) return 0;
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}
