/**
 * DEX ingestion against real Uniswap v3 contracts (npm artifacts) on a local
 * hardhat@2 chain, read through viem: the ingestor publishes quotes for the
 * initialised prices, a swap moves the price and newer quotes follow it, RPC
 * latency samples arrive, health is ok, and nothing is published after stop.
 * Run once on the in-process bus (reads batched through Multicall3) and once
 * on Kafka at KAFKA_BROKERS (parallel calls, QuoterV2 through simulateContract).
 */
import { idMatchesContent } from '../../core/events/event-id.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import { LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import { TOPICS } from '../../core/topics.js';
import { uniswapV3PoolAbi } from '../../ingest/dex/abis.js';
import { DexIngestor } from '../../ingest/dex/dex-ingestor.js';
import { sqrtPriceX96ToPrice } from '../../ingest/dex/uniswap-v3-pricing.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { startDevchain, type Devchain } from '../helpers/devchain.js';
import { deployUniswapFixture, type UniswapFixture } from '../helpers/uniswap-fixture.js';

const config = testConfig();
const logger = testLogger();
const LADDER = [1000, 10000, 50000, 100000];
const BLOCK_MS = 400;
const ETH_PRICE = 3000;
const BTC_PRICE = 97000;
const busCommon = { partitions: config.BUS_PARTITIONS, batchSize: 500, maxAttempts: 3, retryBackoffMs: 50, logger };

let devchain: Devchain;
let fixture: UniswapFixture;
let snapshot: `0x${string}` | undefined;
const timings: Record<string, number> = {};

beforeAll(async () => {
  // A chain id of its own: event ids embed it, so earlier runs' events on a shared Kafka topic never match.
  devchain = await startDevchain({
    chainId: 100_000 + Math.floor(Math.random() * 800_000),
    allowUnlimitedContractSize: true,
    blockIntervalMs: BLOCK_MS,
  });
  timings.devchain_start_ms = devchain.startMs;
  fixture = await deployUniswapFixture(devchain, {
    pools: [
      // WETH below USDC (token0, as on Base) and cbBTC above it (token1): both orientations.
      { pair: 'ETH/USD', baseSymbol: 'WETH', baseDecimals: 18, price: ETH_PRICE, fee: 500, baseIsToken0: true },
      { pair: 'cbBTC/USD', baseSymbol: 'cbBTC', baseDecimals: 8, price: BTC_PRICE, fee: 3000, baseIsToken0: false },
    ],
  });
  timings.deploy_ms = fixture.deployMs;
  timings.deploy_transactions = fixture.transactions;
});

afterAll(async () => {
  console.log(`dex-ingest timings: ${JSON.stringify(timings)}`);
  await devchain?.stop();
});

// Every case starts from the freshly deployed state (prices at their initial values).
beforeEach(async () => {
  snapshot = await devchain.testClient.snapshot();
});
afterEach(async () => {
  if (snapshot) await devchain.testClient.revert({ id: snapshot });
});

interface Collected {
  quotes: QuoteEvent[];
  latency: LatencyEvent[];
  consumer: Consumer;
}

/** Collects this chain's events from the bus (the Kafka topics are shared with other runs: filter by chain id and time). */
async function collect(bus: Bus, since: number): Promise<Collected> {
  const out = { quotes: [] as QuoteEvent[], latency: [] as LatencyEvent[] };
  const consumer = await bus.consume({
    groupId: uniqueName('dex-ingest-test'),
    topics: [TOPICS.quotes, TOPICS.latency],
    fromBeginning: true,
    handleBatch: async (messages) => {
      for (const m of messages) {
        const value: unknown = JSON.parse(m.value);
        if (m.topic === TOPICS.quotes) {
          const q = QuoteEvent.parse(value);
          if (q.event_id.startsWith(`dex:${devchain.chainId}:`) && q.ingest_time_ms >= since) out.quotes.push(q);
        } else if (m.topic === TOPICS.latency) {
          const l = LatencyEvent.parse(value);
          if (l.event_id.startsWith(`dex_rpc:${devchain.chainId}:`) && l.ingest_time_ms >= since) out.latency.push(l);
        }
      }
    },
  });
  return { ...out, consumer };
}

