/**
 * Event ids across restarts: each ingestor (the seeded simulator on Kafka +
 * ClickHouse, the CEX ingestor against a loopback Coinbase, the DEX ingestor
 * against real Uniswap v3 on hardhat, the latter two on the in-process bus +
 * a DuckDB file) runs, stops, and runs again as a new instance on the same
 * bus and store, with the real aggregate consumers storing what it publishes.
 * Afterwards:
 *  - no id named two different events (every id seen on the bus carries one
 *    content, ingest time aside);
 *  - data kept flowing: the stored quotes and spread samples reach past what
 *    the first run stored, and every distinct quote published is stored (none
 *    was taken for a duplicate of another one).
 * Before issue 13 the simulator restarted its tick counter under a fixed seed:
 * its second run published ids the store already held, and the store kept the
 * old rows.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQuoteConsumer } from '../../aggregate/quote-consumer.js';
import { startRawSinks } from '../../aggregate/raw-sinks.js';
import type { Bus, Consumer } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import { loadPairs, type PairsCatalogue } from '../../core/markets/pairs.js';
import { openClickHouseTestStore, type ClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { final, sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { TOPICS } from '../../core/topics.js';
import { CexIngestor, createCexExchange } from '../../ingest/cex/cex-ingestor.js';
import { DexIngestor } from '../../ingest/dex/dex-ingestor.js';
import { SimulatedFeed } from '../../ingest/simulator/simulated-feed.js';
import { startCoinbaseServer, type CoinbaseServer } from '../helpers/coinbase-server.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { startDevchain, type Devchain } from '../helpers/devchain.js';
import { deployUniswapFixture, type UniswapFixture } from '../helpers/uniswap-fixture.js';

const config = testConfig();
const logger = testLogger();
const LADDER = [1000, 10000, 50000, 100000];
const full = loadPairs();
const catalogue: PairsCatalogue = {
  ...full,
  pairs: full.pairs.filter((p) => p.pair === 'ETH/USD' || p.pair === 'cbBTC/USD'),
};
const busCommon = { partitions: 2, batchSize: 500, maxAttempts: 3, retryBackoffMs: 50, logger };

/** Canonical content of an event: every field but the id and the ingest time, keys sorted (written again here). */
function content(value: Record<string, unknown>): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  const { event_id: _id, ingest_time_ms: _t, ...rest } = value;
  return JSON.stringify(sort(rest));
}

interface Rig {
  bus: Bus;
  store: Store;
  /** id -> the contents seen under it, per topic. */
  seen: Map<string, Set<string>>;
  quoteIds: Set<string>;
  stop(): Promise<void>;
}

/** The real aggregate consumers plus a recorder of every published event, on a bus and a store. */
async function rig(bus: Bus, store: Store): Promise<Rig> {
  await bus.ensureTopics(Object.values(TOPICS));
  const seen = new Map<string, Set<string>>();
  const quoteIds = new Set<string>();
  const consumers: Consumer[] = [
    await startQuoteConsumer(bus, store, { groupId: uniqueName('restart-quotes'), logger }),
    await startRawSinks(bus, store, { groupId: uniqueName('restart-raw') }),
    await bus.consume({
      groupId: uniqueName('restart-recorder'),
      topics: [TOPICS.quotes, TOPICS.books, TOPICS.latency],
      fromBeginning: true,
      handleBatch: async (messages) => {
        for (const m of messages) {
          const value = JSON.parse(m.value) as Record<string, unknown> & { event_id: string };
          const key = `${m.topic} ${value.event_id}`;
          let set = seen.get(key);
          if (!set) seen.set(key, (set = new Set()));
          set.add(content(value));
          if (m.topic === TOPICS.quotes) quoteIds.add(value.event_id);
        }
      },
    }),
  ];
  return { bus, store, seen, quoteIds, stop: async () => void (await Promise.all(consumers.map((c) => c.stop()))) };
}

async function latest(store: Store): Promise<{ quoteMs: number; sampleMs: number; quotes: number }> {
  const [q] = await store.query(sql`SELECT count(*) AS n, max(ts_ms) AS m FROM quotes ${final}`);
  const [s] = await store.query(sql`SELECT count(*) AS n, max(ts_ms) AS m FROM spread_samples`);
  return { quotes: num(q!.n), quoteMs: num(q!.n) ? num(q!.m) : 0, sampleMs: num(s!.n) ? num(s!.m) : 0 };
}

/** Runs `start` twice (a restart in between) and checks the ids and the flow (see the module comment). */
async function restartTwice(
  r: Rig,
  run: () => Promise<() => Promise<void>>,
  opts: { minSamples?: boolean } = {},
): Promise<void> {
  const stop1 = await run();
  const first = await eventually(
    () => latest(r.store),
    (l) => l.quotes >= 4 && (!opts.minSamples || l.sampleMs > 0),
    60_000,
    100,
  );
  await stop1();
  const afterFirst = await latest(r.store);
  const stop2 = await run();
  const second = await eventually(
    () => latest(r.store),
    (l) => l.quoteMs > afterFirst.quoteMs && (!opts.minSamples || l.sampleMs > afterFirst.sampleMs),
    60_000,
    100,
  );
  await stop2();
  expect(second.quoteMs).toBeGreaterThan(first.quoteMs);
  // Every distinct quote that reached the bus is stored: none was dropped as the "duplicate" of another one.
  await eventually(
    async () => (await latest(r.store)).quotes,
    (n) => n === r.quoteIds.size,
    60_000,
    100,
  );
  const named2 = [...r.seen.entries()].filter(([, contents]) => contents.size > 1).map(([id]) => id);
  expect(named2, `ids naming two different events: ${named2.slice(0, 3).join(', ')}`).toEqual([]);
  expect(r.quoteIds.size).toBeGreaterThan(first.quotes);
}

