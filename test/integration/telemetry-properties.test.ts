/**
 * Properties of the served telemetry over a long simulated market (three
 * hours, every catalogue pair), on both stores (DuckDB and REAL ClickHouse
 * 18.16), through the real aggregate logic (quote processor, raw sinks, paper
 * executor) and the real route handlers:
 *  - every served dislocation pays: its peak net spread is above the
 *    threshold (0), and every stored revision's net spread is positive;
 *  - peaks are at least the current values; capacity is at most the depth;
 *  - depth is a measurement: it equals a ladder size only where a marker says
 *    it is a lower bound, and it moves;
 *  - candles are consistent (low <= open, close <= high; mean <= max net; an
 *    hour is its four quarters);
 *  - the SQL of docs/metrics.md (blocks marked `reproduce:`), run as written,
 *    reproduces every served number on both engines, at the served precision;
 *  - both engines serve the same answers.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaperExecutor } from '../../aggregate/paper-execution.js';
import { QuoteProcessor } from '../../aggregate/quote-consumer.js';
import { handleRawBatch } from '../../aggregate/raw-sinks.js';
import type { BatchContext, BusMessage } from '../../core/bus/bus.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { raw, sql, type SqlDialect } from '../../core/store/sql.js';
import type { Row, Store } from '../../core/store/store.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { TOPICS } from '../../core/topics.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import type { SkuRuntime } from '../../api/sku/sku.js';
import { coverageHandler } from '../../api/telemetry/coverage/handler.js';
import { dislocationsHandler, type DislocationsOutput } from '../../api/telemetry/dislocations/handler.js';
import { executionLatencyHandler } from '../../api/telemetry/execution-latency/handler.js';
import { shadowCapacityHandler } from '../../api/telemetry/shadow-capacity/handler.js';
import { spreadCandlesHandler, type SpreadCandlesOutput } from '../../api/telemetry/spread-candles/handler.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';
import { testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { docSql } from '../helpers/metrics-doc-sql.js';

const logger = testLogger();
const config = testConfig({ MARKET_SOURCE: 'simulated' });
const catalogue = loadPairs();
const LADDER = [1000, 10000, 50000, 100000];
const HOURS = 3;
const START = Date.UTC(2025, 5, 2, 0, 0);
const END = START + HOURS * 3_600_000;
const SLICE = 900_000;
const SLICES = Array.from({ length: (END - START) / SLICE }, (_, i) => START + i * SLICE);
const PAIRS = catalogue.pairs.map((p) => p.pair);

// A book snapshot every 5 s (every 10th CEX tick): enough to walk a quote's book, a fifth of the rows to store.
const events = [
  ...new MarketSimulator(catalogue, {
    seed: 2031,
    startMs: START,
    cexVenue: 'coinbase',
    ladderUsd: LADDER,
    bookEveryTicks: 10,
  }).generate(END),
];

/** The served precision (docs/metrics.md, "Precision"), written again. */
const dp = (v: number, places: number) => (Math.sign(v) * Math.round(Math.abs(v) * 10 ** places)) / 10 ** places;
const price6 = (v: number) => (Math.abs(v) >= 1e4 ? dp(v, 2) : Number(v.toPrecision(6)));
/** `served` is `exact` rounded to `places` decimals (half a unit, plus the last bits two engines may sum differently). */
function expectRounded(served: number, exact: number, places: number, what: string): void {
  expect(Math.abs(served - exact), `${what}: served ${served}, SQL ${exact}`).toBeLessThanOrEqual(
    0.5 * 10 ** -places + 1e-9 * Math.max(1, Math.abs(exact)),
  );
}

