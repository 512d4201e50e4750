/**
 * The aggregation end to end, on both port pairs: memory bus + DuckDB, and
 * REAL Kafka + REAL ClickHouse 18.16 (`npm run engines:up`). Each run uses
 * its own topics (a unique topic prefix), consumer groups and databases.
 *
 * Input: 45 minutes of the seeded simulator (3 pairs) plus malformed messages.
 *  1. the tables fill; every dislocation revision equals a recomputation by
 *     hand from the stored quotes; candles, latency statistics and paper
 *     executions equal recomputations from the stored rows;
 *  2. rewinding both groups to the earliest offsets and consuming again
 *     changes no query result; rebuilding the whole history into an empty
 *     store gives the same results;
 *  3. crashes after the store write and before the commit (raw sink and
 *     quote consumer, before and after the state checkpoint), then a
 *     restart with fresh processes: nothing lost, nothing duplicated, the same
 *     results as the uninterrupted run; on Kafka + ClickHouse also a real
 *     aggregator process killed with SIGKILL mid-batch.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQuoteConsumer, QUOTES_GROUP } from '../../aggregate/quote-consumer.js';
import { PaperExecutor } from '../../aggregate/paper-execution.js';
import { startRawSinks, RAW_TOPICS } from '../../aggregate/raw-sinks.js';
import { DLQ_HEADERS, dlqTopic, type Bus, type BusMessage, type Consumer } from '../../core/bus/bus.js';
import { createKafkaBus } from '../../core/bus/kafka-bus.js';
import { createMemoryBus } from '../../core/bus/memory-bus.js';
import { namespaced } from '../../core/bus/namespaced-bus.js';
import type { LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import { loadPairs, type PairsCatalogue } from '../../core/markets/pairs.js';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { final, ident, sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { dislocationsInSlice, opportunitiesInSlice } from '../../core/store/tables/dislocations.js';
import { shadowCapacity } from '../../core/store/tables/shadow-capacity.js';
import { executionLatency } from '../../core/store/tables/latency-samples.js';
import { paperExecutionsInRange } from '../../core/store/tables/paper-executions.js';
import { quoteFromRow } from '../../core/store/tables/quotes.js';
import { num } from '../../core/store/tables/query-helpers.js';
import {
  coverage,
  spreadCandles,
  spreadSamplesInRange,
  type CandleInterval,
} from '../../core/store/tables/spread-samples.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator, type SimEvent } from '../../ingest/simulator/market-simulator.js';
import { eventually, testConfig, testLogger, uniqueName } from '../helpers/config.js';

const config = testConfig();
const logger = testLogger();
const CRASH_WORKER = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'aggregate-crash-worker.ts');
const PAIRS = ['ETH/USD', 'cbBTC/USD', 'AERO/USD'];
/** 00:30 to 01:15 UTC: three 15-minute slices over two hours (the 00:00 hour built from two of them). */
const START = Date.UTC(2025, 0, 1, 0, 30);
const END = START + 45 * 60_000;
const WINDOW_END = END + 3_600_000;
const LADDER = [1000, 10000, 50000, 100000];
const BATCH = 250;

const full = loadPairs();
const catalogue: PairsCatalogue = { ...full, pairs: full.pairs.filter((p) => PAIRS.includes(p.pair)) };

function simulate(): SimEvent[] {
  const sim = new MarketSimulator(catalogue, {
    seed: 11,
    startMs: START,
    cexVenue: 'coinbase',
    ladderUsd: LADDER,
    bookDepth: 10,
  });
  return [...sim.generate(END)];
}
const events = simulate();
const quotes = events.filter((e) => e.topic === TOPICS.quotes).map((e) => e.event as QuoteEvent);
const latency = events.filter((e) => e.topic === TOPICS.latency).map((e) => e.event as LatencyEvent);
const bookCount = events.filter((e) => e.topic === TOPICS.books).length;

interface Backend {
  name: string;
  kind: 'memory' | 'kafka';
  bus(): Promise<Bus>;
  store(): Promise<{ store: Store; cleanup(): Promise<void>; database?: string }>;
}

const busCommon = { partitions: 3, batchSize: BATCH, maxAttempts: 2, retryBackoffMs: 20, logger };

