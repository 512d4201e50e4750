/**
 * Acceptance test of the market-data pipeline: a real Uniswap v3 pool moves,
 * the CEX does not, and the aggregator records the dislocation.
 *
 *  - hardhat@2 chain with the real Uniswap v3 contracts (test/helpers/uniswap-fixture.ts),
 *    read through viem by the DexIngestor, which publishes to REAL Kafka
 *    under a BUS_NAMESPACE of its own;
 *  - a CEX book that does not move: a fixed ETH/USD QuoteEvent at the pool's
 *    initial price, re-published every 200 ms with a fresh event time (the
 *    chain's clock: hardhat block times run ahead of the wall clock after the
 *    deployment's blocks, and the detector compares event times);
 *  - the aggregate consumers (raw sinks + quote consumer) writing a
 *    REAL ClickHouse database of its own.
 * Before the swap the two venues do not cross (no dislocation). A big buy on
 * the pool moves its price up ~8 %: the aggregator records a dislocation
 * (buy on the CEX, sell on the pool) whose raw and net spreads equal a
 * recomputation by hand from the two stored quotes (docs/metrics.md, section 1).
 * How soon it is queryable after the swap is printed; the pipeline's latency is
 * measured by `npm run bench:pipeline` (event to queryable, p50/p99).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQuoteConsumer } from '../../aggregate/quote-consumer.js';
import { startRawSinks } from '../../aggregate/raw-sinks.js';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import type { QuoteEvent } from '../../core/events/market.js';
import { openClickHouseTestStore, type ClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { final, sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { quoteFromRow } from '../../core/store/tables/quotes.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { TOPICS } from '../../core/topics.js';
import { DexIngestor } from '../../ingest/dex/dex-ingestor.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { startDevchain, type Devchain } from '../helpers/devchain.js';
import { deployUniswapFixture, type UniswapFixture } from '../helpers/uniswap-fixture.js';

const config = testConfig();
const logger = testLogger();
const PAIR = 'ETH/USD';
const PRICE = 3000;
const LADDER = [1000, 10000, 50000, 100000];
const CEX_VENUE = 'coinbase';
const DEX_VENUE = 'uniswap_v3_base';
const SWAP_USDC = 200_000;

/** The CEX book that never moves: 1 bp either side of the pool's initial price, taker fee 10 bp. */
function cexQuote(n: number, eventTimeMs: number, runId: string): QuoteEvent {
  return {
    event_id: `cex:${runId}:${String(n).padStart(8, '0')}`,
    pair: PAIR,
    venue: CEX_VENUE,
    venue_kind: 'cex',
    event_time_ms: eventTimeMs,
    ingest_time_ms: eventTimeMs,
    source: 'simulated',
    bid: 2999.7,
    ask: 3000.3,
    bid_size: 20,
    ask_size: 20,
    ladder: [
      { size_usd: 1000, buy_price: 3000.3, sell_price: 2999.7 },
      { size_usd: 10000, buy_price: 3000.6, sell_price: 2999.4 },
      { size_usd: 50000, buy_price: 3001.5, sell_price: 2998.5 },
      { size_usd: 100000, buy_price: 3003, sell_price: 2997 },
    ],
    fee_bps: 10,
    fee_included: false,
    gas_usd: null,
    gas_price_gwei: null,
    sequence: n,
  };
}

/** docs/metrics.md section 1, written out again: raw (top of book) and net spread of "buy on B, sell on S". */
function byHand(buy: QuoteEvent, sell: QuoteEvent) {
  const raw = ((sell.bid - buy.ask) / buy.ask) * 1e4;
  const fees = (buy.fee_included ? 0 : buy.fee_bps) + (sell.fee_included ? 0 : sell.fee_bps);
  const gasUsd = (buy.gas_usd ?? 0) + (sell.gas_usd ?? 0);
  const nets: { size: number; net: number }[] = [];
  for (const b of buy.ladder) {
    const s = sell.ladder.find((x) => x.size_usd === b.size_usd);
    if (b.buy_price === null || !s || s.sell_price === null) continue;
    nets.push({
      size: b.size_usd,
      net: ((s.sell_price - b.buy_price) / b.buy_price) * 1e4 - fees - (gasUsd / b.size_usd) * 1e4,
    });
  }
  const net = nets.length ? Math.max(...nets.map((x) => x.net)) : raw - fees;
  const profit = Math.max(0, ...nets.map((x) => (x.size * x.net) / 1e4));
  // Depth: the measured sides the direction trades (the CEX's asks within the bound, the pool's sells within it);
  // a side without a measurement counts with its largest fillable rung.
  const buyDepth = buy.depth
    ? buy.depth.buy_usd
    : Math.max(0, ...buy.ladder.filter((x) => x.buy_price !== null).map((x) => x.size_usd));
  const sellDepth = sell.depth
    ? sell.depth.sell_usd
    : Math.max(0, ...sell.ladder.filter((x) => x.sell_price !== null).map((x) => x.size_usd));
  return { raw, fees, net, profit, depth: Math.min(buyDepth, sellDepth) };
}

