/**
 * Spread arithmetic against numbers computed by hand (docs/metrics.md).
 *
 * CEX (coinbase, taker fee 10 bps, not included):
 *   top bid 2010 / ask 2011; ladder  1k: 2011/2010, 10k: 2012/2009, 50k: 2015/2005
 * DEX (uniswap_v3_base, pool fee 5 bps inside the quoter prices, gas $0.50):
 *   top bid 1999 / ask 2000; ladder  1k: 2000/1999, 10k: 2002/1997, 50k: 2010/1990
 *
 * Buy DEX, sell CEX:
 *   raw_top = (2010 - 2000) / 2000 * 1e4                    = 50 bps
 *   fees    = 10 (CEX) + 0 (DEX fee included)               = 10 bps
 *   1k:  raw (2010-2000)/2000 = 50,      slip 0,         gas 0.5/1000*1e4 = 5,   net 35
 *   10k: raw (2009-2002)/2002 = 34.965…, slip 15.034…,   gas 0.5,           net 24.465…
 *   50k: raw (2005-2010)/2010 = -24.875…, slip 74.875…,  gas 0.1,           net -34.975…
 *   best net 35 bps (at 1k); profit 1k: 3.5 $, 10k: 24.465… $ -> est_profit 24.465… $ at 10k
 *   capacity: net > 0 at 10k, < 0 at 50k; between them the prices are linear in size,
 *     B(s) = 2002 + 8 x, S(s) = 2009 - 4 x with x = (s - 10k) / 40k, and
 *     (S - B) / B * 1e4 - 10 - 0.5 / s * 1e4 = 0 at s = 26 522.974… $
 *   depth (no measurement on either quote): the largest fillable ladder size, 50k, a lower bound (capped)
 * Buy CEX, sell DEX: raw_top = (1999 - 2011) / 2011 * 1e4 = -59.67… bps, nothing profitable.
 */
import { describe, expect, it } from 'vitest';
import { evaluateBothDirections, evaluateDirection, priceAtSize } from '../../aggregate/spread-math.js';
import { cexQuote, dexQuote } from '../helpers/market-fixtures.js';

/** The worked example's zero crossing, by an independent bisection on the hand-written price lines. */
function crossing(): number {
  const net = (s: number) => {
    const x = (s - 10000) / 40000;
    const b = 2002 + 8 * x;
    const sell = 2009 - 4 * x;
    return ((sell - b) / b) * 1e4 - 10 - (0.5 / s) * 1e4;
  };
  let lo = 10000;
  let hi = 50000;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (net(mid) > 0) lo = mid;
    else hi = mid;
  }
  return lo;
}

