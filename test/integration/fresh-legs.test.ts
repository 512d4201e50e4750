/**
 * Fresh legs only, end to end on both stores (DuckDB and REAL ClickHouse
 * 18.16): a seeded simulated market (every catalogue pair, 45 minutes) in
 * which the Base RPC of ETH/USD goes silent for 30 s, through the real quote
 * processor and raw sink into the store, served by the real route handlers:
 *  - the ETH/USD DEX legs stop being evaluated two blocks after the last one
 *    (no spread sample past the maximum age), and evaluation resumes with the
 *    first block after the outage;
 *  - every skipped evaluation is stored once, and the count matches the rule
 *    restated here over the quotes;
 *  - the served `stale_legs` (dislocations, per slice) and `total_stale_legs`
 *    (coverage), and the execution-latency failure figures, equal what the
 *    SQL of docs/metrics.md computes from the stored rows, as written;
 *  - each served dislocation's costs, legs and methodology are its stored
 *    latest revision's (the doc's SQL), its legs are stored quotes, and its
 *    costs add up to its profit.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUOTE_AGE_LIMITS } from '../../aggregate/dislocation-detector.js';
import { METHODOLOGY_VERSION } from '../../aggregate/methodology.js';
import { QuoteProcessor } from '../../aggregate/quote-consumer.js';
import { handleRawBatch } from '../../aggregate/raw-sinks.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import type { SkuRuntime } from '../../api/sku/sku.js';
import { coverageHandler } from '../../api/telemetry/coverage/handler.js';
import { dislocationsHandler } from '../../api/telemetry/dislocations/handler.js';
import { executionLatencyHandler } from '../../api/telemetry/execution-latency/handler.js';
import type { BatchContext, BusMessage } from '../../core/bus/bus.js';
import type { LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { raw, sql, type SqlDialect } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { TOPICS } from '../../core/topics.js';
import { MarketSimulator, type SimEvent } from '../../ingest/simulator/market-simulator.js';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { docSql } from '../helpers/metrics-doc-sql.js';

const logger = testLogger();
const config = testConfig({ MARKET_SOURCE: 'simulated' });
const catalogue = loadPairs();
const PAIR = 'ETH/USD';
const SLICE = 900_000;
const START = Date.UTC(2025, 6, 1, 0, 0);
const END = START + 3 * SLICE;
const SLICES = [0, 1, 2].map((i) => START + i * SLICE);
/** The Base RPC outage of ETH/USD's pools: 30 s in the middle slice. */
const OUTAGE: [number, number] = [START + SLICE + 300_000, START + SLICE + 330_000];

const isEthDexQuote = (e: SimEvent) =>
  e.topic === TOPICS.quotes && e.event.pair === PAIR && (e.event as QuoteEvent).venue_kind === 'dex';
const inOutage = (t: number) => t >= OUTAGE[0] && t < OUTAGE[1];
/** The served precision of bps and USD (docs/metrics.md, "Precision"). */
const dp2 = (v: number) => (Math.sign(v) * Math.round(Math.abs(v) * 100)) / 100;

const simulated = [
  ...new MarketSimulator(catalogue, {
    seed: 4711,
    startMs: START,
    cexVenue: config.CEX_EXCHANGE,
    ladderUsd: [1000, 10000, 50000],
    bookEveryTicks: 20,
  }).generate(END),
];
// The outage: ETH/USD's DEX quotes stop; the probes of the outage failed (one Base RPC timeout every block).
const events = simulated.filter((e) => !(isEthDexQuote(e) && inOutage(e.event.event_time_ms)));
const failedProbes: LatencyEvent[] = [];
for (let t = OUTAGE[0]; t < OUTAGE[1]; t += 2000)
  failedProbes.push({
    event_id: `fresh-legs-timeout-${t}`,
    venue: 'base_rpc',
    venue_kind: 'dex',
    kind: 'dex_rpc',
    endpoint: 'eth_gasPrice',
    rtt_ms: 5000,
    ok: false,
    event_time_ms: t,
    ingest_time_ms: t + 5000,
    source: 'simulated',
  });

const quotes = events.filter((e) => e.topic === TOPICS.quotes).map((e) => e.event as QuoteEvent);

/** The rule restated: per quote newer than its venue's, each held quote of the other kind older at t than its maximum. */
function staleByRule(pair: string): number[] {
  const held = new Map<string, QuoteEvent>();
  const times: number[] = [];
  for (const q of quotes) {
    if (q.pair !== pair) continue;
    const h = held.get(q.venue);
    if (h && (h.event_time_ms > q.event_time_ms || (h.event_time_ms === q.event_time_ms && h.event_id >= q.event_id)))
      continue;
    held.set(q.venue, q);
    for (const other of held.values()) {
      if (other.venue_kind === q.venue_kind) continue;
      const t = Math.max(q.event_time_ms, other.event_time_ms);
      const older = q.event_time_ms <= other.event_time_ms ? q : other;
      if (t - older.event_time_ms > DEFAULT_QUOTE_AGE_LIMITS[older.venue_kind]) times.push(t);
    }
  }
  return times;
}

