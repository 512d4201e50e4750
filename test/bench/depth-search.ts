/**
 * The DEX depth search's cost, for bench:pipeline: the real DexIngestor on a
 * local hardhat chain with real Uniswap v3 pools (one per catalogue pair,
 * full-range liquidity, every other one with a concentrated position whose
 * edge the search crosses, fee tiers as in the catalogue), reads batched
 * through Multicall3, the CEX reference on for half of the pools (a book
 * quoting above the pool, so the net-zero search runs too). Measures over
 * BENCH_DEPTH_BLOCKS blocks: quoter calls per block per pool (ladder and
 * search), search rounds (sequential round trips) and time per block.
 */
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { DexIngestor } from '../../ingest/dex/dex-ingestor.js';
import type { ReferenceBook } from '../../ingest/dex/depth-search.js';
import { eventually, testLogger } from '../helpers/config.js';
import { startDevchain } from '../helpers/devchain.js';
import { deployUniswapFixture, type FixturePoolOptions } from '../helpers/uniswap-fixture.js';

export interface DepthSearchFigures {
  pools: number;
  blocks: number;
  ladderCallsPerBlockPerPool: number;
  searchCallsPerBlockPerPool: number;
  roundsPerBlock: number;
  searchMsPerBlock: number;
  processMsPerBlock: number;
}

export async function measureDepthSearch(
  blocks = Number(process.env.BENCH_DEPTH_BLOCKS ?? 20),
): Promise<DepthSearchFigures> {
  const logger = testLogger();
  const pairs = loadPairs().pairs;
  const devchain = await startDevchain({
    chainId: 100_000 + Math.floor(Math.random() * 800_000),
    allowUnlimitedContractSize: true,
    blockIntervalMs: 2000,
  });
  try {
    const pools: FixturePoolOptions[] = pairs.map((p, i) => ({
      pair: p.pair,
      baseSymbol: i === 0 ? 'WETH' : `T${i}`,
      baseDecimals: 18,
      price: 1 + i * 7.5,
      fee: [500, 3000, 10000][i % 3],
      liquidityUsdPerSide: 1_000_000 * (1 + (i % 4)),
      ...(i % 2 === 0 ? { concentrated: { halfWidthTicks: 120, liquidityUsdPerSide: 2_000_000 } } : {}),
    }));
    const fixture = await deployUniswapFixture(devchain, { pools });
    const reference = (price: number): ReferenceBook => {
      const bids = Array.from({ length: 50 }, (_, k) => [price * 1.004 * (1 - 0.0003 * k), 50_000 / price] as const);
      const asks = Array.from({ length: 50 }, (_, k) => [price * 1.0045 * (1 + 0.0003 * k), 50_000 / price] as const);
      const walk = (levels: readonly (readonly [number, number])[], usd: number) => {
        let left = usd;
        let base = 0;
        for (const [p, q] of levels) {
          const take = Math.min(left, p * q);
          base += take / p;
          left -= take;
          if (left <= 0) return usd / base;
        }
        return null;
      };
      return { feeBps: 10, buyPrice: (s) => walk(asks, s), sellPrice: (s) => walk(bids, s) };
    };
    const bus = await createMemoryBus({ partitions: 1, batchSize: 1000, maxAttempts: 2, retryBackoffMs: 50, logger });
    const ingestor = new DexIngestor({
      client: devchain.publicClient,
      chain: fixture.chainSpec,
      pools: fixture.pools.map((p) => ({ pair: p.pair, spec: p.spec })),
      ladderUsd: [1000, 10000, 50000, 100000],
      bus,
      logger,
      source: 'simulated',
      pollingIntervalMs: 200,
      reference: (pair) => {
        const i = pools.findIndex((p) => p.pair === pair);
        return i % 2 === 1 ? reference(Number(pools[i]!.price)) : undefined;
      },
    });
    await ingestor.start();
    await eventually(
      async () => ingestor.depthSearchStats().blocks,
      (n) => n >= blocks,
      blocks * 6000,
      500,
    );
    await ingestor.stop();
    await bus.close();
    const s = ingestor.depthSearchStats();
    const health = ingestor.health();
    return {
      pools: fixture.pools.length,
      blocks: s.blocks,
      ladderCallsPerBlockPerPool: s.ladderCalls / s.poolBlocks,
      searchCallsPerBlockPerPool: s.searchCalls / s.poolBlocks,
      roundsPerBlock: s.searchRounds / s.blocks,
      searchMsPerBlock: s.searchMs / s.blocks,
      processMsPerBlock: Number(health.avg_process_ms),
    };
  } finally {
    await devchain.stop();
  }
}