async function load(store: Store): Promise<number> {
  const t0 = performance.now();
  const ctx: BatchContext = {
    deadLetter: async (_m, reason) => {
      throw new Error(`dead letter: ${reason}`);
    },
    signal: new AbortController().signal,
  };
  const asMessages = (list: typeof events): BusMessage[] =>
    list.map((e, i) => ({
      topic: e.topic,
      partition: 0,
      offset: String(i),
      key: e.key,
      value: JSON.stringify(e.event),
      headers: {},
      timestamp: e.event.event_time_ms,
    }));
  const quotes = asMessages(events.filter((e) => e.topic === TOPICS.quotes));
  // The deployed detector: minimum life and profit from the configuration's defaults.
  const processor = new QuoteProcessor(store, undefined, {
    groupId: uniqueName('props'),
    logger,
    minLifeMs: config.DISLOCATION_MIN_LIFE_MS,
    minProfitUsd: config.DISLOCATION_MIN_PROFIT_USD,
  });
  for (let i = 0; i < quotes.length; i += 20_000) await processor.handleBatch(quotes.slice(i, i + 20_000), ctx);
  const rawEvents = events.filter((e) => e.topic !== TOPICS.quotes);
  for (let i = 0; i < rawEvents.length; i += 20_000)
    await handleRawBatch(store, asMessages(rawEvents.slice(i, i + 20_000)), ctx);
  const paper = new PaperExecutor(store, logger);
  for (let i = 0; i < 20 && (await paper.runOnce()) > 0; i++);
  return performance.now() - t0;
}

interface Backend {
  name: string;
  dialect: SqlDialect;
  open(): Promise<{ store: Store; cleanup(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'DuckDB',
    dialect: 'duckdb',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'props-'));
      const store = await createDuckDbStore({ path: join(dir, 'props.duckdb'), logger });
      await store.migrate();
      return {
        store,
        cleanup: async () => {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'ClickHouse',
    dialect: 'clickhouse',
    async open() {
      const { store, close } = await openClickHouseTestStore(config, 'props', logger);
      await store.migrate();
      return {
        store,
        cleanup: close,
      };
    },
  },
];

/** Everything served, per backend, compared across engines at the end. */
const servedBy = new Map<string, unknown>();

describe.each(backends)('telemetry properties over $name', (backend) => {
  let store: Store;
  let cleanup: (() => Promise<void>) | undefined;
  let runtime: SkuRuntime;
  const call = <I>(input: I) => ({ input, runtime, priceAtomic: '0' });
  const win = (fromMs: number, size = SLICE) => ({ fromMs, toMs: fromMs + size });
  const candles = new Map<string, SpreadCandlesOutput>();
  const lists = new Map<string, DislocationsOutput>();

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
    const ms = await load(store);
    console.log(
      `[${backend.name}] ${events.length} simulated events (${HOURS} h, ${PAIRS.length} pairs) aggregated in ${Math.round(ms)} ms`,
    );
    runtime = {
      store,
      config,
      pairs: catalogue,
      catalogue: buildCatalogue({ config, pairs: catalogue }),
      now: () => END + 60_000,
    };
    for (const pair of PAIRS) {
      for (const from of SLICES) {
        candles.set(`${pair}@${from}`, await spreadCandlesHandler(call({ pair, interval: '15m' as const }), win(from)));
        lists.set(`${pair}@${from}`, await dislocationsHandler(call({ pair, revisions: true }), win(from)));
      }
    }
    // CPU-bound: about a minute per engine on a quiet machine, more than ten times that on a busy 2-core one.
  }, 1_800_000);

  afterAll(async () => {
    await cleanup?.();
  }, 120_000);