const rel = (a: number, b: number) => Math.abs(a - b) / b;
const latestFor = (c: Collected, pair: string, minBlock = 0) =>
  c.quotes
    .filter((q) => q.pair === pair && (q.sequence ?? -1) >= minBlock)
    .sort((a, b) => (b.sequence ?? 0) - (a.sequence ?? 0))[0];

/** The pool's own price (slot0) at a block, read directly. */
async function slot0Price(pair: string, blockNumber: bigint): Promise<number> {
  const pool = fixture.pools.find((p) => p.pair === pair)!;
  const [sqrtPriceX96] = (await devchain.publicClient.readContract({
    address: pool.address,
    abi: uniswapV3PoolAbi,
    functionName: 'slot0',
    blockNumber,
  })) as readonly [bigint];
  return sqrtPriceX96ToPrice(sqrtPriceX96, {
    baseIsToken0: pool.baseIsToken0,
    baseDecimals: pool.spec.base_token.decimals,
    quoteDecimals: 6,
  });
}

/** Checks a quote against the pool price at its block: fee and impact on both sides, worse with size. */
async function expectSaneQuote(q: QuoteEvent, feeBps: number): Promise<number> {
  const poolPrice = await slot0Price(q.pair, BigInt(q.sequence!));
  const fee = feeBps / 10_000;
  expect(q.venue).toBe('uniswap_v3_base');
  expect(q.venue_kind).toBe('dex');
  expect(q.source).toBe('simulated');
  expect(q.fee_bps).toBe(feeBps);
  expect(q.fee_included).toBe(true);
  expect(q.bid_size).toBeNull();
  expect(q.ask_size).toBeNull();
  expect(q.ladder.map((s) => s.size_usd)).toEqual(LADDER);
  // Top of book = the smallest size's executable prices.
  expect(q.bid).toBe(q.ladder[0]!.sell_price);
  expect(q.ask).toBe(q.ladder[0]!.buy_price);
  // Bracketing the pool price by at least the fee: buy > price / (1 - fee) > price > price * (1 - fee) > sell.
  for (const step of q.ladder) {
    expect(step.buy_price!).toBeGreaterThan(poolPrice / (1 - fee));
    expect(step.sell_price!).toBeLessThan(poolPrice * (1 - fee));
  }
  // $1k against a $5M-per-side pool: fee plus a few bps of impact.
  expect(rel(q.ask, poolPrice)).toBeLessThan(fee + 0.001);
  expect(rel(q.bid, poolPrice)).toBeLessThan(fee + 0.001);
  for (let i = 1; i < q.ladder.length; i++) {
    expect(q.ladder[i]!.buy_price!).toBeGreaterThan(q.ladder[i - 1]!.buy_price!);
    expect(q.ladder[i]!.sell_price!).toBeLessThan(q.ladder[i - 1]!.sell_price!);
  }
  expect(q.gas_price_gwei).toBeGreaterThan(0);
  expect(q.gas_usd).toBeGreaterThan(0);
  return poolPrice;
}

const cases: { name: string; createBus: () => Promise<Bus>; multicall: boolean }[] = [
  { name: 'memory bus, Multicall3 batches', createBus: () => createMemoryBus(busCommon), multicall: true },
  {
    name: 'Kafka bus, parallel calls',
    createBus: () =>
      createKafkaBus({
        ...busCommon,
        brokers: config.KAFKA_BROKERS,
        clientId: uniqueName('dex-ingest'),
        connectTimeoutMs: 10000,
      }),
    multicall: false,
  },
];