describe('spread math', () => {
  it('computes raw, fees, gas, slippage and net per ladder size', () => {
    const e = evaluateDirection(dexQuote(), cexQuote());
    expect(e.buy_venue).toBe('uniswap_v3_base');
    expect(e.sell_venue).toBe('coinbase');
    expect(e.buy_price).toBe(2000);
    expect(e.sell_price).toBe(2010);
    expect(e.raw_spread_bps).toBeCloseTo(50, 10);
    expect(e.fees_bps).toBe(10);
    expect(e.gas_usd).toBe(0.5);
    expect(e.steps.map((s) => s.size_usd)).toEqual([1000, 10000, 50000]);
    const [s1, s10, s50] = e.steps as [(typeof e.steps)[0], (typeof e.steps)[0], (typeof e.steps)[0]];
    expect(s1.raw_bps).toBeCloseTo(50, 10);
    expect(s1.slippage_bps).toBeCloseTo(0, 10);
    expect(s1.gas_bps).toBeCloseTo(5, 10);
    expect(s1.net_bps).toBeCloseTo(35, 10);
    expect(s10.raw_bps).toBeCloseTo(34.965034965, 8);
    expect(s10.slippage_bps).toBeCloseTo(15.034965035, 8);
    expect(s10.gas_bps).toBeCloseTo(0.5, 10);
    expect(s10.net_bps).toBeCloseTo(24.465034965, 8);
    expect(s50.raw_bps).toBeCloseTo(-24.875621891, 8);
    expect(s50.slippage_bps).toBeCloseTo(74.875621891, 8);
    expect(s50.gas_bps).toBeCloseTo(0.1, 10);
    expect(s50.net_bps).toBeCloseTo(-34.975621891, 8);
  });

  it('derives best net, profit, capacity (zero crossing on the price curves) and depth', () => {
    const e = evaluateDirection(dexQuote(), cexQuote());
    expect(e.net_spread_bps).toBeCloseTo(35, 10);
    expect(e.net_size_usd).toBe(1000);
    expect(e.est_profit_usd).toBeCloseTo(24.465034965, 8);
    expect(e.profit_size_usd).toBe(10000);
    expect(e.capacity_usd).toBeCloseTo(crossing(), 4);
    expect(e.capacity_usd).toBeCloseTo(26522.974143, 4);
    expect(e.capacity_capped).toBe(false);
    expect(e.liquidity_depth_usd).toBe(50000);
    expect(e.liquidity_depth_capped).toBe(true);
  });

  it('takes depth from the measurements, capacity up to it, and marks lower bounds', () => {
    // DEX buy side measured to 60k within the bound (price 2012 there), CEX sell side to 80k (2002): depth 60k, measured.
    const dex = dexQuote({
      depth: {
        impact_bps: 100,
        buy_usd: 60000,
        sell_usd: 70000,
        buy_capped: false,
        sell_capped: false,
        buy_points: [[60000, 2012]],
        sell_points: [[70000, 1985]],
      },
    });
    const cex = cexQuote({
      depth: {
        impact_bps: 100,
        buy_usd: 90000,
        sell_usd: 80000,
        buy_capped: false,
        sell_capped: true,
        buy_points: [[90000, 2020]],
        sell_points: [[80000, 2002]],
      },
    });
    const e = evaluateDirection(dex, cex);
    expect(e.liquidity_depth_usd).toBe(60000);
    expect(e.liquidity_depth_capped).toBe(false); // the binding (smaller) leg is measured
    expect(e.capacity_usd).toBeCloseTo(crossing(), 4); // the crossing lies inside the ladder
    // The CEX side binds and is capped (end of its book): a lower bound.
    const thin = evaluateDirection(dexQuote({ depth: { ...dex.depth!, buy_usd: 95000 } }), cex);
    expect(thin.liquidity_depth_usd).toBe(80000);
    expect(thin.liquidity_depth_capped).toBe(true);
    // A gap so wide that net is still positive at the depth: capacity = depth, capped (at least that much).
    const wide = evaluateDirection(
      dexQuote({
        ask: 1900,
        ladder: [{ size_usd: 1000, buy_price: 1900, sell_price: 1899 }],
        depth: { ...dex.depth!, buy_usd: 40000, buy_points: [[40000, 1920]] },
      }),
      cex,
    );
    expect(wide.liquidity_depth_usd).toBe(40000);
    expect(wide.capacity_usd).toBe(40000);
    expect(wide.capacity_capped).toBe(true);
  });

  it('finds nothing profitable in the other direction', () => {
    const [, back] = evaluateBothDirections(dexQuote(), cexQuote());
    expect(back.buy_venue).toBe('coinbase');
    expect(back.raw_spread_bps).toBeCloseTo(-59.671805072, 8);
    expect(back.capacity_usd).toBe(0);
    expect(back.est_profit_usd).toBe(0);
    expect(back.profit_size_usd).toBe(0);
    // best net at 1k: raw (1999-2011)/2011 = -59.67, fees 10, gas 5
    expect(back.net_spread_bps).toBeCloseTo(-74.671805072, 8);
    expect(back.liquidity_depth_usd).toBe(50000);
    expect(back.capacity_capped).toBe(false);
  });

  it('subtracts a DEX pool fee that is not inside the quote', () => {
    const e = evaluateDirection(dexQuote({ fee_included: false }), cexQuote());
    expect(e.fees_bps).toBe(15);
    expect(e.steps[0]!.net_bps).toBeCloseTo(30, 10);
  });

  it('keeps the depth as capacity (capped) when every measured size is profitable, and 0 when none is', () => {
    const wide = evaluateDirection(
      dexQuote({
        ask: 1900,
        ladder: [
          { size_usd: 1000, buy_price: 1900, sell_price: 1899 },
          { size_usd: 10000, buy_price: 1901, sell_price: 1898 },
        ],
      }),
      cexQuote(),
    );
    expect(wide.capacity_usd).toBe(10000);
    expect(wide.capacity_capped).toBe(true);
    // net at 10k: (2009-1901)/1901*1e4 - 10 - 0.5
    expect(wide.est_profit_usd).toBeCloseTo(10000 * ((((2009 - 1901) / 1901) * 1e4 - 10.5) / 1e4), 8);
    const gasOnly = evaluateDirection(
      dexQuote({ gas_usd: 100, ladder: [{ size_usd: 1000, buy_price: 2000, sell_price: 1999 }] }),
      cexQuote(),
    );
    // raw 50 - fees 10 - gas 100/1000*1e4 = 1000 bps -> -960
    expect(gasOnly.net_spread_bps).toBeCloseTo(-960, 8);
    expect(gasOnly.capacity_usd).toBe(0);
  });

  it('uses only sizes quoted and fillable on both venues', () => {
    const e = evaluateDirection(
      dexQuote({
        ladder: [
          { size_usd: 1000, buy_price: 2000, sell_price: 1999 },
          { size_usd: 10000, buy_price: null, sell_price: 1997 },
          { size_usd: 25000, buy_price: 2005, sell_price: 1995 },
        ],
      }),
      cexQuote(),
    );
    expect(e.steps.map((s) => s.size_usd)).toEqual([1000]);
    // Depth: the DEX buys fill to 25k (its largest fillable size, a lower bound), the CEX sells to 50k.
    expect(e.liquidity_depth_usd).toBe(25000);
    expect(e.liquidity_depth_capped).toBe(true);
    // Capacity on the curves: at 25k the CEX sells at 2007.5 (linear between 10k and 50k), the DEX buys at 2005:
    // net = 12.47 - 10 - 0.2 > 0, still paying at the depth.
    expect(e.capacity_usd).toBe(25000);
    expect(e.capacity_capped).toBe(true);
    const none = evaluateDirection(dexQuote({ ladder: [] }), cexQuote());
    expect(none.steps).toEqual([]);
    expect(none.net_spread_bps).toBeCloseTo(40, 10); // raw_top - fees when no size is fillable
    expect(none.liquidity_depth_usd).toBe(0);
  });

  it('interpolates a ladder price between sizes', () => {
    const ladder = cexQuote().ladder;
    expect(priceAtSize(ladder, 10000, 'buy')).toBe(2012);
    expect(priceAtSize(ladder, 30000, 'buy')).toBeCloseTo(2013.5, 10);
    expect(priceAtSize(ladder, 500, 'sell')).toBe(2010);
    expect(priceAtSize(ladder, 60000, 'sell')).toBeNull();
  });
});