  it('serves dislocations that pay at their peak, with peaks at least the current values and capacity within the depth', async () => {
    let items = 0;
    for (const list of lists.values()) {
      for (const d of list.dislocations) {
        items += 1;
        // Served rounded, but never as 0: every revision pays at least the minimum profit.
        expect(d.net_spread_bps, d.id.toString()).toBeGreaterThan(0);
        expect(d.est_profit_usd, d.id.toString()).toBeGreaterThanOrEqual(config.DISLOCATION_MIN_PROFIT_USD);
        expect(d.peak_net_spread_bps, d.id.toString()).toBeGreaterThan(0);
        for (const r of d.revisions!) expect([r.net_spread_bps > 0, r.est_profit_usd > 0]).toEqual([true, true]);
        // Served only once it has lived the minimum life, from its first actionable instant.
        expect(d.duration_ms).toBeGreaterThanOrEqual(config.DISLOCATION_MIN_LIFE_MS);
        expect(d.peak_raw_spread_bps).toBeGreaterThanOrEqual(d.raw_spread_bps);
        expect(d.peak_net_spread_bps).toBeGreaterThanOrEqual(d.net_spread_bps);
        expect(d.peak_profit_usd).toBeGreaterThanOrEqual(d.est_profit_usd);
        expect(d.peak_capacity_usd).toBeGreaterThanOrEqual(d.capacity_usd);
        expect(d.capacity_usd).toBeLessThanOrEqual(d.liquidity_depth_usd);
        expect(d.revisions!.length).toBe(d.revision_count);
        expect(Math.max(...d.revisions!.map((r) => r.raw_spread_bps))).toBe(d.peak_raw_spread_bps);
      }
    }
    expect(items).toBeGreaterThan(100);
    // Stored, unrounded: every revision pays the minimum profit after fees, gas and slippage at a ladder size, so
    // every peak does; revision 0 comes after the minimum life.
    const [bad] = await store.query(
      sql`SELECT count(*) AS n FROM dislocations WHERE net_spread_bps <= 0 OR est_profit_usd < ${config.DISLOCATION_MIN_PROFIT_USD} OR capacity_usd <= 0 OR peak_net_bps <= 0 OR (revision = 0 AND duration_ms < ${config.DISLOCATION_MIN_LIFE_MS})`,
    );
    expect(num(bad!.n)).toBe(0);
    // Raw crossings that do not pay stay samples: many more samples cross than open.
    const [crossing] = await store.query(
      sql`SELECT count(*) AS n FROM spread_samples WHERE raw_spread_bps > 0 AND net_spread_bps <= 0`,
    );
    expect(num(crossing!.n)).toBeGreaterThan(items);
  });

  it('measures depth: a ladder size only where a marker says it is a lower bound, and it moves', async () => {
    const rungs = raw(LADDER.join(', '));
    for (const table of ['spread_samples', 'dislocations'] as const) {
      const [r] = await store.query(sql`
        SELECT count(*) AS n, sum(CASE WHEN liquidity_depth_capped = 1 THEN 1 ELSE 0 END) AS capped,
          sum(CASE WHEN liquidity_depth_usd IN (${rungs}) AND liquidity_depth_capped = 0 THEN 1 ELSE 0 END) AS rung_unmarked,
          count(DISTINCT liquidity_depth_usd) AS distinct_depths
        FROM ${raw(table)}`);
      expect(num(r!.rung_unmarked), table).toBe(0);
      expect(num(r!.capped) / num(r!.n), table).toBeLessThan(0.1);
      expect(num(r!.distinct_depths), table).toBeGreaterThan(num(r!.n) / 20);
    }
    for (const c of candles.values()) expect(LADDER).not.toContain(c.volume_depth_usd);
  });

  it('serves consistent candles: OHLC ordered, mean net at most the max, an hour made of its quarters', async () => {
    for (const c of candles.values()) {
      expect(c.low_raw_spread_bps).toBeLessThanOrEqual(Math.min(c.open_raw_spread_bps, c.close_raw_spread_bps));
      expect(c.high_raw_spread_bps).toBeGreaterThanOrEqual(Math.max(c.open_raw_spread_bps, c.close_raw_spread_bps));
      expect(c.avg_net_spread_bps).toBeLessThanOrEqual(c.max_net_spread_bps);
      expect(c.volume_depth_usd).toBeGreaterThan(0);
    }
    for (const pair of PAIRS.slice(0, 4)) {
      const hour = await spreadCandlesHandler(
        call({ pair, interval: '1h' as const }),
        win(START + 3_600_000, 3_600_000),
      );
      const quarters = [0, 1, 2, 3].map((i) => candles.get(`${pair}@${START + 3_600_000 + i * SLICE}`)!);
      expect(hour.open_raw_spread_bps).toBe(quarters[0]!.open_raw_spread_bps);
      expect(hour.close_raw_spread_bps).toBe(quarters[3]!.close_raw_spread_bps);
      expect(hour.high_raw_spread_bps).toBe(Math.max(...quarters.map((q) => q.high_raw_spread_bps)));
      expect(hour.low_raw_spread_bps).toBe(Math.min(...quarters.map((q) => q.low_raw_spread_bps)));
      expect(hour.dislocation_count).toBe(quarters.reduce((a, q) => a + q.dislocation_count, 0));
      expect(hour.volume_depth_capped).toBe(quarters.some((q) => q.volume_depth_capped));
    }
  });

