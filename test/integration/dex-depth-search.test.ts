/**
 * The DEX depth search against real Uniswap v3 contracts (npm artifacts) on a
 * local hardhat@2 chain: pools seeded with known liquidity (full range, and
 * one with a concentrated position whose ticks the larger swaps cross), the
 * real ingestor (QuoterV2 through Multicall3), and an independent model of
 * the pool's maths (test/helpers/v3-swap-model.ts: liquidity, sqrtPrice and
 * the initialized ticks read from the chain at the quote's block):
 *  - the measured depth per side equals the size at which the model's price
 *    impact reaches the bound, within the search's tolerance;
 *  - every probe the quote publishes is the model's price at that size;
 *  - with a CEX reference, the search measures around the size where the
 *    arbitrage's net spread reaches zero, and the aggregate's capacity from
 *    the published points lands on the model's crossing;
 *  - a hard maximum below the depth is reported as capped, never silently;
 * and prints the quoter calls per block per pool and the search time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateDirection } from '../../aggregate/spread-math.js';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { QuoteEvent } from '../../core/events/market.js';
import { TOPICS } from '../../core/topics.js';
import { ladder as bookLadder, measuredBookDepth } from '../../ingest/cex/book-math.js';
import { DexIngestor } from '../../ingest/dex/dex-ingestor.js';
import type { ReferenceBook } from '../../ingest/dex/depth-search.js';
import { eventually, testLogger, uniqueName } from '../helpers/config.js';
import { startDevchain, type Devchain } from '../helpers/devchain.js';
import { deployUniswapFixture, type FixturePool, type UniswapFixture } from '../helpers/uniswap-fixture.js';
import { avgPrice, impactBps, midUsd, readV3State, solveIncreasing, type V3State } from '../helpers/v3-swap-model.js';

const logger = testLogger();
const LADDER = [1000, 10000, 50000, 100000];
const IMPACT_BPS = 100;
const ETH_PRICE = 3000;
const BTC_PRICE = 97000;
/** The search stops once its bracket is 2 % wide and interpolates inside it. */
const SEARCH_TOLERANCE = 0.02;
const MAX_TICK = 887272;

let devchain: Devchain;
let fixture: UniswapFixture;

beforeAll(async () => {
  devchain = await startDevchain({
    chainId: 100_000 + Math.floor(Math.random() * 800_000),
    allowUnlimitedContractSize: true,
    blockIntervalMs: 1000,
  });
  fixture = await deployUniswapFixture(devchain, {
    pools: [
      // WETH below USDC (token0, as on Base): full range plus a concentrated position +-1 % around the price.
      {
        pair: 'ETH/USD',
        baseSymbol: 'WETH',
        baseDecimals: 18,
        price: ETH_PRICE,
        fee: 500,
        baseIsToken0: true,
        liquidityUsdPerSide: 2_000_000,
        concentrated: { halfWidthTicks: 100, liquidityUsdPerSide: 3_000_000 },
      },
      // cbBTC above USDC (token1): full range only, 0.3 % fee.
      {
        pair: 'cbBTC/USD',
        baseSymbol: 'cbBTC',
        baseDecimals: 8,
        price: BTC_PRICE,
        fee: 3000,
        baseIsToken0: false,
        liquidityUsdPerSide: 4_000_000,
      },
    ],
  });
}, 120_000);

afterAll(async () => {
  await devchain?.stop();
});

/** A CEX book quoting ETH 60 bps above the pool: buying on the DEX and selling on the CEX pays up to some size. */
const CEX_BOOK = {
  bids: Array.from({ length: 50 }, (_, i) => [ETH_PRICE * 1.006 * (1 - 0.0004 * i), 8] as [number, number]),
  asks: Array.from({ length: 50 }, (_, i) => [ETH_PRICE * 1.0062 * (1 + 0.0004 * i), 8] as [number, number]),
};
const CEX_FEE_BPS = 10;

/** VWAP of a USD size walked through levels, written again for the independent check. */
function walk(levels: [number, number][], usd: number): number | null {
  let left = usd;
  let base = 0;
  for (const [price, size] of levels) {
    const take = Math.min(left, price * size);
    base += take / price;
    left -= take;
    if (left <= 1e-9) return usd / base;
  }
  return null;
}

const reference: ReferenceBook = {
  feeBps: CEX_FEE_BPS,
  buyPrice: (s) => walk(CEX_BOOK.asks, s),
  sellPrice: (s) => walk(CEX_BOOK.bids, s),
};

