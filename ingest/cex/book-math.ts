/**
 * Pure order-book arithmetic for the CEX ingestor (no I/O, no ccxt types):
 * best bid/ask, the executable VWAP of a USD-sized taker order walked through
 * the book, the ladder of such prices for a set of sizes, and the USD depth
 * resting within N bps of the mid.
 *
 * Levels are `[price, size in base units]`, best first (bids descending,
 * asks ascending), as ccxt delivers them. Prices are quote (USD) per base unit.
 */
import type { LadderStep, QuoteDepth } from '../../core/events/market.js';

export type Level = readonly [price: number, size: number];

export interface BookSides {
  readonly bids: readonly Level[];
  readonly asks: readonly Level[];
}

export interface Top {
  bid: Level | null;
  ask: Level | null;
}

/** Relative tolerance when deciding whether the book covered the requested notional (float sums). */
const FILL_EPSILON = 1e-9;

const usable = (level: Level | undefined): level is Level =>
  level !== undefined && Number.isFinite(level[0]) && level[0] > 0 && Number.isFinite(level[1]) && level[1] > 0;

/** The first level with a positive price and size on each side (empty levels are skipped), or null. */
export function bestBidAsk(book: BookSides): Top {
  return { bid: book.bids.find((l) => usable(l)) ?? null, ask: book.asks.find((l) => usable(l)) ?? null };
}

/** True when both sides exist and the best bid is at or above the best ask. */
export function isCrossed(book: BookSides): boolean {
  const { bid, ask } = bestBidAsk(book);
  return bid !== null && ask !== null && bid[0] >= ask[0];
}

/**
 * Walks `levels` (best first) until `sizeUsd` of notional is filled and returns
 * the average price per base unit (`sizeUsd / base filled`). Null when the
 * levels hold less than `sizeUsd` of notional, or when `sizeUsd` is not a
 * positive finite number.
 */
export function vwapForUsd(levels: readonly Level[], sizeUsd: number): number | null {
  if (!(Number.isFinite(sizeUsd) && sizeUsd > 0)) return null;
  let remainingUsd = sizeUsd;
  let base = 0;
  let levelsUsed = 0;
  let firstPrice = 0;
  for (const level of levels) {
    if (!usable(level)) continue;
    const [price, size] = level;
    if (levelsUsed++ === 0) firstPrice = price;
    const levelUsd = price * size;
    if (levelUsd >= remainingUsd) {
      base += remainingUsd / price;
      remainingUsd = 0;
      break;
    }
    base += size;
    remainingUsd -= levelUsd;
  }
  if (remainingUsd > sizeUsd * FILL_EPSILON || base <= 0) return null;
  // Filled at one price: that price exactly (sizeUsd / (sizeUsd / price) can be off in the last bit).
  return levelsUsed === 1 ? firstPrice : sizeUsd / base;
}

/** Average price per base unit a taker pays to buy `sizeUsd` worth (walks the asks). */
export const buyPriceForUsd = (book: BookSides, sizeUsd: number) => vwapForUsd(book.asks, sizeUsd);

/** Average price per base unit a taker receives when selling `sizeUsd` worth (walks the bids). */
export const sellPriceForUsd = (book: BookSides, sizeUsd: number) => vwapForUsd(book.bids, sizeUsd);

/** One LadderStep per size (fees not included; the caller reports the fee separately). */
export function ladder(book: BookSides, sizesUsd: readonly number[]): LadderStep[] {
  return sizesUsd.map((size) => ({
    size_usd: size,
    buy_price: buyPriceForUsd(book, size),
    sell_price: sellPriceForUsd(book, size),
  }));
}

/** Mid of the best bid and ask, or null when a side is missing. */
export function midPrice(book: BookSides): number | null {
  const { bid, ask } = bestBidAsk(book);
  return bid && ask ? (bid[0] + ask[0]) / 2 : null;
}

/**
 * USD notional resting within `bps` of the mid on each side: bids priced at or
 * above `mid * (1 - bps/10000)`, asks at or below `mid * (1 + bps/10000)`.
 * Null when the book has no mid (a side is empty).
 */