async function load(store: Store): Promise<void> {
  const ctx: BatchContext = {
    deadLetter: async (_m, reason) => {
      throw new Error(`dead letter: ${reason}`);
    },
    signal: new AbortController().signal,
  };
  const asMessages = (list: { topic: string; key: string; event: { event_time_ms: number } }[]): BusMessage[] =>
    list.map((e, i) => ({
      topic: e.topic,
      partition: 0,
      offset: String(i),
      key: e.key,
      value: JSON.stringify(e.event),
      headers: {},
      timestamp: e.event.event_time_ms,
    }));
  const processor = new QuoteProcessor(store, undefined, { groupId: uniqueName('fresh'), logger });
  const quoteMessages = asMessages(events.filter((e) => e.topic === TOPICS.quotes));
  for (let i = 0; i < quoteMessages.length; i += 10_000)
    await processor.handleBatch(quoteMessages.slice(i, i + 10_000), ctx);
  // A redelivered batch writes its rows again: the counts must not change.
  const again = new QuoteProcessor(store, undefined, { groupId: uniqueName('fresh-again'), logger });
  await again.handleBatch(quoteMessages.slice(0, 10_000), ctx);
  const rawEvents = [
    ...events.filter((e) => e.topic !== TOPICS.quotes),
    ...failedProbes.map((event) => ({ topic: TOPICS.latency, key: event.venue, event })),
  ];
  await handleRawBatch(store, asMessages(rawEvents), ctx);
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
      const dir = await mkdtemp(join(tmpdir(), 'fresh-legs-'));
      const store = await createDuckDbStore({ path: join(dir, 'fresh.duckdb'), logger });
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
      const { store, close } = await openClickHouseTestStore(config, 'fresh_legs', logger);
      await store.migrate();
      return { store, cleanup: close };
    },
  },
];