async function quotesFrom(options: {
  depthMaxUsd?: number;
  reference?: boolean;
}): Promise<{ quotes: QuoteEvent[]; ingestor: DexIngestor }> {
  const bus: Bus = await createMemoryBus({ partitions: 1, batchSize: 500, maxAttempts: 2, retryBackoffMs: 20, logger });
  const quotes: QuoteEvent[] = [];
  const consumer: Consumer = await bus.consume({
    groupId: uniqueName('depth-search'),
    topics: [TOPICS.quotes],
    fromBeginning: true,
    handleBatch: async (messages) => {
      for (const m of messages) quotes.push(QuoteEvent.parse(JSON.parse(m.value)));
    },
  });
  const ingestor = new DexIngestor({
    client: devchain.publicClient,
    chain: fixture.chainSpec,
    pools: fixture.pools.map((p) => ({ pair: p.pair, spec: p.spec })),
    ladderUsd: LADDER,
    bus,
    logger,
    source: 'simulated',
    pollingIntervalMs: 100,
    depthImpactBps: IMPACT_BPS,
    ...(options.depthMaxUsd ? { depthMaxUsd: options.depthMaxUsd } : {}),
    ...(options.reference ? { reference: (pair: string) => (pair === 'ETH/USD' ? reference : undefined) } : {}),
  });
  try {
    await ingestor.start();
    await eventually(
      async () => new Set(quotes.filter((q) => q.depth).map((q) => q.pair)).size,
      (n) => n === 2,
      60_000,
    );
  } finally {
    await ingestor.stop();
    await consumer.stop();
    await bus.close();
  }
  return { quotes, ingestor };
}

function modelOf(pool: FixturePool, blockNumber: bigint): Promise<V3State> {
  const spacing = pool.fee === 500 ? 10 : 60;
  const full = Math.floor(MAX_TICK / spacing) * spacing;
  const ticks = [
    -full,
    full,
    ...(pool.concentratedTicks ? [pool.concentratedTicks.lower, pool.concentratedTicks.upper] : []),
  ];
  return readV3State(devchain.publicClient, pool.address, {
    ticks,
    fee: pool.fee,
    baseIsToken0: pool.baseIsToken0,
    baseDecimals: pool.spec.base_token.decimals,
    quoteDecimals: 6,
    blockNumber,
  });
}

const rel = (a: number, b: number) => Math.abs(a - b) / b;

