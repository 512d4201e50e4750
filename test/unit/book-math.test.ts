import { describe, expect, it } from 'vitest';
import {
  bestBidAsk,
  buyPriceForUsd,
  copyLevels,
  depthUsdWithinBps,
  depthWithinImpact,
  measuredBookDepth,
  isCrossed,
  ladder,
  midPrice,
  sellPriceForUsd,
  vwapForUsd,
  type BookSides,
} from '../../ingest/cex/book-math.js';

// asks: $100 + $202 + $510 = $812 of notional over 8 base units
// bids: $99 + $196 + $485 = $780 of notional over 8 base units
const book: BookSides = {
  asks: [
    [100, 1],
    [101, 2],
    [102, 5],
  ],
  bids: [
    [99, 1],
    [98, 2],
    [97, 5],
  ],
};

describe('book math', () => {
  it('best bid/ask and mid', () => {
    expect(bestBidAsk(book)).toEqual({ bid: [99, 1], ask: [100, 1] });
    expect(midPrice(book)).toBe(99.5);
    expect(bestBidAsk({ bids: [], asks: [] })).toEqual({ bid: null, ask: null });
    expect(midPrice({ bids: [[1, 1]], asks: [] })).toBeNull();
  });

  it('skips empty levels when looking for the touch', () => {
    expect(
      bestBidAsk({
        bids: [
          [99.5, 0],
          [99, 1],
        ],
        asks: [
          [100, 0],
          [100.5, 3],
        ],
      }),
    ).toEqual({ bid: [99, 1], ask: [100.5, 3] });
  });

  it('detects a crossed book', () => {
    expect(isCrossed(book)).toBe(false);
    expect(isCrossed({ bids: [[100, 1]], asks: [[100, 1]] })).toBe(true);
    expect(isCrossed({ bids: [[101, 1]], asks: [[100, 1]] })).toBe(true);
    expect(isCrossed({ bids: [[101, 1]], asks: [] })).toBe(false);
  });

  it('buy VWAP walks the asks', () => {
    // $50 inside the first level: 0.5 ETH at 100
    expect(buyPriceForUsd(book, 50)).toBe(100);
    // exactly the first level
    expect(buyPriceForUsd(book, 100)).toBe(100);
    // $100 (1 @ 100) + $202 (2 @ 101) = 3 units -> 302 / 3
    expect(buyPriceForUsd(book, 302)).toBeCloseTo(100.666666667, 8);
    // $302 + $102 (1 @ 102) = 4 units -> 101
    expect(buyPriceForUsd(book, 404)).toBeCloseTo(101, 10);
    // the whole side: $812 for 8 units
    expect(buyPriceForUsd(book, 812)).toBeCloseTo(101.5, 10);
    // one dollar more than the side holds
    expect(buyPriceForUsd(book, 813)).toBeNull();
  });

  it('sell VWAP walks the bids', () => {
    expect(sellPriceForUsd(book, 99)).toBe(99);
    // $99 (1 @ 99) + $1 (1/98 @ 98) -> 100 / (1 + 1/98) = 9800 / 99
    expect(sellPriceForUsd(book, 100)).toBeCloseTo(9800 / 99, 10);
    // $99 + $196 = 3 units -> 295 / 3
    expect(sellPriceForUsd(book, 295)).toBeCloseTo(98.333333333, 8);
    expect(sellPriceForUsd(book, 780)).toBeCloseTo(97.5, 10);
    expect(sellPriceForUsd(book, 781)).toBeNull();
  });

  it('rejects non-positive sizes and empty sides', () => {
    expect(vwapForUsd(book.asks, 0)).toBeNull();
    expect(vwapForUsd(book.asks, -5)).toBeNull();
    expect(vwapForUsd(book.asks, Number.NaN)).toBeNull();
    expect(vwapForUsd([], 10)).toBeNull();
    // zero-size levels contribute nothing: $150 needs 1 @ 100 + $50 @ 101
    expect(
      vwapForUsd(
        [
          [100, 1],
          [100.5, 0],
          [101, 1],
        ],
        150,
      ),
    ).toBeCloseTo(150 / (1 + 50 / 101), 10);
  });

  it('builds a ladder for the configured sizes', () => {
    const steps = ladder(book, [100, 404, 1000]);
    expect(steps).toHaveLength(3);
    expect(steps[0]).toEqual({ size_usd: 100, buy_price: 100, sell_price: expect.closeTo(9800 / 99, 10) });
    expect(steps[1]!.buy_price).toBeCloseTo(101, 10);
    // $404 sold: $99 + $196 + $109 @ 97 -> 3 + 109/97 units
    expect(steps[1]!.sell_price).toBeCloseTo(404 / (3 + 109 / 97), 10);
    expect(steps[2]).toEqual({ size_usd: 1000, buy_price: null, sell_price: null });
  });

  it('depth within N bps of the mid', () => {
    // mid 99.5; 100 bps -> [98.505, 100.495]: one level per side
    expect(depthUsdWithinBps(book, 100)).toEqual({ bid_usd: 99, ask_usd: 100 });
    // 200 bps -> [97.51, 101.49]: two levels per side
    expect(depthUsdWithinBps(book, 200)).toEqual({ bid_usd: 99 + 196, ask_usd: 100 + 202 });
    // 0 bps: nothing rests exactly at the mid
    expect(depthUsdWithinBps(book, 0)).toEqual({ bid_usd: 0, ask_usd: 0 });
    expect(depthUsdWithinBps({ bids: [], asks: [[1, 1]] }, 10)).toBeNull();
    expect(() => depthUsdWithinBps(book, -1)).toThrow(RangeError);
  });

  it('copies levels into plain arrays independent of the source', () => {
    const live = [
      [10, 1],
      [9, 2],
      [8, 3],
    ];
    const copy = copyLevels(live, 2);
    expect(copy).toEqual([
      [10, 1],
      [9, 2],
    ]);
    live[0]![0] = 11;
    live[0]![1] = 5;
    expect(copy[0]).toEqual([10, 1]);
    expect(copyLevels(live, 10)).toHaveLength(3);
  });

  it('walks a side to the size whose average price reaches the impact bound (by hand)', () => {
    // mid 99.5; buy bound 99.5 x 1.01 = 100.495: the 100 level whole, then x of the 101 level with
    // (100 + 101 x) / (1 + x) = 100.495 -> x = 0.495 / 0.505.
    const x = 0.495 / 0.505;
    const buy = depthWithinImpact(book.asks, 99.5, 100, 'buy');
    expect(buy.usd).toBeCloseTo(100 + 101 * x, 9);
    expect(buy.price).toBeCloseTo(100.495, 9);
    expect(buy.capped).toBe(false);
    // sell bound 98.505: the 99 level whole, then (99 + 98 x) / (1 + x) = 98.505 -> the same x.
    const sell = depthWithinImpact(book.bids, 99.5, 100, 'sell');
    expect(sell.usd).toBeCloseTo(99 + 98 * x, 9);
    expect(sell.price).toBeCloseTo(98.505, 9);
    // Every level inside a wide bound: the whole side, capped (the book may hold more beyond its top N).
    expect(depthWithinImpact(book.asks, 99.5, 500, 'buy')).toEqual({ usd: 812, price: 812 / 8, capped: true });
    // A bound inside the spread: nothing can be traded within it.
    expect(depthWithinImpact(book.asks, 99.5, 0.1, 'buy')).toEqual({ usd: 0, price: null, capped: false });
    // The measured depth of a quote: both sides and two exact points each (half the depth, the depth).
    const d = measuredBookDepth(book, 100)!;
    expect(d).toMatchObject({ impact_bps: 100, buy_capped: false, sell_capped: false });
    expect(d.buy_usd).toBeCloseTo(buy.usd, 9);
    expect(d.buy_points.map(([s]) => s)).toEqual([d.buy_usd / 2, d.buy_usd]);
    expect(d.buy_points[0]![1]).toBe(vwapForUsd(book.asks, d.buy_usd / 2));
    expect(d.buy_points[1]![1]).toBeCloseTo(100.495, 9);
    expect(measuredBookDepth({ bids: [], asks: book.asks }, 100)).toBeUndefined();
  });
});