const backends: Backend[] = [
  {
    name: 'memory bus + DuckDB',
    kind: 'memory',
    bus: () => createMemoryBus(busCommon),
    async store() {
      const dir = await mkdtemp(join(tmpdir(), 'aggregate-it-'));
      const store = await createDuckDbStore({ path: join(dir, 'agg.duckdb'), logger });
      await store.migrate();
      return {
        store,
        async cleanup() {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'Kafka + ClickHouse',
    kind: 'kafka',
    bus: () =>
      createKafkaBus({
        ...busCommon,
        brokers: config.KAFKA_BROKERS,
        clientId: uniqueName('aggregate-it'),
        connectTimeoutMs: 15000,
      }),
    async store() {
      const { store, database, close } = await openClickHouseTestStore(config, 'aggregate_it', logger);
      await store.migrate();
      return { store, database, cleanup: close };
    },
  },
];

// ---------------------------------------------------------------- helpers

interface Run {
  store: Store;
  database?: string;
  raw: string;
  dislocations: string;
}

async function caughtUp(bus: Bus, group: string, topics: string[]): Promise<boolean> {
  for (const topic of topics) {
    const [committed, end] = await Promise.all([bus.committedOffsets(group, topic), bus.endOffsets(topic)]);
    for (const [p, high] of Object.entries(end)) if (high !== '0' && committed[Number(p)] !== high) return false;
  }
  return true;
}

async function count(store: Store, table: string): Promise<number> {
  const [row] = await store.query(sql`SELECT count(*) AS n FROM ${ident(table)} ${final}`);
  return num(row?.n);
}

/**
 * Numbers to 12 significant digits: averages over the same rows differ in the
 * last bits when the engine sums them in another physical order (a replay
 * writes parts in another order); that is the same result.
 */
function normalise(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(12));
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalise(v)]));
  return value;
}

/** Every query result the API serves, plus row counts: what must not change under replays and crashes. */
async function snapshot(store: Store) {
  const out: Record<string, unknown> = {};
  for (const table of [
    'quotes',
    'book_snapshots',
    'latency_samples',
    'spread_samples',
    'dislocations',
    'paper_executions',
  ])
    out[`rows:${table}`] = await count(store, table);
  for (const pair of PAIRS) {
    for (const interval of ['15m', '1h', '4h', '1d'] as CandleInterval[])
      out[`candles:${pair}:${interval}`] = await spreadCandles(store, pair, START, WINDOW_END, interval);
    out[`dislocations:${pair}`] = await dislocationsInSlice(store, pair, START, WINDOW_END);
  }
  out.latency = await executionLatency(store, START, WINDOW_END);
  out['latency:coinbase'] = await executionLatency(store, START, WINDOW_END, 'coinbase');
  out['latency:base_dex'] = await executionLatency(store, START, WINDOW_END, 'base_dex');
  out.shadow = await shadowCapacity(store, START, WINDOW_END);
  out['shadow:ETH'] = await shadowCapacity(store, START, WINDOW_END, 'ETH/USD');
  out.coverage = await coverage(store);
  out.executions = await paperExecutionsInRange(store, START, WINDOW_END);
  return normalise(out);
}

function nearestRank(values: number[], level: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(level * sorted.length))]!;
}