describe.each(backends)('fresh legs only over $name', (backend) => {
  let store: Store;
  let cleanup: (() => Promise<void>) | undefined;
  let runtime: SkuRuntime;
  const call = <I>(input: I) => ({ input, runtime, priceAtomic: '0' });
  const win = (fromMs: number) => ({ fromMs, toMs: fromMs + SLICE });

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
    await load(store);
    runtime = {
      store,
      config,
      pairs: catalogue,
      catalogue: buildCatalogue({ config, pairs: catalogue }),
      now: () => END + 3_600_000,
    };
  }, 600_000);

  afterAll(async () => {
    await cleanup?.();
  }, 120_000);

  it('stops evaluating a DEX leg two blocks after its last block, resumes with the next one, and counts every skip', async () => {
    const lastBlock = Math.max(
      ...quotes
        .filter((q) => q.pair === PAIR && q.venue_kind === 'dex' && q.event_time_ms < OUTAGE[0])
        .map((q) => q.event_time_ms),
    );
    const firstBlock = Math.min(
      ...quotes
        .filter((q) => q.pair === PAIR && q.venue_kind === 'dex' && q.event_time_ms >= OUTAGE[1])
        .map((q) => q.event_time_ms),
    );
    const maxDex = DEFAULT_QUOTE_AGE_LIMITS.dex;
    const [during] = await store.query(sql`
      SELECT count(*) AS n FROM spread_samples
      WHERE pair = ${PAIR} AND ts_ms > ${lastBlock + maxDex} AND ts_ms < ${firstBlock}`);
    expect(num(during!.n)).toBe(0);
    const [after] = await store.query(sql`
      SELECT count(*) AS n FROM spread_samples WHERE pair = ${PAIR} AND ts_ms >= ${firstBlock} AND ts_ms < ${firstBlock + 2000}`);
    expect(num(after!.n)).toBeGreaterThan(0);

    const expected = staleByRule(PAIR);
    const inOutageSkips = expected.filter((t) => t > lastBlock + maxDex && t <= firstBlock).length;
    expect(inOutageSkips).toBeGreaterThan(40); // 500 ms CEX ticks over ~26 s, per pool
    const [stored] = await store.query(sql`
      SELECT count(DISTINCT evaluation_id) AS n, max(leg_age_ms) AS oldest, min(leg_age_ms) AS youngest
      FROM stale_evaluations WHERE pair = ${PAIR}`);
    expect(num(stored!.n)).toBe(expected.length);
    expect(num(stored!.youngest)).toBeGreaterThan(Math.min(...Object.values(DEFAULT_QUOTE_AGE_LIMITS)));
    expect(num(stored!.oldest)).toBeGreaterThanOrEqual(OUTAGE[1] - OUTAGE[0] - 2000);

    // Served per slice: the outage's slice counts its skips, and its coverage shows the hole.
    const served = await Promise.all(SLICES.map((from) => dislocationsHandler(call({ pair: PAIR }), win(from))));
    const bySlice = SLICES.map((from) => expected.filter((t) => t >= from && t < from + SLICE).length);
    expect(served.map((s) => s.stale_legs)).toEqual(bySlice);
    expect(served[1]!.stale_legs).toBeGreaterThanOrEqual(inOutageSkips);
    expect(served[1]!.coverage_pct).toBeLessThan(100);
    // No served opportunity was evaluated on the silent pools during the outage.
    for (const d of served[1]!.dislocations) {
      const opened = Date.parse(d.timestamp);
      expect(opened > lastBlock + maxDex && opened < firstBlock).toBe(false);
    }
  });

  it('serves stale_legs and the probe failure rate as the SQL of docs/metrics.md computes them', async () => {
    const run = (name: string, params: Record<string, string | number>) =>
      store.query(raw(docSql(name, backend.dialect, params)));
    for (const pair of catalogue.pairs.map((p) => p.pair)) {
      const rows = new Map(
        (await run('stale-legs', { pair, from_ms: START, to_ms: END })).map((r) => [num(r.slice_start_ms), r]),
      );
      for (const from of SLICES) {
        const served = await dislocationsHandler(call({ pair }), win(from));
        expect(served.stale_legs, `${pair} ${new Date(from).toISOString()}`).toBe(num(rows.get(from)?.stale_legs ?? 0));
      }
    }
    const [total] = await run('stale-legs-total', {});
    const coverage = await coverageHandler(call({}));
    expect(coverage.total_stale_legs).toBe(num(total!.total_stale_legs));
    expect(coverage.total_stale_legs).toBeGreaterThan(0);

    for (const from of SLICES) {
      const served = await executionLatencyHandler(call({}), win(from));
      const [f] = await run('latency-failures', { from_ms: from, to_ms: from + SLICE });
      expect(served.failed_count).toBe(num(f!.failed_count));
      expect(served.sample_count + served.failed_count).toBe(num(f!.probes));
      const rate = num(f!.failure_rate_pct);
      expect(Math.abs(served.failure_rate_pct! - rate)).toBeLessThanOrEqual(0.005 + 1e-9);
    }
    const outage = await executionLatencyHandler(call({}), win(SLICES[1]!));
    expect(outage.failed_count).toBeGreaterThanOrEqual(failedProbes.length);
  });

  it('serves the costs, legs and methodology behind each dislocation as stored, and the costs add up', async () => {
    const run = (name: string, params: Record<string, string | number>) =>
      store.query(raw(docSql(name, backend.dialect, params)));
    let items = 0;
    for (const pair of catalogue.pairs.map((p) => p.pair)) {
      for (const from of SLICES) {
        const served = await dislocationsHandler(call({ pair }), win(from));
        expect(served.methodology).toBe(METHODOLOGY_VERSION);
        const rows = await run('dislocation-inputs', { pair, from_ms: from, to_ms: from + SLICE });
        expect(rows.length).toBe(served.dislocations.length);
        for (const [i, d] of served.dislocations.entries()) {
          const r = rows[i]!;
          items += 1;
          const size = num(r.size_usd);
          expect(d.costs).toEqual({
            profit_size_usd: dp2(size),
            cex_fee_bps: dp2(num(r.cex_fee)),
            dex_fee_bps: dp2(num(r.dex_fee)),
            fees_bps: dp2(num(r.fees)),
            gas_usd: dp2(num(r.gas)),
            slippage_bps: dp2(num(r.slippage)),
          });
          expect(d.methodology).toBe(r.methodology_);
          expect(d.legs).toMatchObject({
            cex: { venue: config.CEX_EXCHANGE, event_id: r.cex_id, event_time: new Date(num(r.cex_ms)).toISOString() },
            dex: {
              event_id: r.dex_id,
              event_time: new Date(num(r.dex_ms)).toISOString(),
              block_number: num(r.dex_block),
            },
          });
          // The costs add up to the profit at its size.
          const net = num(r.raw_bps) - num(r.slippage) - num(r.fees) - (num(r.gas) / size) * 1e4;
          expect((size * net) / 1e4).toBeCloseTo(num(r.profit), 6);
          // The legs are stored quotes: same time, the DEX one at its block, the fee tier its fee.
          const legs = await store.query(
            sql`SELECT event_id, venue_kind, ts_ms, sequence, fee_bps FROM quotes WHERE event_id IN (${String(r.cex_id)}, ${String(r.dex_id)})`,
          );
          const byKind = new Map(legs.map((q) => [String(q.venue_kind), q]));
          expect(num(byKind.get('cex')!.ts_ms)).toBe(num(r.cex_ms));
          expect([num(byKind.get('dex')!.ts_ms), num(byKind.get('dex')!.sequence)]).toEqual([
            num(r.dex_ms),
            num(r.dex_block),
          ]);
          expect([num(byKind.get('cex')!.fee_bps), num(byKind.get('dex')!.fee_bps)]).toEqual([
            num(r.cex_fee),
            num(r.dex_fee),
          ]);
        }
      }
    }
    expect(items).toBeGreaterThan(5);
  });
});
