/**
 * Pure spread arithmetic between two venues' QuoteEvents (no I/O, no state).
 * Every formula here is written out in docs/metrics.md with the SQL that
 * reproduces it from the stored rows.
 *
 * A *direction* is "buy on venue B, sell on venue S". For a pair of quotes
 * (CEX, DEX) both directions are evaluated; at most one can have a positive
 * top-of-book spread unless a venue's own book is crossed.
 *
 * Units: prices in USD per base unit, sizes in USD notional, spreads and
 * costs in basis points of the buy price (1 bp = 1e-4).
 *
 *  - raw_spread_bps = raw_top = (S.bid - B.ask) / B.ask * 1e4, with the
 *    quotes' own top of book: for a CEX the best level (executable up to its
 *    bid_size/ask_size), for a DEX the quoter's price for the smallest ladder
 *    size (pool fee included).
 *  - for each ladder size s quoted by both venues and fillable on both sides
 *    (B.buy_price(s) and S.sell_price(s) not null):
 *      raw(s)      = (S.sell_price(s) - B.buy_price(s)) / B.buy_price(s) * 1e4
 *      slippage(s) = raw_top - raw(s)
 *      fees        = sum over both quotes of fee_bps unless fee_included
 *                    (CEX taker fee; a DEX pool fee is inside its quoter price)
 *      gas(s)      = (gas_usd of both quotes, null = 0) / s * 1e4
 *      net(s)      = raw(s) - fees - gas(s)   ( = raw_top - slippage - fees - gas )
 *  - net_spread_bps     = max over ladder sizes of net(s)          (at `net_size_usd`)
 *  - est_profit_usd     = max(0, max over ladder sizes of s * net(s) / 1e4)
 *                         (profit at the most profitable ladder size, `profit_size_usd`)
 *  - liquidity_depth_usd = the measured depth of the direction:
 *    min(B.depth.buy_usd, S.depth.sell_usd), each leg's largest notional
 *    within its impact bound (QuoteEvent.depth: a DEX quoter search, a CEX
 *    book walk). A leg without a measurement counts with its largest
 *    fillable ladder size, as a lower bound. `liquidity_depth_capped`: the
 *    binding leg's value is a lower bound (hard maximum, end of the book, or
 *    no measurement).
 *  - capacity_usd = the size at which the net spread falls to zero, looked
 *    for up to the depth: each leg's price is a measured curve (its ladder
 *    and its depth points, linear between measured sizes); net(s) is taken on
 *    the union of both curves' sizes up to the depth, and between the largest
 *    size with net > 0 and the next one the crossing net(s) = 0 is solved by
 *    bisection on the curves. Net still positive at the depth: capacity =
 *    depth, `capacity_capped` (at least that much). Nothing profitable: 0.
 *
 * Design note: est_profit_usd stays at the ladder sizes (the sizes every
 * venue quotes, reproducible from the stored ladders in SQL); capacity and
 * depth use the measurements, which reach past the ladder.
 */
import type { LadderStep, QuoteEvent, RevisionNumbers } from '../core/events/market.js';

export interface SizeEvaluation {
  size_usd: number;
  buy_price: number;
  sell_price: number;
  raw_bps: number;
  slippage_bps: number;
  gas_bps: number;
  net_bps: number;
  profit_usd: number;
}

/**
 * One direction evaluated: its venues, the evaluation at each common ladder
 * size, and the numbers a dislocation revision records (RevisionNumbers,
 * core/events/market.ts: the names of the event and the API). Without a
 * fillable size, `net_spread_bps` is raw_top - fees (gas and slippage
 * unknown); `capacity_capped`: net still positive at the depth limit;
 * `liquidity_depth_capped`: the binding leg's depth is a lower bound;
 * `gas_usd`: gas of both legs (a DEX swap; the CEX leg has none).
 */
export type DirectionEvaluation = RevisionNumbers & {
  buy_venue: string;
  sell_venue: string;
  steps: SizeEvaluation[];
};

/** Fee in bps a taker pays on top of this quote's prices. */
export const extraFeeBps = (q: Pick<QuoteEvent, 'fee_bps' | 'fee_included'>): number =>
  q.fee_included ? 0 : q.fee_bps;

const bps = (sell: number, buy: number): number => ((sell - buy) / buy) * 1e4;