describe('DEX depth search on real Uniswap v3 pools', () => {
  it("measures each side's depth at the impact bound as the pool's own maths gives it, and publishes measured prices", async () => {
    const { quotes, ingestor } = await quotesFrom({ reference: true });
    for (const pool of fixture.pools) {
      const q = quotes.find((x) => x.pair === pool.pair && x.depth)!;
      const model = await modelOf(pool, BigInt(q.sequence!));
      expect(rel(midUsd(model), pool.pair === 'ETH/USD' ? ETH_PRICE : BTC_PRICE)).toBeLessThan(1e-6);
      const d = q.depth!;
      expect(d.impact_bps).toBe(IMPACT_BPS);
      for (const side of ['buy', 'sell'] as const) {
        const expected = solveIncreasing((s) => impactBps(model, side, s), IMPACT_BPS, 0, 1e9);
        const measured = side === 'buy' ? d.buy_usd : d.sell_usd;
        console.log(
          `${pool.pair} ${side}: depth measured ${measured.toFixed(2)} USD, pool maths ${expected.toFixed(2)} USD (${(rel(measured, expected) * 100).toFixed(3)} %)`,
        );
        expect(rel(measured, expected)).toBeLessThan(SEARCH_TOLERANCE);
        expect(side === 'buy' ? d.buy_capped : d.sell_capped).toBe(false);
        // Measured between or beyond the rungs, never a rung or the top of the ladder.
        expect(LADDER).not.toContain(measured);
        // Every published point is the pool's price at that size (the quoter's answer), bracketing the depth.
        const points = side === 'buy' ? d.buy_points : d.sell_points;
        expect(points.length).toBeGreaterThan(2);
        for (const [size, price] of points) expect(rel(price, avgPrice(model, side, size))).toBeLessThan(1e-6);
        expect(points.some(([size]) => size < measured)).toBe(true);
        expect(points.some(([size]) => size > measured)).toBe(true);
      }
    }
    // The concentrated ETH position: the depth lies past its edge (ticks crossed), so constant liquidity would be wrong.
    const eth = fixture.pools[0]!;
    const q = quotes.find((x) => x.pair === 'ETH/USD' && x.depth)!;
    const model = await modelOf(eth, BigInt(q.sequence!));
    const inner = { ...model, ticks: [] };
    expect(
      rel(
        solveIncreasing((s) => impactBps(inner, 'buy', s), IMPACT_BPS, 0, 1e9),
        q.depth!.buy_usd,
      ),
    ).toBeGreaterThan(0.05);

    const stats = ingestor.depthSearchStats();
    const perPool = (stats.ladderCalls + stats.searchCalls) / stats.poolBlocks;
    console.log(
      `depth search: ${stats.blocks} blocks, ${(stats.searchCalls / stats.poolBlocks).toFixed(1)} search calls + ${(stats.ladderCalls / stats.poolBlocks).toFixed(0)} ladder calls per block per pool (${perPool.toFixed(1)} quoter calls), ${(stats.searchRounds / stats.blocks).toFixed(1)} rounds and ${(stats.searchMs / stats.blocks).toFixed(1)} ms per block`,
    );
    expect(stats.searchCalls).toBeGreaterThan(0);
  }, 120_000);

  it('with a CEX reference, measures around the size where the net spread reaches zero, where the aggregate puts capacity', async () => {
    const { quotes } = await quotesFrom({ reference: true });
    const eth = fixture.pools[0]!;
    const q = quotes.find((x) => x.pair === 'ETH/USD' && x.depth)!;
    const model = await modelOf(eth, BigInt(q.sequence!));
    const gasBps = (s: number) => ((q.gas_usd ?? 0) / s) * 1e4;
    const net = (s: number) => {
      const buy = avgPrice(model, 'buy', s);
      const sell = walk(CEX_BOOK.bids, s)!;
      return ((sell - buy) / buy) * 1e4 - CEX_FEE_BPS - gasBps(s);
    };
    // net decreases past its peak: the crossing is where -net reaches 0, above the ladder's profitable sizes.
    expect(net(1000)).toBeGreaterThan(0);
    const crossing = solveIncreasing((s) => -net(s), 0, 1000, q.depth!.buy_usd);
    expect(net(q.depth!.buy_usd)).toBeLessThan(0);
    // The search probed on both sides of the crossing, close to it.
    const sizes = q.depth!.buy_points.map(([s]) => s);
    const below = Math.max(...sizes.filter((s) => s <= crossing));
    const above = Math.min(...sizes.filter((s) => s > crossing));
    expect(above / below).toBeLessThan(1 + SEARCH_TOLERANCE + 1e-9);
    // The aggregate's capacity from the published measurements (the CEX side walks its book: ladder and depth points).
    const cex: QuoteEvent = {
      ...q,
      event_id: 'cex-reference',
      venue: 'coinbase',
      venue_kind: 'cex',
      bid: CEX_BOOK.bids[0]![0],
      ask: CEX_BOOK.asks[0]![0],
      bid_size: 8,
      ask_size: 8,
      ladder: bookLadder(CEX_BOOK, LADDER),
      fee_bps: CEX_FEE_BPS,
      fee_included: false,
      gas_usd: null,
      gas_price_gwei: null,
      depth: measuredBookDepth(CEX_BOOK, IMPACT_BPS)!,
    };
    const e = evaluateDirection(q, cex);
    console.log(
      `ETH/USD buy DEX / sell CEX: capacity ${e.capacity_usd.toFixed(2)} USD, pool maths ${crossing.toFixed(2)} USD`,
    );
    expect(e.capacity_capped).toBe(false);
    expect(rel(e.capacity_usd, crossing)).toBeLessThan(0.005);
  }, 120_000);

  it('reports a side still within the bound at the hard maximum as capped at it, never silently', async () => {
    // Both pools hold more than 20,000 USD within the bound on each side (cbBTC ~40k, ETH far more).
    const { quotes } = await quotesFrom({ depthMaxUsd: 20_000 });
    for (const pool of fixture.pools) {
      const d = quotes.find((x) => x.pair === pool.pair && x.depth)!.depth!;
      expect(d).toMatchObject({ buy_usd: 20_000, sell_usd: 20_000, buy_capped: true, sell_capped: true });
    }
  }, 120_000);
});