  it('is reproduced by the SQL of docs/metrics.md, as written, on this engine', async () => {
    const run = async (name: string, params: Record<string, string | number>): Promise<Row[]> =>
      store.query(raw(docSql(name, backend.dialect, params)));
    // Candles and their dislocation counts, every pair, over the whole run.
    for (const pair of PAIRS) {
      const rows = await run('candles-15m', { pair, from_ms: START, to_ms: END });
      const counts = new Map(
        (await run('dislocation-count', { pair, from_ms: START, to_ms: END })).map((r) => [
          num(r.slice_start_ms),
          num(r.dislocation_count),
        ]),
      );
      expect(rows.length).toBe(SLICES.length);
      for (const r of rows) {
        const from = num(r.slice_start_ms);
        const c = candles.get(`${pair}@${from}`)!;
        const what = `${pair} ${new Date(from).toISOString()}`;
        expectRounded(c.open_raw_spread_bps, num(r.open_raw_spread_bps), 2, `${what} open`);
        expectRounded(c.high_raw_spread_bps, num(r.high_raw_spread_bps), 2, `${what} high`);
        expectRounded(c.low_raw_spread_bps, num(r.low_raw_spread_bps), 2, `${what} low`);
        expectRounded(c.close_raw_spread_bps, num(r.close_raw_spread_bps), 2, `${what} close`);
        expectRounded(c.avg_net_spread_bps, num(r.avg_net_spread_bps), 2, `${what} avg net`);
        expectRounded(c.max_net_spread_bps, num(r.max_net_spread_bps), 2, `${what} max net`);
        expectRounded(c.volume_depth_usd, num(r.volume_depth_usd), 2, `${what} depth`);
        expect(c.volume_depth_capped).toBe(num(r.volume_depth_capped) === 1);
        expect(c.dislocation_count).toBe(counts.get(from) ?? 0);
      }
      const hours = await run('candles-1h', { pair, from_ms: START, to_ms: END });
      expect(hours.length).toBe(HOURS);
      const h = hours[1]!;
      const served = await spreadCandlesHandler(
        call({ pair, interval: '1h' as const }),
        win(num(h.slice_start_ms), 3_600_000),
      );
      expectRounded(served.avg_net_spread_bps, num(h.avg_net_spread_bps), 2, `${pair} 1h avg net`);
      expectRounded(served.volume_depth_usd, num(h.volume_depth_usd), 2, `${pair} 1h depth`);
      expectRounded(served.high_raw_spread_bps, num(h.high_raw_spread_bps), 2, `${pair} 1h high`);
    }
    // Dislocation items and their revisions, every pair and slice.
    for (const pair of PAIRS) {
      for (const from of SLICES) {
        const list = lists.get(`${pair}@${from}`)!;
        const rows = await run('dislocations', { pair, from_ms: from, to_ms: from + SLICE });
        expect(rows.map((r) => num(r.public_id))).toEqual(list.dislocations.map((d) => d.id));
        const revisions = await run('revisions', { pair, from_ms: from, to_ms: from + SLICE });
        rows.forEach((r, i) => {
          const d = list.dislocations[i]!;
          expect(d.timestamp).toBe(new Date(num(r.opened_ms)).toISOString());
          expect(d.updated_at).toBe(new Date(num(r.updated_ms)).toISOString());
          expect(d.revision_count).toBe(num(r.revision_count));
          expect([d.buy_venue, d.sell_venue, d.status, d.duration_ms]).toEqual([
            r.buy,
            r.sell,
            r.status_,
            num(r.duration),
          ]);
          expect(d.buy_price).toBe(price6(num(r.buy_px)));
          expect(d.sell_price).toBe(price6(num(r.sell_px)));
          for (const [served, stored, places] of [
            [d.raw_spread_bps, r.raw_bps, 2],
            [d.net_spread_bps, r.net_bps, 2],
            [d.est_profit_usd, r.profit, 2],
            [d.liquidity_depth_usd, r.depth, 2],
            [d.capacity_usd, r.capacity, 2],
            [d.peak_raw_spread_bps, r.peak_raw, 2],
            [d.peak_net_spread_bps, r.peak_net, 2],
            [d.peak_profit_usd, r.peak_profit, 2],
            [d.peak_size_usd, r.peak_size, 2],
            [d.peak_capacity_usd, r.peak_capacity, 2],
          ] as const)
            expectRounded(served, num(stored), places, `${pair} ${d.id}`);
          expect([d.liquidity_depth_capped, d.capacity_capped]).toEqual([
            num(r.depth_capped) === 1,
            num(r.capacity_capped_) === 1,
          ]);
          // The peaks are the maxima over the revisions.
          expect([num(r.peak_raw), num(r.peak_net), num(r.peak_profit)]).toEqual([
            num(r.max_raw),
            num(r.max_net),
            num(r.max_profit),
          ]);
          const own = revisions.filter((x) => x.opportunity_id === r.opportunity_id);
          expect(own.map((x) => num(x.revision))).toEqual(d.revisions!.map((x) => x.revision));
          own.forEach((x, k) => {
            const s = d.revisions![k]!;
            expect(s.updated_at).toBe(new Date(num(x.updated_at_ms)).toISOString());
            expectRounded(s.net_spread_bps, num(x.net_spread_bps), 2, 'revision net');
            expectRounded(s.capacity_usd, num(x.capacity_usd), 2, 'revision capacity');
            expectRounded(s.liquidity_depth_usd, num(x.liquidity_depth_usd), 2, 'revision depth');
          });
        });
      }
    }
    // Completeness of the candles and dislocation lists: coverage and as_of per slice, complete per window end.
    const closedRule = {
      closed_after_ms: config.TELEMETRY_CACHE_CLOSED_AFTER_MS,
      data_margin_ms: config.TELEMETRY_CACHE_DATA_MARGIN_MS,
      now_ms: runtime.now(),
    };
    let completeSlices = 0;
    for (const pair of PAIRS) {
      const rows = await run('slice-coverage', { pair, from_ms: START, to_ms: END });
      expect(rows.length).toBe(SLICES.length);
      for (const r of rows) {
        const from = num(r.slice_start_ms);
        const [c] = await run('slice-complete', { pair, to_ms: from + SLICE, ...closedRule });
        for (const served of [candles.get(`${pair}@${from}`)!, lists.get(`${pair}@${from}`)!]) {
          expectRounded(served.coverage_pct, num(r.coverage_pct), 2, `${pair} ${from} coverage`);
          expect(served.as_of).toBe(new Date(num(r.as_of_ms)).toISOString());
          expect(served.complete).toBe(num(c!.complete) === 1);
        }
        if (num(c!.complete) === 1) completeSlices += 1;
      }
    }
    // The last hour of the run is not final yet (the data margin); the rest is.
    expect(completeSlices).toBeGreaterThan(0);
    expect(completeSlices).toBeLessThan(PAIRS.length * SLICES.length);
    const spreadCoverage = new Map(
      (await run('slice-coverage-all', { from_ms: START, to_ms: END })).map((r) => [num(r.slice_start_ms), r]),
    );
    const latencyCoverage = new Map(
      (await run('latency-coverage', { from_ms: START, to_ms: END })).map((r) => [num(r.slice_start_ms), r]),
    );
    // Shadow capacity, execution latency and the fill rate of every slice.
    for (const from of SLICES) {
      const served = await shadowCapacityHandler(call({}), win(from));
      const [r] = await run('shadow-capacity', { from_ms: from, to_ms: from + SLICE });
      expect(served.opportunities).toBe(num(r!.opportunities));
      expect(served.actionable_opportunities).toBe(num(r!.actionable_opportunities));
      const available = num(r!.available_volume_usd);
      const captured = num(r!.captured_volume_usd);
      for (const [s, v] of [
        [served.available_volume_usd, available],
        [served.captured_volume_usd, captured],
        [served.uncaptured_volume_usd, num(r!.uncaptured_volume_usd)],
        [served.est_uncaptured_profit_usd, num(r!.est_uncaptured_profit_usd)],
        [served.max_capacity_usd, num(r!.max_capacity_usd)],
        [served.time_weighted_capacity_usd, num(r!.time_weighted_capacity_usd)],
        [served.avg_capacity_usd, num(r!.actionable_opportunities) ? available / num(r!.actionable_opportunities) : 0],
        [served.capital_split_usd.cex.quote_usd, num(r!.cex_quote_usd)],
        [served.capital_split_usd.cex.base_usd, num(r!.cex_base_usd)],
        [served.capital_split_usd.base_dex.quote_usd, num(r!.dex_quote_usd)],
        [served.capital_split_usd.base_dex.base_usd, num(r!.dex_base_usd)],
      ] as const)
        expectRounded(s, v, 2, `shadow ${new Date(from).toISOString()}`);
      expect(served.max_capacity_capped).toBe(num(r!.max_capacity_capped) === 1);
      const [allComplete] = await run('slice-complete-all', { to_ms: from + SLICE, ...closedRule });
      const spread = spreadCoverage.get(from)!;
      expectRounded(served.coverage_pct, num(spread.coverage_pct), 2, 'shadow coverage');
      expect(served.as_of).toBe(new Date(num(spread.as_of_ms)).toISOString());
      expect(served.complete).toBe(num(allComplete!.complete) === 1);
      if (available > 0) expectRounded(served.capture_rate_pct!, (captured / available) * 100, 2, 'capture rate');
      else expect(served.capture_rate_pct).toBeNull();

      const latency = await executionLatencyHandler(call({}), win(from));
      const [l] = await run('execution-latency', { from_ms: from, to_ms: from + SLICE });
      expect(latency.sample_count).toBe(num(l!.sample_count));
      const probes = latencyCoverage.get(from)!;
      expectRounded(latency.coverage_pct, num(probes.coverage_pct), 2, 'latency coverage');
      expect(latency.as_of).toBe(new Date(num(probes.as_of_ms)).toISOString());
      expect(latency.complete).toBe(num(allComplete!.complete) === 1);
      for (const [s, v] of [
        [latency.p50_latency_ms, l!.p50],
        [latency.p90_latency_ms, l!.p90],
        [latency.p99_latency_ms, l!.p99],
        [latency.min_latency_ms, l!.min_ms],
        [latency.max_latency_ms, l!.max_ms],
        [latency.avg_latency_ms, l!.avg_ms],
      ] as const)
        expectRounded(s, num(v), 1, 'latency');
      const [f] = await run('fill-rate', { from_ms: from, to_ms: from + SLICE });
      if (num(f!.executions) > 0) expectRounded(latency.fill_rate_pct!, num(f!.fill_rate_pct), 2, 'fill rate');
      else expect(latency.fill_rate_pct).toBeNull();
    }
    const cov = await coverageHandler(call({}));
    const [c] = await run('coverage', {});
    expect(cov.earliest_timestamp).toBe(new Date(num(c!.earliest_ms)).toISOString());
    expect(cov.latest_timestamp).toBe(new Date(num(c!.latest_ms)).toISOString());
    expect(cov.supported_pairs.length).toBe(num(c!.pairs));
    expect([cov.total_dislocations, cov.total_executions]).toEqual([
      num(c!.total_dislocations),
      num(c!.total_executions),
    ]);
    expect(cov.total_executions).toBeGreaterThan(0);
  }, 300_000);