/** Sizes of `a` also quoted by `b`, ascending, each once. */
function commonSteps(
  buy: readonly LadderStep[],
  sell: readonly LadderStep[],
): { size: number; buy: number; sell: number }[] {
  // Ladders hold a handful of sizes: linear scans, no Map/Set per evaluation (this runs twice per spread sample).
  const out: { size: number; buy: number; sell: number }[] = [];
  for (let i = 0; i < buy.length; i++) {
    const b = buy[i]!;
    let repeated = false;
    for (let j = 0; j < i && !repeated; j++) repeated = buy[j]!.size_usd === b.size_usd; // the first step of a size counts
    if (repeated) continue;
    let s: LadderStep | undefined;
    for (let j = sell.length - 1; j >= 0 && !s; j--) if (sell[j]!.size_usd === b.size_usd) s = sell[j]; // the last one counts
    if (!s || b.buy_price === null || s.sell_price === null) continue;
    out.push({ size: b.size_usd, buy: b.buy_price, sell: s.sell_price });
  }
  return out.sort((x, y) => x.size - y.size);
}

/** Evaluates "buy on `buy`, sell on `sell`" (both quotes of the same pair). */
export function evaluateDirection(buy: QuoteEvent, sell: QuoteEvent): DirectionEvaluation {
  const rawTop = bps(sell.bid, buy.ask);
  const fees = extraFeeBps(buy) + extraFeeBps(sell);
  const gasUsd = (buy.gas_usd ?? 0) + (sell.gas_usd ?? 0);
  const steps: SizeEvaluation[] = commonSteps(buy.ladder, sell.ladder).map(({ size, buy: bp, sell: sp }) => {
    const raw = bps(sp, bp);
    const gas = (gasUsd / size) * 1e4;
    const net = raw - fees - gas;
    return {
      size_usd: size,
      buy_price: bp,
      sell_price: sp,
      raw_bps: raw,
      slippage_bps: rawTop - raw,
      gas_bps: gas,
      net_bps: net,
      profit_usd: (size * net) / 1e4,
    };
  });

  let bestNet = rawTop - fees;
  let netSize = 0;
  let profit = 0;
  let profitSize = 0;
  steps.forEach((s, i) => {
    if (i === 0 || s.net_bps > bestNet) {
      bestNet = s.net_bps;
      netSize = s.size_usd;
    }
    if (s.net_bps > 0 && s.profit_usd > profit) {
      profit = s.profit_usd;
      profitSize = s.size_usd;
    }
  });

  const depth = directionDepth(buy, sell);
  // net(s) <= raw_top - fees at every size (prices only worsen with size): below that nothing can pay.
  const capacity =
    rawTop - fees > 0 && depth.usd > 0 ? capacityOf(buy, sell, fees, gasUsd, depth) : { usd: 0, capped: false };

  return {
    buy_venue: buy.venue,
    sell_venue: sell.venue,
    buy_price: buy.ask,
    sell_price: sell.bid,
    raw_spread_bps: rawTop,
    fees_bps: fees,
    gas_usd: gasUsd,
    steps,
    net_spread_bps: bestNet,
    net_size_usd: netSize,
    est_profit_usd: profit,
    profit_size_usd: profitSize,
    capacity_usd: capacity.usd,
    capacity_capped: capacity.capped,
    liquidity_depth_usd: depth.usd,
    liquidity_depth_capped: depth.capped,
  };
}

/** A leg's depth on one side: measured, or its largest fillable ladder size as a lower bound. */
function legDepth(q: QuoteEvent, side: 'buy' | 'sell'): { usd: number; capped: boolean } {
  if (q.depth)
    return side === 'buy'
      ? { usd: q.depth.buy_usd, capped: q.depth.buy_capped }
      : { usd: q.depth.sell_usd, capped: q.depth.sell_capped };
  let largest = 0;
  for (const step of q.ladder)
    if ((side === 'buy' ? step.buy_price : step.sell_price) !== null) largest = Math.max(largest, step.size_usd);
  return { usd: largest, capped: true };
}

/** Depth of "buy on `buy`, sell on `sell`": the smaller leg; a lower bound when the binding leg's is (both, on a tie). */
export function directionDepth(buy: QuoteEvent, sell: QuoteEvent): { usd: number; capped: boolean } {
  const b = legDepth(buy, 'buy');
  const s = legDepth(sell, 'sell');
  if (b.usd < s.usd) return b;
  if (s.usd < b.usd) return s;
  return { usd: b.usd, capped: b.capped && s.capped };
}

/** A measured price curve: sizes ascending, the price at each. */
interface Curve {
  sizes: number[];
  prices: number[];
}

