/**
 * The DEX depth search (ingest/dex/depth-search.ts) on pools whose answers
 * are known in closed form (constant-product pools, ingest/simulator/
 * venue-models.ts): the depth at the impact bound within the search's
 * tolerance in few rounds, the hard maximum reported as capped, unfillable
 * sizes, and the net-zero search only when the arbitrage pays.
 */
import { describe, expect, it } from 'vitest';
import {
  searchDepths,
  type PoolSearchInput,
  type ProbeRequest,
  type ReferenceBook,
} from '../../ingest/dex/depth-search.js';
import {
  poolBuyPrice,
  poolDepth,
  poolLadder,
  poolSellPrice,
  type SimPool,
} from '../../ingest/simulator/venue-models.js';

const LADDER = [1000, 10000, 50000, 100000];
const rel = (a: number, b: number) => Math.abs(a - b) / b;

function input(pool: SimPool, reference?: ReferenceBook, gasUsd = 0.02): PoolSearchInput {
  return { mid: pool.price, feeBps: pool.feeBps, gasUsd, ladder: poolLadder(pool, LADDER), reference };
}

/** Prices a batch like the quoter would; `fillableUpTo`: larger sizes answer null (the pool ran dry). */
const reader =
  (pools: SimPool[], fillableUpTo = Infinity, log: ProbeRequest[][] = []) =>
  async (requests: ProbeRequest[]) => {
    log.push(requests);
    return requests.map((r) =>
      r.sizeUsd > fillableUpTo
        ? null
        : r.side === 'buy'
          ? poolBuyPrice(pools[r.pool]!, r.sizeUsd)
          : poolSellPrice(pools[r.pool]!, r.sizeUsd),
    );
  };

describe('DEX depth search', () => {
  it("finds each side's size at the impact bound, below and far beyond the ladder, in two or three rounds", async () => {
    const shallow: SimPool = { price: 3000, reserveUsd: 2_000_000, feeBps: 5 }; // 1 % at ~20k: between the rungs
    const deep: SimPool = { price: 90000, reserveUsd: 400_000_000, feeBps: 30 }; // 1 % at ~4M: past the largest rung
    const log: ProbeRequest[][] = [];
    const r = await searchDepths([input(shallow), input(deep)], reader([shallow, deep], Infinity, log), {
      impactBps: 100,
      maxUsd: 50_000_000,
    });
    [shallow, deep].forEach((pool, i) => {
      const exact = poolDepth(pool, 100, 50_000_000);
      expect(rel(r.depths[i]!.buy_usd, exact.buy_usd)).toBeLessThan(1e-6); // impact is linear in size on these pools
      expect(rel(r.depths[i]!.sell_usd, exact.sell_usd)).toBeLessThan(1e-3);
      expect(r.depths[i]).toMatchObject({ impact_bps: 100, buy_capped: false, sell_capped: false });
      for (const [size, price] of r.depths[i]!.buy_points) expect(price).toBe(poolBuyPrice(pool, size));
    });
    expect(r.rounds).toBeLessThanOrEqual(3);
    expect(r.probes).toBe(log.flat().length);
    expect(r.probes).toBeLessThanOrEqual(4 * 2 * 6);
  });

  it('reports a side still within the bound at the hard maximum as the maximum, capped', async () => {
    const ocean: SimPool = { price: 3000, reserveUsd: 10_000_000_000, feeBps: 5 };
    const r = await searchDepths([input(ocean)], reader([ocean]), { impactBps: 100, maxUsd: 25_000_000 });
    expect(r.depths[0]).toMatchObject({
      buy_usd: 25_000_000,
      sell_usd: 25_000_000,
      buy_capped: true,
      sell_capped: true,
    });
    // A hard maximum below the ladder: capped there too, never the rung.
    const low = await searchDepths([input(ocean)], reader([ocean]), { impactBps: 100, maxUsd: 20_000 });
    expect(low.depths[0]).toMatchObject({ buy_usd: 20_000, buy_capped: true });
  });

  it('treats a size the pool cannot fill as beyond the bound', async () => {
    const pool: SimPool = { price: 3000, reserveUsd: 50_000_000, feeBps: 5 }; // 1 % at ~500k
    const r = await searchDepths([input(pool)], reader([pool], 300_000), { impactBps: 100, maxUsd: 50_000_000 });
    expect(r.depths[0]!.buy_usd).toBeGreaterThan(100_000);
    expect(r.depths[0]!.buy_usd).toBeLessThanOrEqual(300_000);
    expect(r.depths[0]!.buy_capped).toBe(false);
  });

  it('searches for the net-zero crossing against a CEX reference only when the arbitrage pays at some size', async () => {
    const pool: SimPool = { price: 3000, reserveUsd: 20_000_000, feeBps: 5 };
    // The CEX bids 40 bps above the pool, thinning 1 bp per 10k: buying on the pool, selling on the CEX pays up to a point.
    const rich: ReferenceBook = {
      feeBps: 10,
      buyPrice: (s) => 3000 * (1.0042 + s / 1e8),
      sellPrice: (s) => 3000 * (1.004 - s / 1e8),
    };
    const flat: ReferenceBook = { feeBps: 10, buyPrice: () => 3001, sellPrice: () => 2999 };
    const withRef = await searchDepths([input(pool, rich)], reader([pool]), { impactBps: 100, maxUsd: 50_000_000 });
    const without = await searchDepths([input(pool, flat)], reader([pool]), { impactBps: 100, maxUsd: 50_000_000 });
    const net = (s: number) =>
      ((rich.sellPrice(s)! - poolBuyPrice(pool, s)) / poolBuyPrice(pool, s)) * 1e4 - 10 - (0.02 / s) * 1e4;
    let [lo, hi] = [1000, 10_000_000];
    for (let i = 0; i < 200; i++) [lo, hi] = net((lo + hi) / 2) > 0 ? [(lo + hi) / 2, hi] : [lo, (lo + hi) / 2];
    const sizes = withRef.depths[0]!.buy_points.map(([s]) => s);
    const below = Math.max(...sizes.filter((s) => s <= lo));
    const above = Math.min(...sizes.filter((s) => s > lo));
    expect(above / below).toBeLessThanOrEqual(1.02 + 1e-9); // measured on both sides of the crossing, 2 % apart at most
    expect(withRef.probes).toBeGreaterThan(without.probes);
    expect(without.depths[0]!.buy_usd).toBe(withRef.depths[0]!.buy_usd); // the depth is the impact bound's either way
  });
});