describe('the simulator restarted on the same Kafka topics and ClickHouse database', () => {
  const database = uniqueName('restart_sim');
  let r: Rig;
  let store: Store;
  let clickhouse: ClickHouseTestStore | undefined;

  beforeAll(async () => {
    clickhouse = await openClickHouseTestStore(config, { database }, logger);
    store = clickhouse.store;
    await store.migrate();
    const kafka = await createKafkaBus({
      ...busCommon,
      brokers: config.KAFKA_BROKERS,
      clientId: uniqueName('restart-sim'),
      connectTimeoutMs: 15000,
    });
    r = await rig(namespaced(kafka, `${uniqueName('restart')}.`), store);
  }, 60_000);

  afterAll(async () => {
    await r?.stop();
    await r?.bus.close();
    await clickhouse?.close();
  }, 60_000);

  it('publishes new ids after a restart with the same seed; the store keeps every new quote and coverage moves on', async () => {
    await restartTwice(
      r,
      async () => {
        // Same seed both times, as `MARKET_SOURCE=simulated npm start` does.
        const feed = new SimulatedFeed({
          bus: r.bus,
          catalogue,
          cexVenue: 'coinbase',
          ladderUsd: LADDER,
          seed: 402,
          tickMs: 100,
          logger,
        });
        feed.start();
        return () => feed.stop();
      },
      { minSamples: true },
    );
  }, 180_000);
});

describe('the CEX ingestor restarted against the same exchange, bus and store', () => {
  let server: CoinbaseServer;
  let dir: string;
  let r: Rig;
  let ticker: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    server = await startCoinbaseServer();
    dir = await mkdtemp(join(tmpdir(), 'restart-cex-'));
    const store = await createDuckDbStore({ path: join(dir, 'restart.duckdb'), logger });
    await store.migrate();
    r = await rig(await createMemoryBus(busCommon), store);
    let tick = 0;
    ticker = setInterval(
      () => server.pushUpdate('ETH-USD', [{ side: 'bid', price: '2000', size: String(1 + (++tick % 3)) }]),
      100,
    );
  });

  afterAll(async () => {
    clearInterval(ticker);
    await r?.stop();
    await r?.bus.close();
    await r?.store.close();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('never reuses an id for another book (websocket sequences restart with the connection)', async () => {
    const pairs = catalogue.pairs.filter((p) => p.pair === 'ETH/USD');
    await restartTwice(r, async () => {
      const ingestor = new CexIngestor({
        exchange: createCexExchange('coinbase', { restUrl: server.restUrl, wsUrl: server.wsUrl, timeoutMs: 3000 }),
        pairs,
        takerFeeBps: 60,
        ladderUsd: LADDER,
        depth: 50,
        staleMs: 5000,
        restPollMs: 150,
        probeIntervalMs: 200,
        bus: r.bus,
        logger,
        source: 'live',
        bookIntervalMs: 100,
      });
      ingestor.start();
      return () => ingestor.stop();
    });
  }, 120_000);
});

describe('the DEX ingestor restarted on the same chain, bus and store', () => {
  let devchain: Devchain;
  let fixture: UniswapFixture;
  let dir: string;
  let r: Rig;

  beforeAll(async () => {
    devchain = await startDevchain({
      chainId: 100_000 + Math.floor(Math.random() * 800_000),
      allowUnlimitedContractSize: true,
      blockIntervalMs: 500,
    });
    fixture = await deployUniswapFixture(devchain, {
      pools: [{ pair: 'ETH/USD', baseSymbol: 'WETH', baseDecimals: 18, price: 3000, fee: 500, baseIsToken0: true }],
    });
    dir = await mkdtemp(join(tmpdir(), 'restart-dex-'));
    const store = await createDuckDbStore({ path: join(dir, 'restart.duckdb'), logger });
    await store.migrate();
    r = await rig(await createMemoryBus(busCommon), store);
  }, 120_000);

  afterAll(async () => {
    await r?.stop();
    await r?.bus.close();
    await r?.store.close();
    await devchain?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('re-reading a block gives the same id only for the same measurement, and later blocks keep flowing', async () => {
    await restartTwice(r, async () => {
      const ingestor = new DexIngestor({
        client: devchain.publicClient,
        chain: fixture.chainSpec,
        pools: fixture.pools.map((p) => ({ pair: p.pair, spec: p.spec })),
        ladderUsd: LADDER,
        bus: r.bus,
        logger,
        source: 'simulated',
        pollingIntervalMs: 100,
      });
      await ingestor.start();
      return () => ingestor.stop();
    });
  }, 120_000);
});