/** A leg's executable prices on one side: its ladder and its depth points, by size (a ladder price wins a tie). */
export function legCurve(q: QuoteEvent, side: 'buy' | 'sell'): Curve {
  const points: [number, number][] = [];
  for (const step of q.ladder) {
    const price = side === 'buy' ? step.buy_price : step.sell_price;
    if (price !== null) points.push([step.size_usd, price]);
  }
  const ladderPoints = points.length;
  for (const p of (side === 'buy' ? q.depth?.buy_points : q.depth?.sell_points) ?? []) {
    let known = false;
    for (let i = 0; i < ladderPoints && !known; i++) known = points[i]![0] === p[0];
    if (!known) points.push([p[0], p[1]]);
  }
  points.sort((a, b) => a[0] - b[0]);
  const sizes: number[] = [];
  const prices: number[] = [];
  for (const [size, price] of points) {
    if (sizes.length && sizes[sizes.length - 1] === size) continue;
    sizes.push(size);
    prices.push(price);
  }
  return { sizes, prices };
}

/** Price on a curve at `size`: linear between measured sizes, the first price below them, NaN above them. */
export function curvePrice(c: Curve, size: number): number {
  const n = c.sizes.length;
  if (!n || size > c.sizes[n - 1]!) return NaN;
  if (size <= c.sizes[0]!) return c.prices[0]!;
  let i = 1;
  while (c.sizes[i]! < size) i++;
  const s0 = c.sizes[i - 1]!;
  const s1 = c.sizes[i]!;
  const p0 = c.prices[i - 1]!;
  return p0 + ((c.prices[i]! - p0) * (size - s0)) / (s1 - s0);
}

/** Bisection steps for the zero crossing: the bracket shrinks below 1e-9 of its size (or 60 halvings). */
const ROOT_REL_TOLERANCE = 1e-9;

function capacityOf(
  buy: QuoteEvent,
  sell: QuoteEvent,
  fees: number,
  gasUsd: number,
  depth: { usd: number; capped: boolean },
): { usd: number; capped: boolean } {
  const buyCurve = legCurve(buy, 'buy');
  const sellCurve = legCurve(sell, 'sell');
  const net = (size: number): number => {
    const b = curvePrice(buyCurve, size);
    const s = curvePrice(sellCurve, size);
    return ((s - b) / b) * 1e4 - fees - (gasUsd / size) * 1e4;
  };
  const limit = depth.usd;
  const grid: number[] = [];
  for (const size of buyCurve.sizes) if (size < limit) grid.push(size);
  for (const size of sellCurve.sizes) if (size < limit) grid.push(size);
  grid.push(limit);
  grid.sort((a, b) => a - b);
  let last = -1;
  let previous = NaN;
  const values: number[] = [];
  for (const size of grid) {
    if (size === previous) continue;
    previous = size;
    const n = net(size);
    values.push(size);
    if (n > 0) last = values.length - 1;
  }
  if (last < 0) return { usd: 0, capped: false };
  if (last === values.length - 1) return { usd: limit, capped: true };
  let lo = values[last]!;
  let hi = values[last + 1]!;
  for (let i = 0; i < 60 && hi - lo > ROOT_REL_TOLERANCE * hi; i++) {
    const mid = (lo + hi) / 2;
    if (net(mid) > 0) lo = mid;
    else hi = mid;
  }
  return { usd: lo, capped: false };
}

/** Both directions between two quotes of one pair: [buy a / sell b, buy b / sell a]. */
export function evaluateBothDirections(a: QuoteEvent, b: QuoteEvent): [DirectionEvaluation, DirectionEvaluation] {
  return [evaluateDirection(a, b), evaluateDirection(b, a)];
}

/**
 * Executable price per base unit for `sizeUsd` on one side of a ladder:
 * the step's price at a quoted size; between two fillable steps, linear in
 * size; null above the largest fillable size, and the smallest step's price
 * below it.
 */
export function priceAtSize(ladder: readonly LadderStep[], sizeUsd: number, side: 'buy' | 'sell'): number | null {
  const pts = ladder
    .map((s) => ({ size: s.size_usd, price: side === 'buy' ? s.buy_price : s.sell_price }))
    .filter((p): p is { size: number; price: number } => p.price !== null)
    .sort((x, y) => x.size - y.size);
  if (!pts.length) return null;
  if (sizeUsd <= pts[0]!.size) return pts[0]!.price;
  for (let i = 1; i < pts.length; i++) {
    const hi = pts[i]!;
    if (sizeUsd <= hi.size) {
      const lo = pts[i - 1]!;
      return lo.price + ((hi.price - lo.price) * (sizeUsd - lo.size)) / (hi.size - lo.size);
    }
  }
  return null;
}