export function depthUsdWithinBps(book: BookSides, bps: number): { bid_usd: number; ask_usd: number } | null {
  if (!(Number.isFinite(bps) && bps >= 0))
    throw new RangeError(`depthUsdWithinBps: bps must be a non-negative number, got ${bps}`);
  const mid = midPrice(book);
  if (mid === null) return null;
  const lo = mid * (1 - bps / 10_000);
  const hi = mid * (1 + bps / 10_000);
  let bidUsd = 0;
  for (const level of book.bids) {
    if (!usable(level)) continue;
    if (level[0] < lo) break;
    bidUsd += level[0] * level[1];
  }
  let askUsd = 0;
  for (const level of book.asks) {
    if (!usable(level)) continue;
    if (level[0] > hi) break;
    askUsd += level[0] * level[1];
  }
  return { bid_usd: bidUsd, ask_usd: askUsd };
}

/** Plain-array deep copy of the first `depth` levels (ccxt's book sides are live, mutated objects). */
export function copyLevels(levels: ArrayLike<ArrayLike<unknown>>, depth: number): [number, number][] {
  const n = Math.min(levels.length, Math.max(0, depth));
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const level = levels[i];
    if (!level) continue;
    const price = Number(level[0]);
    const size = Number(level[1]);
    if (Number.isFinite(price) && Number.isFinite(size)) out.push([price, size]);
  }
  return out;
}

/** Depth of one side of a book within an impact bound (see depthWithinImpact). */
export interface SideDepth {
  /** Largest USD notional whose average price stays within the bound (the whole side when `capped`). */
  usd: number;
  /** Average price per base unit of that notional (null when `usd` is 0). */
  price: number | null;
  /** The levels ran out before the bound: the depth is at least `usd` (a top-N book shows only part of the side). */
  capped: boolean;
}

/**
 * The largest USD notional a taker can buy (`side: 'buy'`, walking the asks)
 * or sell (walking the bids) with its average execution price (VWAP) within
 * `bps` of `mid`: buy VWAP <= mid x (1 + bps/1e4), sell VWAP >= mid x (1 - bps/1e4).
 * Exact, level by level: a level priced inside the bound is taken whole (the
 * VWAP stays inside); in the first level priced beyond it, the partial size x
 * that brings the VWAP exactly to the bound L solves (Q + p x) / (B + x) = L
 * (Q, B: notional and base taken so far), x = (L B - Q) / (p - L). The point
 * (usd, L) is then on the side's VWAP curve. When every level is inside the
 * bound, the whole side is the depth and `capped` is true.
 */
export function depthWithinImpact(levels: readonly Level[], mid: number, bps: number, side: 'buy' | 'sell'): SideDepth {
  if (!(mid > 0) || !(bps > 0))
    throw new RangeError(`depthWithinImpact: mid and bps must be positive (mid ${mid}, bps ${bps})`);
  const bound = side === 'buy' ? mid * (1 + bps / 1e4) : mid * (1 - bps / 1e4);
  let quote = 0;
  let base = 0;
  for (const level of levels) {
    if (!usable(level)) continue;
    const [price, size] = level;
    const inside = side === 'buy' ? price <= bound : price >= bound;
    if (inside) {
      quote += price * size;
      base += size;
      continue;
    }
    // (Q + p x) / (B + x) = L  ->  x = (L B - Q) / (p - L); the same for both sides (signs cancel).
    const x = Math.min(size, Math.max(0, (bound * base - quote) / (price - bound)));
    quote += price * x;
    base += x;
    return { usd: quote, price: base > 0 ? quote / base : null, capped: false };
  }
  return { usd: quote, price: base > 0 ? quote / base : null, capped: true };
}

/**
 * The measured depth of a book (QuoteEvent.depth): per side depthWithinImpact
 * against the book's mid, with two measured points of the side's VWAP curve
 * beside the ladder, at half the depth and at the depth (both exact walks).
 * Undefined when the book has no mid (a side is empty).
 */
export function measuredBookDepth(book: BookSides, impactBps: number): QuoteDepth | undefined {
  const mid = midPrice(book);
  if (mid === null) return undefined;
  const buy = depthWithinImpact(book.asks, mid, impactBps, 'buy');
  const sell = depthWithinImpact(book.bids, mid, impactBps, 'sell');
  const points = (d: SideDepth, levels: readonly Level[]): [number, number][] => {
    if (!(d.usd > 0) || d.price === null) return [];
    const half = vwapForUsd(levels, d.usd / 2);
    return half === null
      ? [[d.usd, d.price]]
      : [
          [d.usd / 2, half],
          [d.usd, d.price],
        ];
  };
  return {
    impact_bps: impactBps,
    buy_usd: buy.usd,
    sell_usd: sell.usd,
    buy_capped: buy.capped,
    sell_capped: sell.capped,
    buy_points: points(buy, book.asks),
    sell_points: points(sell, book.bids),
  };
}