describe.each(cases)('DEX ingestion: $name', ({ name, createBus, multicall }) => {
  let bus: Bus;
  let collected: Collected | undefined;
  let ingestor: DexIngestor | undefined;

  beforeAll(async () => {
    bus = await createBus();
    await bus.ensureTopics([TOPICS.quotes, TOPICS.latency]);
  });
  afterAll(async () => {
    await ingestor?.stop();
    await collected?.consumer.stop();
    await bus?.close();
  });

  it(
    'publishes quotes at the pool prices, follows a swap, samples RPC latency, stops cleanly',
    { timeout: 300_000 },
    async () => {
      const since = Date.now();
      collected = await collect(bus, since);
      const c = collected;
      ingestor = new DexIngestor({
        client: devchain.publicClient,
        chain: fixture.chainSpec,
        pools: fixture.pools.map(({ pair, spec }) => ({ pair, spec })),
        ladderUsd: LADDER,
        bus,
        logger,
        source: 'simulated',
        pollingIntervalMs: 100,
        multicall: multicall ? undefined : false,
      });
      await ingestor.start();

      // 1. Quotes at the initialised prices.
      await eventually(
        async () => [latestFor(c, 'ETH/USD'), latestFor(c, 'cbBTC/USD')],
        (qs) => qs.every(Boolean),
        60_000,
      );
      const eth = latestFor(c, 'ETH/USD')!;
      const btc = latestFor(c, 'cbBTC/USD')!;
      // slot0 holds the initial price up to sqrtPriceX96's rounding; the quotes sit within fee + impact of it.
      expect(rel(await expectSaneQuote(eth, 5), ETH_PRICE)).toBeLessThan(1e-12);
      expect(rel(await expectSaneQuote(btc, 30), BTC_PRICE)).toBeLessThan(1e-12);
      expect(rel((eth.bid + eth.ask) / 2, ETH_PRICE)).toBeLessThan(0.0005);
      expect(rel((btc.bid + btc.ask) / 2, BTC_PRICE)).toBeLessThan(0.003);
      const ethPool = fixture.pools.find((p) => p.pair === 'ETH/USD')!;
      expect(eth.event_id).toMatch(
        new RegExp(`^dex:${devchain.chainId}:${ethPool.address.toLowerCase()}:${eth.sequence}:[0-9a-f]{16}$`),
      );
      expect(idMatchesContent(eth)).toBe(true); // identity + digest of the content (core/events/event-id.ts)
      // Gas priced with the ETH/USD pool: gas_usd = QuoterV2's gasEstimate (a v3 swap: ~80k-200k) x gas price x ETH/USD.
      for (const q of [eth, btc]) {
        const gasUnits = q.gas_usd! / (q.gas_price_gwei! * 1e-9 * ETH_PRICE);
        expect(gasUnits).toBeGreaterThan(50_000);
        expect(gasUnits).toBeLessThan(300_000);
      }

      const health = ingestor.health();
      expect(health.status, String(health.reason)).toBe('ok');
      expect(health.multicall).toBe(multicall ? '0xcA11bde05977b3631167028862bE2a173976CA11' : null);
      expect((health.pools as { pool: string }[]).map((p) => p.pool)).toEqual(fixture.pools.map((p) => p.address));

      // 2. A big buy of ETH and a big sell of cbBTC: later quotes show the moved prices.
      const buy = await fixture.swap('ETH/USD', 'buy', 1_000_000);
      const sell = await fixture.swap('cbBTC/USD', 'sell', 10);
      const [ethAfter, btcAfter] = await eventually(
        async () => [
          latestFor(c, 'ETH/USD', Number(buy.blockNumber)),
          latestFor(c, 'cbBTC/USD', Number(sell.blockNumber)),
        ],
        (qs) => qs.every(Boolean),
        60_000,
      );
      expect(ethAfter!.sequence!).toBeGreaterThan(eth.sequence!);
      // Buying ETH pushed its price up, selling cbBTC pushed its price down; the quotes follow the pool.
      expect(await expectSaneQuote(ethAfter!, 5)).toBeGreaterThan(ETH_PRICE * 1.2);
      expect(await expectSaneQuote(btcAfter!, 30)).toBeLessThan(BTC_PRICE * 0.9);
      expect(ethAfter!.bid).toBeGreaterThan(eth.ask);
      expect(btcAfter!.ask).toBeLessThan(btc.bid);
      const mids = (ingestor.health().pools as { last_mid: number }[]).map((p) => p.last_mid);
      expect(mids[0]).toBeGreaterThan(ETH_PRICE * 1.2);
      expect(mids[1]).toBeLessThan(BTC_PRICE * 0.9);

      // 3. RPC round trips, one per processed block.
      await eventually(
        async () => c.latency.length,
        (n) => n > 0,
        60_000,
      );
      const latency = c.latency[0]!;
      expect(latency).toMatchObject({
        venue: 'base_rpc',
        venue_kind: 'dex',
        kind: 'dex_rpc',
        endpoint: 'eth_gasPrice',
        ok: true,
        source: 'simulated',
      });
      // A round trip's duration (not a timestamp): the figure itself is the benches' business, so the bound is only sane.
      expect(latency.rtt_ms).toBeGreaterThanOrEqual(0);
      expect(latency.rtt_ms).toBeLessThan(60_000);

      const h = ingestor.health();
      expect(h.status, String(h.reason)).toBe('ok');
      timings[`${name}: blocks_processed`] = h.blocks_processed as number;
      timings[`${name}: avg_process_ms (2 pools x 4 sizes x 2 sides)`] = h.avg_process_ms as number;
      timings[`${name}: max_process_ms`] = h.max_process_ms as number;
      timings[`${name}: blocks_skipped_busy`] = h.blocks_skipped_busy as number;
      timings[`${name}: blocks_missed`] = h.blocks_missed as number;
      timings[`${name}: last_rtt_ms`] = h.last_rtt_ms as number;

      // 4. Stop: nothing is published afterwards, though blocks keep coming.
      await ingestor.stop();
      const stoppedAt = Date.now();
      const processed = ingestor.health().blocks_processed;
      const blockAtStop = await devchain.publicClient.getBlockNumber();
      await eventually(
        () => devchain.publicClient.getBlockNumber(),
        (n) => n >= blockAtStop + 3n,
        60_000,
      );
      await new Promise((r) => setTimeout(r, 300)); // consumer catch-up
      expect(c.quotes.filter((q) => q.ingest_time_ms > stoppedAt)).toEqual([]);
      expect(c.latency.filter((l) => l.ingest_time_ms > stoppedAt)).toEqual([]);
      expect(ingestor.health().blocks_processed).toBe(processed);
      expect(ingestor.health().status).toBe('degraded');
      expect(ingestor.health().reason).toMatch(/not running/);
    },
  );
});