  if (backend.dialect === 'duckdb') {
    it("reproduces a CEX quote's measured depth by walking its stored book with the SQL of docs/metrics.md", async () => {
      const rows = await store.query(sql`
        SELECT q.depth_buy_usd AS stored, q.depth_buy_capped AS capped, q.depth_impact_bps AS bps, b.event_id AS book
        FROM quotes q JOIN book_snapshots b ON b.pair = q.pair AND b.venue = q.venue AND b.ts_ms = q.ts_ms AND b.sequence = q.sequence
        WHERE q.venue_kind = 'cex' ORDER BY q.event_id LIMIT 200`);
      expect(rows.length).toBe(200);
      for (const r of rows) {
        const [d] = await store.query(
          raw(docSql('cex-depth-buy', 'duckdb', { impact_bps: num(r.bps), book_event_id: String(r.book) })),
        );
        expect(num(d!.depth_buy_usd)).toBeCloseTo(num(r.stored), 6);
        expect(Boolean(d!.depth_buy_capped)).toBe(num(r.capped) === 1);
      }
    });
  }

  it('records what it served, for the comparison across engines', () => {
    servedBy.set(backend.name, { candles: [...candles.entries()], lists: [...lists.entries()] });
  });
});

describe('telemetry properties on both engines', () => {
  it('serves the same answers from DuckDB and from ClickHouse', () => {
    const [a, b] = [...servedBy.values()];
    if (a && b) expect(b).toEqual(a);
  });
});