/** An independent recomputation of a direction's numbers from two quotes (docs/metrics.md, written out again). */
function byHand(buy: QuoteEvent, sell: QuoteEvent) {
  const raw = ((sell.bid - buy.ask) / buy.ask) * 1e4;
  const fees = (buy.fee_included ? 0 : buy.fee_bps) + (sell.fee_included ? 0 : sell.fee_bps);
  const gasUsd = (buy.gas_usd ?? 0) + (sell.gas_usd ?? 0);
  const sizes = buy.ladder
    .filter((b) => b.buy_price !== null && sell.ladder.some((s) => s.size_usd === b.size_usd && s.sell_price !== null))
    .map((b) => b.size_usd)
    .sort((a, b) => a - b);
  const nets = sizes.map((size) => {
    const bp = buy.ladder.find((s) => s.size_usd === size)!.buy_price!;
    const sp = sell.ladder.find((s) => s.size_usd === size)!.sell_price!;
    return ((sp - bp) / bp) * 1e4 - fees - (gasUsd / size) * 1e4;
  });
  const profits = sizes.map((size, i) => (size * nets[i]!) / 1e4);
  // Depth: the smaller measured side (a side without a measurement: its largest fillable rung).
  const side = (q: QuoteEvent, which: 'buy' | 'sell') =>
    q.depth
      ? which === 'buy'
        ? q.depth.buy_usd
        : q.depth.sell_usd
      : Math.max(
          0,
          ...q.ladder.filter((x) => (which === 'buy' ? x.buy_price : x.sell_price) !== null).map((x) => x.size_usd),
        );
  const depth = Math.min(side(buy, 'buy'), side(sell, 'sell'));
  // Capacity: the upper zero of net on the measured price curves (ladder + depth points, linear between sizes), up to the depth.
  const curve = (q: QuoteEvent, which: 'buy' | 'sell') => {
    const points = new Map<number, number>();
    for (const p of (which === 'buy' ? q.depth?.buy_points : q.depth?.sell_points) ?? []) points.set(p[0], p[1]);
    for (const x of q.ladder) {
      const price = which === 'buy' ? x.buy_price : x.sell_price;
      if (price !== null) points.set(x.size_usd, price);
    }
    return [...points.entries()].sort((a, b) => a[0] - b[0]);
  };
  const at = (c: [number, number][], size: number) => {
    if (size <= c[0]![0]) return c[0]![1];
    const i = c.findIndex(([x]) => x >= size);
    if (i < 0) return NaN;
    const [x0, p0] = c[i - 1]!;
    const [x1, p1] = c[i]!;
    return p0 + ((p1 - p0) * (size - x0)) / (x1 - x0);
  };
  const bc = curve(buy, 'buy');
  const sc = curve(sell, 'sell');
  const netAt = (size: number) => ((at(sc, size) - at(bc, size)) / at(bc, size)) * 1e4 - fees - (gasUsd / size) * 1e4;
  let capacity = 0;
  let capped = false;
  if (raw - fees > 0 && depth > 0 && bc.length && sc.length) {
    const grid = [
      ...new Set([...bc.map(([x]) => x), ...sc.map(([x]) => x)].filter((x) => x < depth).concat([depth])),
    ].sort((a, b) => a - b);
    const last = grid.map((x, i) => (netAt(x) > 0 ? i : -1)).reduce((a, b) => Math.max(a, b), -1);
    if (last === grid.length - 1) [capacity, capped] = [depth, true];
    else if (last >= 0) {
      let [lo, hi] = [grid[last]!, grid[last + 1]!];
      for (let i = 0; i < 100; i++) {
        const mid = (lo + hi) / 2;
        if (netAt(mid) > 0) lo = mid;
        else hi = mid;
      }
      capacity = lo;
    }
  }
  return {
    raw,
    net: nets.length ? Math.max(...nets) : raw - fees,
    profit: Math.max(0, ...profits),
    capacity,
    capped,
    depth,
  };
}

// ---------------------------------------------------------------- the suite

/** The uninterrupted run's results per backend, compared across engines at the end. */
const cleanByBackend = new Map<string, unknown>();