describe('DEX ingestion: catalogue checks', () => {
  it(
    'disables a pool whose catalogue decimals disagree with the chain, or that the factory does not know, and says why',
    { timeout: 180_000 },
    async () => {
      const bus = await createMemoryBus(busCommon);
      const [eth, btc] = fixture.pools;
      const ingestor = new DexIngestor({
        client: devchain.publicClient,
        chain: fixture.chainSpec,
        pools: [
          { pair: eth!.pair, spec: eth!.spec },
          { pair: btc!.pair, spec: { ...btc!.spec, base_token: { ...btc!.spec.base_token, decimals: 18 } } },
          { pair: 'ETH/USD', spec: { ...eth!.spec, fee_tier: 10000 } },
        ],
        ladderUsd: LADDER,
        bus,
        logger,
        source: 'simulated',
        pollingIntervalMs: 100,
      });
      try {
        await ingestor.start();
        const health = await eventually(
          async () => ingestor.health(),
          (h) => (h.blocks_processed as number) > 0,
          60_000,
        );
        expect(health.status).toBe('degraded');
        expect(health.reason).toMatch(/cbBTC\/USD uniswap_v3_base disabled: cbBTC decimals: catalogue 18, on chain 8/);
        expect(health.reason).toMatch(/no Uniswap v3 pool for WETH\/USDC fee 10000/);
        const pools = health.pools as { pair: string; status: string; pool: string | null }[];
        expect(pools.map((p) => p.status)).toEqual(['ready', 'disabled', 'disabled']);
        expect(pools[0]!.pool).toBe(eth!.address);
        // The healthy pool is still quoted.
        const end = await eventually(
          () => bus.endOffsets(TOPICS.quotes),
          (o) => Object.values(o).some((x) => Number(x) > 0),
          60_000,
        );
        expect(Object.values(end).reduce((a, x) => a + Number(x), 0)).toBeGreaterThan(0);
      } finally {
        await ingestor.stop();
        await bus.close();
      }
    },
  );
});
