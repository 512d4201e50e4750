/**
 * What each simulated venue shows at an instant, from the market model's
 * state: the CEX level-2 book (spread, level spacing and depth moving with
 * volatility), and a Base pool's executable prices and measured depth
 * (a constant-product pool on virtual reserves: the in-range behaviour of a
 * Uniswap v3 pool, with closed forms for every size).
 */
import type { LadderStep, QuoteDepth } from '../../core/events/market.js';
import { CALIBRATION as C } from './calibration.js';
import type { SeededRandom } from './random.js';
import { tickOf, type SimPairProfile } from './reference-prices.js';

export interface SimBook {
  bids: [number, number][];
  asks: [number, number][];
}

/**
 * A book around `mid` on the pair's tick grid. The touch spread, in whole
 * ticks (at least one), is the calm spread x vol^spreadElasticity x
 * exp(liquidity state) x a per-tick lognormal draw: majors sit at one tick
 * and widen in stress; the spread follows volatility without being a
 * deterministic power of it. Deeper levels are spaced by the calm spread (at
 * least 1 bp) x vol^levelElasticity; level sizes (USD, growing 10 % a level
 * away from the touch) scale with vol^-0.8 and a lognormal draw per level and side.
 */
export function simulatedBook(
  rng: SeededRandom,
  mid: number,
  profile: SimPairProfile,
  volMultiplier: number,
  liquidityState: number,
  depth: number,
): SimBook {
  const b = C.book;
  const tick = tickOf(profile);
  const spreadBps =
    profile.cexSpreadBps *
    Math.pow(volMultiplier, b.spreadElasticity) *
    Math.exp(liquidityState) *
    rng.lognormal(1, b.spreadTickSd);
  // Prices count whole ticks; a tick is a power of ten, so ticks / (1 / tick) is the correctly rounded price.
  const perUnit = Math.round(1 / tick);
  const ticks = Math.max(1, Math.round((mid * spreadBps) / 1e4 / tick));
  const bestBid = Math.round((mid - (ticks * tick) / 2) / tick);
  const bestAsk = bestBid + ticks;
  const stepTicks = Math.max(
    1,
    Math.round((mid * Math.max(profile.cexSpreadBps, 1) * Math.pow(volMultiplier, b.levelElasticity)) / 1e4 / tick),
  );
  const thin = Math.pow(volMultiplier, b.depthElasticity);
  const bids: [number, number][] = [];
  const asks: [number, number][] = [];
  for (let i = 0; i < depth; i++) {
    const usd = profile.bookLevelUsd * thin * (1 + 0.1 * i);
    const bid = (bestBid - stepTicks * i) / perUnit;
    const ask = (bestAsk + stepTicks * i) / perUnit;
    bids.push([bid, (usd * rng.lognormal(1, b.levelSizeSd)) / bid]);
    asks.push([ask, (usd * rng.lognormal(1, b.levelSizeSd)) / ask]);
  }
  return { bids, asks };
}

/** A constant-product pool: price (USD per base), USD on the virtual USD side, fee (bps). */
export interface SimPool {
  price: number;
  reserveUsd: number;
  feeBps: number;
}

/** Average buy price per base unit (fee included) of `sizeUsd` USD in. */
export function poolBuyPrice(p: SimPool, sizeUsd: number): number {
  const usdIn = sizeUsd * (1 - p.feeBps / 1e4);
  const baseOut = ((p.reserveUsd / p.price) * usdIn) / (p.reserveUsd + usdIn);
  return sizeUsd / baseOut;
}

/** Average sell price per base unit (fee included) of `sizeUsd / price` base in. */
export function poolSellPrice(p: SimPool, sizeUsd: number): number {
  const baseIn = sizeUsd / p.price;
  const effective = baseIn * (1 - p.feeBps / 1e4);
  const usdOut = (p.reserveUsd * effective) / (p.reserveUsd / p.price + effective);
  return usdOut / baseIn;
}

export function poolLadder(p: SimPool, sizes: readonly number[]): LadderStep[] {
  return sizes.map((size) => ({
    size_usd: size,
    buy_price: poolBuyPrice(p, size),
    sell_price: poolSellPrice(p, size),
  }));
}

/**
 * The pool's measured depth in closed form (what the quoter search finds on a
 * real pool): with f the fee and R the USD reserve, the fee-excluded average
 * price moves by b (= impactBps / 1e4) at a buy of b R / (1 - f) USD and at a
 * sell of b R / ((1 - b)(1 - f)) USD. Above `maxUsd` the depth is `maxUsd`, capped.
 */
export function poolDepth(p: SimPool, impactBps: number, maxUsd: number): QuoteDepth {
  const b = impactBps / 1e4;
  const f = p.feeBps / 1e4;
  const side = (exact: number, price: (s: number) => number) => {
    const usd = Math.min(exact, maxUsd);
    return {
      usd,
      capped: exact > maxUsd,
      points: [
        [usd / 2, price(usd / 2)],
        [usd, price(usd)],
      ] as [number, number][],
    };
  };
  const buy = side((b * p.reserveUsd) / (1 - f), (s) => poolBuyPrice(p, s));
  const sell = side((b * p.reserveUsd) / ((1 - b) * (1 - f)), (s) => poolSellPrice(p, s));
  return {
    impact_bps: impactBps,
    buy_usd: buy.usd,
    sell_usd: sell.usd,
    buy_capped: buy.capped,
    sell_capped: sell.capped,
    buy_points: buy.points,
    sell_points: sell.points,
  };
}