describe('a Uniswap v3 pool moves, the CEX does not: the aggregator records the dislocation', () => {
  const namespace = `${uniqueName('dexdis')}.`;
  const database = uniqueName('dex_dislocation');
  const runId = uniqueName('run');
  let devchain: Devchain;
  let fixture: UniswapFixture;
  let bus: Bus;
  let store: Store;
  let clickhouse: ClickHouseTestStore | undefined;
  let ingestor: DexIngestor | undefined;
  const consumers: Consumer[] = [];
  const published = new Map<string, QuoteEvent>();
  let cexTimer: NodeJS.Timeout | undefined;
  let cexError: unknown;

  beforeAll(async () => {
    devchain = await startDevchain({
      chainId: 100_000 + Math.floor(Math.random() * 800_000),
      allowUnlimitedContractSize: true,
      blockIntervalMs: 1000,
    });
    fixture = await deployUniswapFixture(devchain, {
      pools: [{ pair: PAIR, baseSymbol: 'WETH', baseDecimals: 18, price: PRICE, fee: 500, baseIsToken0: true }],
    });
    bus = namespaced(
      await createKafkaBus({
        partitions: 3,
        batchSize: 500,
        maxAttempts: 3,
        retryBackoffMs: 50,
        logger,
        brokers: config.KAFKA_BROKERS,
        clientId: uniqueName('dex-dis'),
        connectTimeoutMs: 15000,
      }),
      namespace,
    );
    await bus.ensureTopics(Object.values(TOPICS));
    clickhouse = await openClickHouseTestStore(config, { database }, logger);
    store = clickhouse.store;
    await store.migrate();
  }, 120_000);

  afterAll(async () => {
    if (cexTimer) clearInterval(cexTimer);
    await ingestor?.stop();
    await Promise.all(consumers.map((c) => c.stop()));
    await bus?.close();
    await clickhouse?.close();
    await devchain?.stop();
  }, 60_000);

  it('records a dislocation with the raw and net spread of the two quotes after the swap', async () => {
    consumers.push(await startRawSinks(bus, store), await startQuoteConsumer(bus, store, { logger }));

    // The CEX feed: the same book, fresh event times on the chain's clock (never behind the last one).
    let n = 0;
    let lastMs = 0;
    const publishCex = async () => {
      const block = await devchain.publicClient.getBlock();
      lastMs = Math.max(lastMs + 1, Number(block.timestamp) * 1000);
      const q = cexQuote(++n, lastMs, runId);
      published.set(q.event_id, q);
      await bus.publish(TOPICS.quotes, [{ key: PAIR, value: JSON.stringify(q) }]);
    };
    await publishCex();
    let inFlight = false;
    cexTimer = setInterval(() => {
      if (inFlight) return;
      inFlight = true;
      publishCex()
        .catch((err: unknown) => (cexError = err))
        .finally(() => (inFlight = false));
    }, 200);

    ingestor = new DexIngestor({
      client: devchain.publicClient,
      chain: fixture.chainSpec,
      pools: fixture.pools.map(({ pair, spec }) => ({ pair, spec })),
      ladderUsd: LADDER,
      bus,
      logger,
      source: 'simulated',
      pollingIntervalMs: 100,
    });
    await ingestor.start();

    // Before the swap: both venues are stored and evaluated against each other, and they do not cross.
    await eventually(
      async () =>
        num((await store.query(sql`SELECT count(*) AS n FROM spread_samples ${final} WHERE pair = ${PAIR}`))[0]?.n),
      (x) => x >= 3,
      90_000,
      100,
    );
    // The raw sink is another consumer group: its quotes may land just after the detector's samples.
    const venues = await eventually(
      () => store.query(sql`SELECT venue, count(*) AS n FROM quotes ${final} GROUP BY venue ORDER BY venue`),
      (rows) => rows.length === 2,
      60_000,
      50,
    );
    expect(venues.map((r) => r.venue)).toEqual([CEX_VENUE, DEX_VENUE]);
    const [pre] = await store.query(
      sql`SELECT max(raw_spread_bps) AS raw FROM spread_samples ${final} WHERE pair = ${PAIR}`,
    );
    expect(num(pre?.raw)).toBeLessThan(0);
    expect(num((await store.query(sql`SELECT count(*) AS n FROM dislocations ${final}`))[0]?.n)).toBe(0);

    // The big swap: buy ETH with 200k USDC (the pool holds 5M USD per side): its price moves up ~8 %.
    const swap = await fixture.swap(PAIR, 'buy', SWAP_USDC);
    const minedAt = Date.now();
    const row = await eventually(
      async () =>
        (
          await store.query(
            sql`SELECT * FROM dislocations ${final} WHERE pair = ${PAIR} AND revision = 0 ORDER BY opened_at_ms LIMIT 1`,
          )
        )[0],
      (r) => r !== undefined,
      90_000,
      25,
    );
    const latencyMs = Date.now() - minedAt;
    console.log(
      `dislocation queryable in ClickHouse ${latencyMs} ms after the swap (block ${swap.blockNumber}) was mined`,
    );
    expect(cexError).toBeUndefined();

    expect(row!.status).toBe('OPPORTUNITY');
    expect(row!.buy_venue).toBe(CEX_VENUE);
    expect(row!.sell_venue).toBe(DEX_VENUE);

    // The two quotes of the evaluation that opened it: the trigger, and the counterpart its spread sample names.
    const [sample] = await store.query(
      sql`SELECT * FROM spread_samples ${final} WHERE quote_event_id = ${String(row!.trigger_event_id)}`,
    );
    expect(sample).toBeDefined();
    const ids = [String(sample!.quote_event_id), String(sample!.counterpart_event_id)];
    // The quote consumer writes the raw quotes and the revision in one batch; eventually() only bridges the poll.
    const stored = (
      await eventually(
        () => store.query(sql`SELECT * FROM quotes ${final} WHERE event_id IN (${ids[0]!}, ${ids[1]!})`),
        (rows) => rows.length === 2,
        60_000,
        25,
      )
    ).map(quoteFromRow);
    const buy = stored.find((q) => q.venue === CEX_VENUE)!;
    const sell = stored.find((q) => q.venue === DEX_VENUE)!;
    // The CEX quote is the fixed book as published; the DEX quote is the pool after the swap.
    expect(buy).toEqual(published.get(buy.event_id));
    const pool = fixture.pools[0]!;
    expect(sell.event_id).toMatch(
      new RegExp(`^dex:${devchain.chainId}:${pool.address.toLowerCase()}:${sell.sequence}:[0-9a-f]{16}$`),
    );
    expect(sell.sequence!).toBeGreaterThanOrEqual(Number(swap.blockNumber));
    expect(sell.bid).toBeGreaterThan(PRICE * 1.05);

    const hand = byHand(buy, sell);
    console.log(
      `buy ${CEX_VENUE} ask ${buy.ask}, sell ${DEX_VENUE} bid ${sell.bid.toFixed(4)} (gas ${sell.gas_usd?.toFixed(4)} USD): ` +
        `raw ${hand.raw.toFixed(4)} bp (stored ${num(row!.raw_spread_bps).toFixed(4)}), net ${hand.net.toFixed(4)} bp (stored ${num(row!.net_spread_bps).toFixed(4)}), fees ${hand.fees} bp`,
    );
    expect(hand.raw).toBeGreaterThan(500);
    expect(num(row!.buy_price)).toBe(buy.ask);
    expect(num(row!.sell_price)).toBe(sell.bid);
    expect(num(row!.raw_spread_bps)).toBeCloseTo(hand.raw, 8);
    expect(num(row!.fees_bps)).toBe(hand.fees);
    expect(num(row!.net_spread_bps)).toBeCloseTo(hand.net, 8);
    expect(num(row!.est_profit_usd)).toBeCloseTo(hand.profit, 6);
    expect(sell.depth).toBeDefined(); // the pool's depth was measured by the quoter search
    expect(num(row!.liquidity_depth_usd)).toBe(hand.depth);
    expect(hand.net).toBeLessThan(hand.raw - hand.fees);
  }, 420_000);
});