describe.each(backends)('aggregation: $name', (backend) => {
  /** Every topic and group of this run under its own namespace (BUS_NAMESPACE), like a deployment of its own. */
  const namespace = `${uniqueName('it')}.`;
  let bus: Bus;
  const cleanups: (() => Promise<void>)[] = [];
  const running: Consumer[] = [];
  /**
   * The uninterrupted run, made once and shared: the first test checks it, the later ones compare against its
   * snapshot. Only a finished run is kept, so a test whose run failed does not fail the others: the next caller
   * makes it again.
   */
  let cleanRun: Promise<{ run: Run; snapshot: unknown; elapsedMs: number; executed: number }> | undefined;
  function uninterrupted() {
    cleanRun ??= (async () => {
      const run = await newRun();
      const t0 = performance.now();
      await start(run);
      const executed = await finish(run);
      const elapsedMs = performance.now() - t0;
      await stopAll();
      return { run, snapshot: await snapshot(run.store), elapsedMs, executed };
    })();
    cleanRun.catch(() => (cleanRun = undefined));
    return cleanRun;
  }

  async function newRun(): Promise<Run> {
    const { store, cleanup, database } = await backend.store();
    cleanups.push(cleanup);
    return { store, database, raw: uniqueName('raw'), dislocations: uniqueName(QUOTES_GROUP) };
  }

  interface Started {
    raw?: Consumer;
    dis?: Consumer;
  }

  /** Starts both consumers; `into` gets each one as soon as it exists (hooks may need it during the first batches). */
  async function start(
    run: Run,
    hooks: { raw?: Parameters<typeof startRawSinks>[2]; dislocations?: Parameters<typeof startQuoteConsumer>[2] } = {},
    into: Started = {},
  ): Promise<Required<Started>> {
    into.raw = await startRawSinks(bus, run.store, { groupId: run.raw, maxBatchSize: BATCH, ...hooks.raw });
    running.push(into.raw);
    into.dis = await startQuoteConsumer(bus, run.store, {
      groupId: run.dislocations,
      maxBatchSize: BATCH,
      logger,
      ...hooks.dislocations,
    });
    running.push(into.dis);
    return into as Required<Started>;
  }

  async function stopAll() {
    await Promise.all(running.splice(0).map((c) => c.stop()));
  }

  async function finish(run: Run): Promise<number> {
    await eventually(
      async () =>
        (await caughtUp(bus, run.raw, RAW_TOPICS)) && (await caughtUp(bus, run.dislocations, [TOPICS.quotes])),
      Boolean,
      120_000,
      200,
    );
    return new PaperExecutor(run.store, logger).runOnce();
  }

  beforeAll(async () => {
    bus = namespaced(await backend.bus(), namespace);
    await bus.ensureTopics(Object.values(TOPICS));
    const byTopic = new Map<string, SimEvent[]>();
    for (const e of events) byTopic.set(e.topic, [...(byTopic.get(e.topic) ?? []), e]);
    for (const [t, list] of byTopic) {
      for (let i = 0; i < list.length; i += 2000) {
        await bus.publish(
          t,
          // No record timestamp (= now): the simulated events are from 2025, and Kafka's retention would delete
          // records with such timestamps while the suite runs.
          list.slice(i, i + 2000).map((e) => ({ key: e.key, value: JSON.stringify(e.event) })),
        );
      }
    }
    // Malformed input: dead-lettered with the reason by the group that reads the topic.
    await bus.publish(TOPICS.quotes, [
      { key: 'ETH/USD', value: '{not json' },
      { key: 'ETH/USD', value: JSON.stringify({ ...quotes[0], event_id: 'broken-quote', bid: -1 }) },
    ]);
    await bus.publish(TOPICS.latency, [{ key: 'coinbase', value: JSON.stringify({ ...latency[0], rtt_ms: 'slow' }) }]);
  }, 180_000);

  // Generous: at load 15 consumers leaving their groups and ClickHouse 18.16 dropping five databases took > 120 s.
  afterAll(async () => {
    await stopAll();
    await bus?.close();
    await Promise.allSettled(cleanups.map((c) => c()));
  }, 400_000);

  it('fills the tables and derives what a recomputation from the stored rows gives', async () => {
    const { run: first, elapsedMs, executed } = await uninterrupted();
    const { store } = first;
    console.log(
      `[${backend.name}] ${events.length} events consumed, derived and paper-executed in ${Math.round(elapsedMs)} ms`,
    );

    expect(await count(store, 'quotes')).toBe(quotes.length);
    expect(await count(store, 'book_snapshots')).toBe(bookCount);
    expect(await count(store, 'latency_samples')).toBe(latency.length);

    // Dislocation revisions against a recomputation from the stored quotes of the evaluation that produced them.
    const revisions = await store.query(sql`SELECT * FROM dislocations ${final} ORDER BY opportunity_id, revision`);
    const samples = await spreadSamplesInRange(store, PAIRS, START, WINDOW_END);
    expect(revisions.length).toBeGreaterThan(20);
    expect(samples.length).toBeGreaterThan(quotes.length * 0.9);
    const sampleByQuote = new Map(samples.map((s) => [s.quote_event_id, s]));
    const storedQuotes = new Map(
      (await store.query(sql`SELECT * FROM quotes ${final}`)).map((r) => [String(r.event_id), quoteFromRow(r)]),
    );
    expect(storedQuotes.get(quotes[5]!.event_id)).toEqual(quotes[5]);
    let checked = 0;
    let previous: Record<string, unknown> | undefined;
    for (const r of revisions) {
      if (r.status === 'OPPORTUNITY') {
        const sample = sampleByQuote.get(String(r.trigger_event_id))!;
        const a = storedQuotes.get(sample.quote_event_id)!;
        const b = storedQuotes.get(sample.counterpart_event_id)!;
        const [buy, sell] = a.venue === r.buy_venue ? [a, b] : [b, a];
        const hand = byHand(buy, sell);
        expect(num(r.buy_price)).toBe(buy.ask);
        expect(num(r.sell_price)).toBe(sell.bid);
        expect(num(r.raw_spread_bps)).toBeCloseTo(hand.raw, 9);
        expect(num(r.net_spread_bps)).toBeCloseTo(hand.net, 9);
        expect(num(r.est_profit_usd)).toBeCloseTo(hand.profit, 6);
        expect(num(r.capacity_usd)).toBeCloseTo(hand.capacity, 3);
        expect(num(r.capacity_capped)).toBe(hand.capped ? 1 : 0);
        expect(num(r.liquidity_depth_usd)).toBe(hand.depth);
        // An opportunity pays after every cost at some ladder size (DISLOCATION_MIN_NET_BPS = 0).
        expect(hand.net).toBeGreaterThan(0);
        expect(num(r.updated_at_ms)).toBe(Math.max(a.event_time_ms, b.event_time_ms));
        checked += 1;
      } else {
        // A close keeps the numbers of the last open revision; its duration runs from opening to close.
        expect(previous?.opportunity_id).toBe(r.opportunity_id);
        expect(num(r.raw_spread_bps)).toBe(num(previous!.raw_spread_bps));
        expect(num(r.duration_ms)).toBe(num(r.updated_at_ms) - num(r.opened_at_ms));
        expect(num(r.closed_at_ms)).toBe(num(r.updated_at_ms));
      }
      previous = r;
    }
    expect(checked).toBeGreaterThan(20);

    // The public list: latest revision per opportunity.
    const listed = await dislocationsInSlice(store, 'ETH/USD', START, WINDOW_END);
    expect(listed.count).toBe(listed.dislocations.length);
    const ethOpportunities = new Set(revisions.filter((r) => r.pair === 'ETH/USD').map((r) => r.opportunity_id));
    expect(listed.count).toBe(ethOpportunities.size);
    for (const item of listed.dislocations) {
      expect(Number.isSafeInteger(item.id)).toBe(true);
      expect(['OPPORTUNITY', 'CLOSED', 'EXPIRED']).toContain(item.status);
    }
    expect(new Set(listed.dislocations.map((d) => d.id)).size).toBe(listed.count);

    // Candles against the stored samples, 15-minute and 1-hour (the latter derived from the former).
    for (const pair of PAIRS) {
      const opens = revisions.filter((r) => r.pair === pair && num(r.revision) === 0);
      for (const interval of ['15m', '1h'] as const) {
        const size = interval === '15m' ? 900_000 : 3_600_000;
        const candles = await spreadCandles(store, pair, START, WINDOW_END, interval);
        const buckets = new Map<number, typeof samples>();
        for (const s of samples.filter((x) => x.pair === pair)) {
          const b = Math.floor(s.ts_ms / size) * size;
          buckets.set(b, [...(buckets.get(b) ?? []), s]);
        }
        expect(candles.map((c) => Date.parse(c.slice_start))).toEqual([...buckets.keys()].sort((x, y) => x - y));
        expect(candles.length).toBe(interval === '15m' ? 3 : 2);
        for (const c of candles) {
          const list = buckets.get(Date.parse(c.slice_start))!.sort((x, y) => x.seq - y.seq);
          const raws = list.map((s) => s.raw_spread_bps);
          const nets = list.map((s) => s.net_spread_bps);
          expect(c.open_raw_spread_bps).toBe(raws[0]);
          expect(c.close_raw_spread_bps).toBe(raws[raws.length - 1]);
          expect(c.high_raw_spread_bps).toBe(Math.max(...raws));
          expect(c.low_raw_spread_bps).toBe(Math.min(...raws));
          expect(c.avg_net_spread_bps).toBeCloseTo(nets.reduce((x, y) => x + y, 0) / nets.length, 9);
          expect(c.max_net_spread_bps).toBe(Math.max(...nets));
          expect(c.volume_depth_usd).toBeCloseTo(list.reduce((x, s) => x + s.liquidity_depth_usd, 0) / list.length, 6);
          expect(c.sample_count).toBe(list.length);
          const from = Date.parse(c.slice_start);
          expect(c.dislocation_count).toBe(
            opens.filter((r) => num(r.opened_at_ms) >= from && num(r.opened_at_ms) < from + size).length,
          );
          expect(c.source).toBe('simulated');
        }
      }
    }

    // Latency statistics against the published samples (nearest rank).
    const rtts = latency.filter((l) => l.ok).map((l) => l.rtt_ms);
    const stats = await executionLatency(store, START, WINDOW_END);
    expect(stats.sample_count).toBe(rtts.length);
    expect(stats.p50_latency_ms).toBe(nearestRank(rtts, 0.5));
    expect(stats.p90_latency_ms).toBe(nearestRank(rtts, 0.9));
    expect(stats.p99_latency_ms).toBe(nearestRank(rtts, 0.99));
    expect(stats.min_latency_ms).toBe(Math.min(...rtts));
    expect(stats.max_latency_ms).toBe(Math.max(...rtts));
    expect(stats.avg_latency_ms).toBeCloseTo(rtts.reduce((a, b) => a + b, 0) / rtts.length, 9);
    // Successful probes only, as the statistics (a failed probe is a timeout, not a round trip).
    const cex = latency.filter((l) => l.kind === 'cex_rest' && l.ok).map((l) => l.rtt_ms);
    expect(stats.venues.cex_rest_ms).toBeCloseTo(cex.reduce((a, b) => a + b, 0) / cex.length, 9);
    expect((await executionLatency(store, START, WINDOW_END, 'coinbase')).sample_count).toBe(cex.length);

    // Paper executions: each one recomputed from the published quotes and latency samples.
    const executions = await paperExecutionsInRange(store, START, WINDOW_END);
    expect(executions.length).toBe(executed);
    expect(executions.length).toBeGreaterThan(5);
    const measured = executions.filter((e) => e.outcome !== 'unmeasured');
    for (const e of measured) {
      const latest = (kind: string, t: number) =>
        latency.filter((l) => l.kind === kind && l.ok && l.event_time_ms <= t).at(-1)!;
      const buyDex = e.buy_venue.endsWith('_base');
      expect(e.buy_latency_ms).toBe(
        latest(buyDex ? 'dex_rpc' : 'cex_rest', e.decided_at_ms).rtt_ms + (buyDex ? 2000 : 0),
      );
      expect(e.sell_latency_ms).toBe(
        latest(buyDex ? 'cex_rest' : 'dex_rpc', e.decided_at_ms).rtt_ms + (buyDex ? 0 : 2000),
      );
      const inEffect = (venue: string, t: number) =>
        quotes.filter((q) => q.pair === e.pair && q.venue === venue && q.event_time_ms <= t).at(-1)!;
      const buyQ = inEffect(e.buy_venue, e.buy_arrival_ms);
      const sellQ = inEffect(e.sell_venue, e.sell_arrival_ms);
      expect(e.buy_quote_event_id).toBe(buyQ.event_id);
      expect(e.sell_quote_event_id).toBe(sellQ.event_id);
      const bp = buyQ.ladder.find((s) => s.size_usd === e.size_usd)!.buy_price!;
      const sp = sellQ.ladder.find((s) => s.size_usd === e.size_usd)!.sell_price!;
      const net =
        ((sp - bp) / bp) * 1e4 -
        (buyQ.fee_included ? 0 : buyQ.fee_bps) -
        (sellQ.fee_included ? 0 : sellQ.fee_bps) -
        (((buyQ.gas_usd ?? 0) + (sellQ.gas_usd ?? 0)) / e.size_usd) * 1e4;
      expect(e.realised_net_bps).toBeCloseTo(net, 9);
      expect(e.outcome).toBe(net > 0 ? 'filled' : 'missed');
    }
    const filled = measured.filter((e) => e.outcome === 'filled').length;
    expect(stats.executions).toBe(measured.length);
    expect(stats.fill_rate_pct).toBeCloseTo((filled / measured.length) * 100, 9);

    // Shadow capacity adds up over its per-pair breakdown and against the opportunities.
    const shadow = await shadowCapacity(store, START, WINDOW_END);
    const opportunities = await opportunitiesInSlice(store, START, WINDOW_END);
    expect(shadow.opportunities).toBe(opportunities.length);
    expect(shadow.available_volume_usd).toBeCloseTo(
      opportunities.reduce((a, o) => a + o.peak_capacity_usd, 0),
      4,
    );
    expect(shadow.pairs.reduce((a, p) => a + p.uncaptured_volume_usd, 0)).toBeCloseTo(shadow.uncaptured_volume_usd, 4);
    expect(shadow.available_volume_usd - shadow.captured_volume_usd).toBeCloseTo(shadow.uncaptured_volume_usd, 4);
    expect(shadow.capital_required_usd.cex).toBeCloseTo(shadow.uncaptured_volume_usd, 4);

    const cov = await coverage(store);
    expect(cov.supported_pairs.sort()).toEqual([...PAIRS].sort());
    expect(Date.parse(cov.earliest_timestamp!)).toBeGreaterThanOrEqual(START);
    expect(Date.parse(cov.latest_timestamp!)).toBeLessThan(END);
    expect(cov.total_dislocations).toBe(new Set(revisions.map((r) => r.opportunity_id)).size);
    expect(cov.total_executions).toBe(measured.length);

    // Malformed messages went to the dead-letter topics with their reason, once each (one group reads each topic).
    const dead: BusMessage[] = [];
    const dlq = await bus.consume({
      groupId: uniqueName('dlq-reader'),
      topics: [dlqTopic(TOPICS.quotes), dlqTopic(TOPICS.latency)],
      async handleBatch(messages) {
        dead.push(...messages);
      },
    });
    await eventually(
      async () => dead.length,
      (n) => n >= 3,
      30_000,
    );
    // A moment more: a second dead letter for the same message would show up here.
    await new Promise((r) => setTimeout(r, 1000));
    await dlq.stop();
    expect(dead.map((m) => m.headers[DLQ_HEADERS.reason]).sort()).toEqual([
      expect.stringMatching(/^invalid latency sample: rtt_ms/),
      expect.stringMatching(/^invalid quote: bid/),
      expect.stringMatching(/^invalid quote: not JSON/),
    ]);

    // Every revision was published once per id on md.dislocations.v1.
    const published = new Set<string>();
    const reader = await bus.consume({
      groupId: uniqueName('dislocation-reader'),
      topics: [TOPICS.dislocations],
      async handleBatch(messages) {
        for (const m of messages) published.add((JSON.parse(m.value) as { event_id: string }).event_id);
      },
    });
    await eventually(
      async () => published.size,
      (n) => n >= revisions.length,
      30_000,
    );
    await reader.stop();
    expect(published).toEqual(new Set(revisions.map((r) => String(r.event_id))));

    cleanByBackend.set(backend.name, await snapshot(store));
  }, 300_000);

  it('replays from the earliest offsets, and rebuilds into an empty store, without changing any result', async () => {
    const { run: first, snapshot: clean } = await uninterrupted();
    // Same groups, same store, offsets rewound: a replay.
    for (const t of RAW_TOPICS) await bus.resetOffsets(first.raw, t, { kind: 'earliest' });
    await bus.resetOffsets(first.dislocations, TOPICS.quotes, { kind: 'earliest' });
    await start(first);
    await finish(first);
    await stopAll();
    expect(await snapshot(first.store)).toEqual(clean);

    // The whole history into an empty store with new groups.
    const rebuilt = await newRun();
    await start(rebuilt);
    await finish(rebuilt);
    await stopAll();
    expect(await snapshot(rebuilt.store)).toEqual(clean);
  }, 300_000);

  it('loses and duplicates nothing when consumers crash after the store write and before the commit', async () => {
    const { snapshot: clean } = await uninterrupted();
    const run = await newRun();
    const crashes: string[] = [];
    const redelivered = new Set<string>();
    const crashedOn = new Map<string, string>();

    /** Crashes once, at the n-th call: stops the consumer (no commit) and throws, like a process dying there. */
    const crashOnce = (label: string, n: number, consumer: () => Consumer | undefined) => {
      let calls = 0;
      return (messages: BusMessage[]) => {
        const key = `${messages[0]!.topic}/${messages[0]!.partition}/${messages[0]!.offset}`;
        if (crashedOn.has(key)) redelivered.add(key);
        if (++calls !== n) return;
        crashes.push(label);
        crashedOn.set(key, label);
        void consumer()?.stop();
        throw new Error(`simulated crash: ${label}`);
      };
    };

    // Round 1: the raw sink dies after its 3rd write, the quote consumer after its 4th write (before state and commit).
    const c1: Started = {};
    const rawCrash = crashOnce('raw after write', 3, () => c1.raw);
    const disCrash = crashOnce('dislocations after write', 4, () => c1.dis);
    await start(
      run,
      {
        raw: { afterWrite: rawCrash },
        dislocations: { onStage: (stage, m) => (stage === 'written' ? disCrash(m) : undefined) },
      },
      c1,
    );
    await eventually(
      async () => crashes.length,
      (n) => n === 2,
      60_000,
    );
    await eventually(async () => !c1.raw!.status.running && !c1.dis!.status.running, Boolean, 30_000);
    running.splice(0);

    // Round 2 (fresh processes): the quote consumer dies after saving its state of the 3rd batch, before the commit.
    const c2: Started = {};
    const savedCrash = crashOnce('dislocations after state saved', 3, () => c2.dis);
    const seen = (m: BusMessage[]) => {
      const key = `${m[0]!.topic}/${m[0]!.partition}/${m[0]!.offset}`;
      if (crashedOn.has(key)) redelivered.add(key);
    };
    await start(
      run,
      {
        raw: { afterWrite: seen },
        dislocations: { onStage: (stage, m) => (stage === 'saved' ? savedCrash(m) : seen(m)) },
      },
      c2,
    );
    await eventually(
      async () => crashes.length,
      (n) => n === 3,
      60_000,
    );
    await eventually(async () => !c2.dis!.status.running, Boolean, 30_000);
    await c2.raw!.stop();
    running.splice(0);

    // Round 3: restart and finish.
    await start(run, { raw: { afterWrite: seen }, dislocations: { onStage: (_s, m) => seen(m) } });
    await finish(run);
    await stopAll();

    expect(crashes).toEqual(['raw after write', 'dislocations after write', 'dislocations after state saved']);
    // Every crashed batch came again (nothing was committed past it).
    expect([...crashedOn.keys()].every((k) => redelivered.has(k))).toBe(true);
    expect(await snapshot(run.store)).toEqual(clean);
  }, 300_000);

  if (backend.kind === 'kafka') {
    it('recovers when the aggregator process is killed (SIGKILL) after a store write, before the commit', async () => {
      const { snapshot: clean } = await uninterrupted();
      const run = await newRun();
      const child = spawn(process.execPath, ['--import', 'tsx', CRASH_WORKER], {
        env: {
          ...process.env,
          KAFKA_BROKERS: config.KAFKA_BROKERS.join(','),
          CLICKHOUSE_URL: config.CLICKHOUSE_URL,
          CLICKHOUSE_DATABASE: run.database,
          BUS_NAMESPACE: namespace,
          RAW_GROUP: run.raw,
          QUOTES_GROUP: run.dislocations,
          BATCH: String(BATCH),
          KILL_AT: '40', // about half the run: dislocations (net spread > 0) are rarer than raw crossings early on
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      // Bounded: a worker that never reaches its KILL_AT-th batch is killed here, and the assertions below say so.
      const deadline = setTimeout(() => child.kill('SIGTERM'), 90_000);
      const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_code, sig) => resolve(sig)),
      );
      clearTimeout(deadline);
      expect(signal, output).toBe('SIGKILL');
      expect(output).toContain('dying');
      // It died with rows written and offsets not committed.
      expect(await count(run.store, 'dislocations')).toBeGreaterThan(0);
      expect(await caughtUp(bus, run.dislocations, [TOPICS.quotes])).toBe(false);

      // A new consumer: the dead process's member is removed from the group before it joins (kafka-predecessor-eviction.ts).
      await start(run);
      await finish(run);
      await stopAll();
      expect(await snapshot(run.store)).toEqual(clean);
    }, 300_000);
  }
});

describe('aggregation on both engines', () => {
  it('gives the same results on DuckDB and on ClickHouse (when both ran: the suite may be filtered to one)', () => {
    const results = [...cleanByBackend.values()];
    for (const other of results.slice(1)) expect(other).toEqual(results[0]);
  });
});
