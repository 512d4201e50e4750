/**
 * The telemetry routes end to end: the real api role (startProcess, ROLE=api)
 * on a real ClickHouse (a database of its own) and the payment dev chain
 * (SETTLEMENT=devchain), paid by the real @x402/fetch client with the demo
 * payer's key. Rows are inserted by hand through the tables' insert functions
 * for known 15-minute slices; every 200 body is checked against its output
 * schema, against the spec's field list, and against numbers computed here by
 * hand. Bad input (400), windows outside coverage (404), a missing book (503)
 * and unavailable SKUs (503) are answered without a 402 challenge and without
 * any balance change.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { decodePaymentResponseHeader } from '@x402/fetch';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { RunningProcess } from '../../roles/process.js';
import { startPaidApi } from '../helpers/paid-api.js';
import type { Store } from '../../core/store/store.js';
import { ident, sql } from '../../core/store/sql.js';
import type { BookEvent, LatencyEvent } from '../../core/events/market.js';
import { insertSpreadSamples, type SpreadSample } from '../../core/store/tables/spread-samples.js';
import { insertDislocations, type DislocationRecord } from '../../core/store/tables/dislocations.js';
import { insertLatencySamples } from '../../core/store/tables/latency-samples.js';
import { insertPaperExecutions, type PaperExecution } from '../../core/store/tables/paper-executions.js';
import { insertQuotes } from '../../core/store/tables/quotes.js';
import { insertBookSnapshots } from '../../core/store/tables/book-snapshots.js';
import type { RunningApi } from '../../api/role.js';
import type { Catalogue } from '../../api/sku/sku.js';
import { CoverageOutput } from '../../api/telemetry/coverage/handler.js';
import { SpreadCandlesOutput } from '../../api/telemetry/spread-candles/handler.js';
import { DislocationsOutput } from '../../api/telemetry/dislocations/handler.js';
import { ExecutionLatencyOutput } from '../../api/telemetry/execution-latency/handler.js';
import { ShadowCapacityOutput } from '../../api/telemetry/shadow-capacity/handler.js';
import { ImpactSimulationOutput } from '../../api/telemetry/impact-simulation/handler.js';
import { cexQuote } from '../helpers/market-fixtures.js';
import { testLogger, uniqueName } from '../helpers/config.js';
import { payingFetch as payingFetchWith } from '../helpers/x402-client.js';

const logger = testLogger();
const MIN = 60_000;
/** The slice under test: 2025-03-10 09:15-09:30 UTC. */
const T0 = Date.UTC(2025, 2, 10, 9, 15);
const ETH_LAST = Date.UTC(2025, 2, 10, 11, 0, 5);
const CBBTC_AT = Date.UTC(2025, 2, 11, 8, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const SOURCE = 'coinbase+uniswap_v3_base (simulated)';
const ZERO = '0 USDC (pre-flight rejection, no charge)';

// ------------------------------------------------------------------ rows

function sample(seq: number, tsMs: number, raw: number, net: number, depth: number, pair = 'ETH/USD'): SpreadSample {
  return {
    methodology: '2',
    sample_id: `s-${pair}-${seq}`,
    pair,
    seq,
    ts_ms: tsMs,
    buy_venue: 'uniswap_v3_base',
    sell_venue: 'coinbase',
    raw_spread_bps: raw,
    net_spread_bps: net,
    est_profit_usd: Math.max(0, net),
    capacity_usd: 1000,
    liquidity_depth_usd: depth,
    liquidity_depth_capped: false,
    quote_event_id: `q-${pair}-${seq}`,
    counterpart_event_id: `c-${pair}-${seq}`,
    source: 'simulated',
  };
}

const SAMPLES: SpreadSample[] = [
  sample(0, T0 - MIN, 100, 90, 1), // 09:14, previous slice
  sample(1, T0 + 10_000, 5, -3, 10_000),
  sample(2, T0 + 60_000, 12, 2, 20_000),
  sample(3, T0 + 120_000, -4, -11, 30_000),
  sample(4, T0 + 600_000, 7, 1, 40_000),
  sample(5, T0 + 15 * MIN + 30_000, 200, 150, 1), // 09:30:30, next slice
  sample(6, ETH_LAST, 3, -5, 5000), // 11:00:05: the 10:00 slice is inside coverage but empty
  sample(1, CBBTC_AT, 9, 1, 70_000, 'cbBTC/USD'),
];

interface Opp {
  opp: string;
  id: number;
  rev: number;
  opened: number;
  updated: number;
  status: DislocationRecord['status'];
  buy: string;
  sell: string;
  buyPrice: number;
  sellPrice: number;
  raw: number;
  net: number;
  profit: number;
  depth: number;
  cap: number;
  peakCap: number;
  peakProfit: number;
  capMs: number;
}

function disloc(o: Opp): DislocationRecord {
  return {
    // The legs the revision was evaluated on: the CEX quote 100 ms before it, the DEX block a second before.
    cex_event_id: `cex-${o.opp}-${o.rev}`,
    cex_event_time_ms: o.updated - 100,
    dex_event_id: `dex-${o.opp}-${o.rev}`,
    dex_event_time_ms: o.updated - 1000,
    dex_block_number: 28_000_000 + o.rev,
    cex_fee_bps: 10,
    dex_fee_bps: 5,
    slippage_bps: 15.034,
    methodology: '2',
    event_id: `${o.opp}:${o.rev}`,
    opportunity_id: o.opp,
    revision: o.rev,
    pair: 'ETH/USD',
    buy_venue: o.buy,
    sell_venue: o.sell,
    buy_price: o.buyPrice,
    sell_price: o.sellPrice,
    raw_spread_bps: o.raw,
    net_spread_bps: o.net,
    est_profit_usd: o.profit,
    capacity_usd: o.cap,
    liquidity_depth_usd: o.depth,
    status: o.status,
    opened_at_ms: o.opened,
    updated_at_ms: o.updated,
    duration_ms: o.updated - o.opened,
    source: 'simulated',
    id: o.id,
    trigger_event_id: `trigger-${o.opp}-${o.rev}`,
    net_size_usd: 1000,
    profit_size_usd: 10_000,
    fees_bps: 10,
    gas_usd: 0.5,
    peak_capacity_usd: o.peakCap,
    peak_capacity_capped: false,
    peak_profit_usd: o.peakProfit,
    peak_raw_spread_bps: o.raw,
    peak_net_spread_bps: o.net,
    peak_size_usd: 10_000,
    capacity_capped: false,
    liquidity_depth_capped: false,
    capacity_usd_ms: o.capMs,
    closed_at_ms: o.status === 'OPPORTUNITY' ? null : o.updated,
  };
}

const A = {
  opp: 'dis_aaaaaaaaaaaaaaaa',
  id: 1001,
  opened: T0 + 60_000,
  buy: 'uniswap_v3_base',
  sell: 'coinbase',
  buyPrice: 2000,
  sellPrice: 2010,
  depth: 50_000,
};
const B = {
  opp: 'dis_bbbbbbbbbbbbbbbb',
  id: 1002,
  opened: T0 + 600_000,
  buy: 'coinbase',
  sell: 'uniswap_v3_base',
  buyPrice: 2001,
  sellPrice: 2003,
  depth: 20_000,
};
const C = {
  opp: 'dis_cccccccccccccccc',
  id: 1003,
  opened: T0 - 2 * MIN,
  buy: 'coinbase',
  sell: 'uniswap_v3_base',
  buyPrice: 2001,
  sellPrice: 2002,
  depth: 10_000,
};
const DISLOCATIONS: DislocationRecord[] = [
  disloc({
    ...A,
    rev: 0,
    updated: A.opened,
    status: 'OPPORTUNITY',
    raw: 50,
    net: 35,
    profit: 24.47,
    cap: 26_463.5,
    peakCap: 26_463.5,
    peakProfit: 24.47,
    capMs: 0,
  }),
  disloc({
    ...A,
    rev: 1,
    updated: A.opened + 10_000,
    status: 'CLOSED',
    raw: 50,
    net: 35,
    profit: 24.47,
    cap: 26_463.5,
    peakCap: 26_463.5,
    peakProfit: 24.47,
    capMs: 26_463.5 * 10_000,
  }),
  disloc({
    ...B,
    rev: 0,
    updated: B.opened,
    status: 'OPPORTUNITY',
    raw: 9.99,
    net: 1.5,
    profit: 3,
    cap: 5000,
    peakCap: 5000,
    peakProfit: 3,
    capMs: 0,
  }),
  disloc({
    ...C,
    rev: 0,
    updated: C.opened,
    status: 'EXPIRED',
    raw: 5,
    net: -1,
    profit: 0,
    cap: 0,
    peakCap: 0,
    peakProfit: 0,
    capMs: 0,
  }),
];

function execution(o: typeof A, decided: number, filled: boolean, size: number, profit: number): PaperExecution {
  return {
    opportunity_id: o.opp,
    id: o.id,
    revision: 0,
    pair: 'ETH/USD',
    buy_venue: o.buy,
    sell_venue: o.sell,
    decided_at_ms: decided,
    size_usd: size,
    quoted_buy_price: o.buyPrice,
    quoted_sell_price: o.sellPrice,
    quoted_net_bps: 10,
    buy_latency_ms: 100,
    sell_latency_ms: 2050,
    buy_arrival_ms: decided + 100,
    sell_arrival_ms: decided + 2050,
    buy_quote_event_id: 'bq',
    sell_quote_event_id: 'sq',
    fill_buy_price: o.buyPrice,
    fill_sell_price: o.sellPrice,
    realised_raw_bps: 5,
    realised_net_bps: filled ? 2 : -2,
    realised_profit_usd: profit,
    outcome: filled ? 'filled' : 'missed',
    filled: filled ? 1 : 0,
    source: 'simulated',
  };
}
const EXECUTIONS = [execution(A, A.opened, true, 10_000, 20), execution(B, B.opened, false, 5000, -2)];

let latencySeq = 0;
function latency(kind: 'cex_rest' | 'dex_rpc', tsMs: number, rtt: number, ok = true): LatencyEvent {
  return {
    event_id: `lat-${kind}-${latencySeq++}`,
    venue: kind === 'cex_rest' ? 'coinbase' : 'uniswap_v3_base',
    venue_kind: kind === 'cex_rest' ? 'cex' : 'dex',
    kind,
    endpoint: kind === 'cex_rest' ? '/api/v3/brokerage/time' : 'eth_blockNumber',
    rtt_ms: rtt,
    ok,
    event_time_ms: tsMs,
    ingest_time_ms: tsMs + 3,
    source: 'simulated',
  };
}
const CEX_RTT = [120, 80, 100, 140, 90];
const DEX_RTT = [40, 60, 50];
const LATENCIES: LatencyEvent[] = [
  ...CEX_RTT.map((r, i) => latency('cex_rest', T0 + 1000 * (i + 1), r)),
  ...DEX_RTT.map((r, i) => latency('dex_rpc', T0 + 1000 * (i + 10), r)),
  latency('cex_rest', T0 + 20_000, 5000, false), // failed: not counted
  latency('cex_rest', T0 + 15 * MIN + 1, 999), // next slice
];

// ------------------------------------------------------------------ hand-computed reference

/** Nearest rank (ClickHouse quantileExact): sorted[floor(q x n)]. */
const rank = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(q * values.length)]!;
const mean = (values: number[]) => values.reduce((a, v) => a + v, 0) / values.length;
/** The served precision (docs/metrics.md, "Precision"), written again: decimals, and significant digits for prices. */
const dp = (v: number, places: number) => Math.round(v * 10 ** places) / 10 ** places;
const price6 = (v: number) => (Math.abs(v) >= 1e4 ? dp(v, 2) : Number(v.toPrecision(6)));

/** Standard normal CDF from a 60-term Taylor series of erf (independent of the product's approximation). */
function phi(z: number): number {
  const x = z / Math.SQRT2;
  if (Math.abs(x) > 5) return x > 0 ? 1 : 0;
  let term = x;
  let sum = x;
  for (let n = 1; n < 120; n++) {
    term *= (-x * x) / n;
    sum += term / (2 * n + 1);
  }
  return 0.5 * (1 + (2 / Math.sqrt(Math.PI)) * sum);
}

// ------------------------------------------------------------------ harness

let proc: RunningProcess;
let api: RunningApi;
let store: Store;
let catalogue: Catalogue;
let url: string;
let dataDir: string;
let database: string;
let payer: PrivateKeyAccount;
let bookAt: number;
const BOOK_BIDS: [number, number][] = [
  [1999, 1],
  [1998, 2],
  [1997, 5],
];
const BOOK_ASKS: [number, number][] = [
  [2001, 1],
  [2002, 2],
  [2004, 5],
];
const QUOTE_MIDS: [number, number][] = [
  [-60_000, 2000],
  [-30_000, 2001],
  [-10_000, 1999],
];
const HORIZON_RTT = [200, 300, 400];

const balance = async () => api.payments.settlement.devChain!.balanceOf(payer.address);

const payingFetch = () => payingFetchWith(payer, api.payments.settlement);

/** A paid call through the real x402 client: 200, settled on chain for exactly the catalogue price. */
async function paid<T>(path: string, init: RequestInit | undefined, schema: z.ZodType<T>, priceId: string): Promise<T> {
  const before = await balance();
  const { fetch: pay, sent } = payingFetch();
  const res = await pay(`${url}${path}`, init);
  const body = (await res.json()) as unknown;
  expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(200);
  expect(sent).toHaveLength(1);
  expect(decodePaymentResponseHeader(res.headers.get('payment-response')!)).toMatchObject({ success: true });
  expect(before - (await balance())).toBe(BigInt(catalogue.byId(priceId)!.priceAtomic));
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new Error(`${path}: ${JSON.stringify(parsed.error.issues)}`);
  return body as T;
}

/** A request that must be answered without a challenge and without any charge. */
async function refused(path: string, init: RequestInit | undefined, status: number): Promise<Record<string, unknown>> {
  const before = await balance();
  const plain = await fetch(`${url}${path}`, init);
  expect(plain.status, path).toBe(status);
  expect(plain.headers.get('payment-required'), path).toBeNull();
  expect(plain.headers.get('content-type'), path).toContain('application/problem+json');
  const body = (await plain.json()) as Record<string, unknown>;
  // The paying client sees no challenge either: it never signs.
  const { fetch: pay, sent } = payingFetch();
  const again = await pay(`${url}${path}`, init);
  expect(again.status, path).toBe(status);
  expect(sent, path).toHaveLength(0);
  expect(await balance(), path).toBe(before);
  return body;
}

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const keysOf = (o: object) => Object.keys(o).sort();

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gateway-routes-'));
  database = uniqueName('gateway_routes');
  ({ proc, api, url, payer } = await startPaidApi(
    dataDir,
    {
      STORE: 'clickhouse',
      CLICKHOUSE_DATABASE: database,
      CEX_EXCHANGE: 'coinbase',
      MARKET_SOURCE: 'simulated',
      SKUS_DISABLED: 'summarize',
    },
    logger,
  ));
  store = proc.ctx.store!;
  catalogue = api.catalogue;

  const now = Date.now();
  bookAt = now - 2000;
  const book: BookEvent = {
    event_id: 'book-eth-1',
    pair: 'ETH/USD',
    venue: 'coinbase',
    event_time_ms: bookAt,
    ingest_time_ms: bookAt + 5,
    source: 'simulated',
    bids: BOOK_BIDS,
    asks: BOOK_ASKS,
    sequence: 7,
  };
  const staleBook: BookEvent = {
    ...book,
    event_id: 'book-cbbtc-old',
    pair: 'cbBTC/USD',
    event_time_ms: now - 5 * MIN,
    ingest_time_ms: now - 5 * MIN + 5,
  };
  await Promise.all([
    insertSpreadSamples(store, SAMPLES),
    insertDislocations(store, DISLOCATIONS),
    insertPaperExecutions(store, EXECUTIONS),
    insertLatencySamples(store, [
      ...LATENCIES,
      ...HORIZON_RTT.map((r, i) => latency('cex_rest', now - 10 * MIN + i * 1000, r)),
    ]),
    insertBookSnapshots(store, [book, staleBook]),
    insertQuotes(
      store,
      QUOTE_MIDS.map(([dt, mid], i) =>
        cexQuote({
          event_id: `vol-quote-${i}`,
          event_time_ms: bookAt + dt,
          ingest_time_ms: bookAt + dt + 5,
          bid: mid - 1,
          ask: mid + 1,
        }),
      ),
    ),
  ]);
});

afterAll(async () => {
  try {
    if (store) await store.command(sql`DROP DATABASE IF EXISTS ${ident(database)}`);
  } finally {
    await proc?.shutdown('test done');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------ tests

describe('coverage (free)', () => {
  it("answers without payment with the stored span, pairs, totals and the catalogue's prices", async () => {
    const res = await fetch(`${url}/api/v1/crypto/coverage`);
    expect(res.status).toBe(200);
    expect(res.headers.get('payment-required')).toBeNull();
    const body = CoverageOutput.parse(await res.json());
    expect(keysOf(body)).toEqual(
      [
        'service',
        'version',
        'status',
        'updated_at',
        'earliest_timestamp',
        'latest_timestamp',
        'supported_pairs',
        'slice_interval_minutes',
        'total_dislocations',
        'total_executions',
        'total_stale_legs',
        'endpoints',
        'pricing',
        'pre_flight_protection',
        'source',
      ].sort(),
    );
    expect(body).toMatchObject({
      status: 'stale',
      earliest_timestamp: iso(T0 - MIN),
      latest_timestamp: iso(CBBTC_AT),
      supported_pairs: ['ETH/USD', 'cbBTC/USD'],
      slice_interval_minutes: 15,
      total_dislocations: 3,
      total_executions: 2,
      total_stale_legs: 0,
      source: SOURCE,
    });
    const telemetry = catalogue.skus.filter((s) => s.path.startsWith('/api/v1/crypto/'));
    expect(body.endpoints).toEqual(Object.fromEntries(telemetry.map((s) => [s.id, s.path])));
    expect(body.pricing).toMatchObject({
      coverage: 'free',
      'spread-candles': '0.015 USDC',
      dislocations: '0.045 USDC',
      'shadow-capacity': '0.15 USDC',
    });
    expect(body.pre_flight_protection).toMatch(/404/);

    const eth = CoverageOutput.parse(await (await fetch(`${url}/api/v1/crypto/coverage?pair=ETH-USD`)).json());
    expect(eth).toMatchObject({
      earliest_timestamp: iso(T0 - MIN),
      latest_timestamp: iso(ETH_LAST),
      supported_pairs: ['ETH/USD'],
      total_dislocations: 3,
    });
    const viaPost = await fetch(`${url}/api/v1/crypto/coverage`, post({ pair: 'eth/usd' }));
    expect(viaPost.status).toBe(200);
    expect(((await viaPost.json()) as { latest_timestamp: string }).latest_timestamp).toBe(iso(ETH_LAST));
  });
});

describe('paid telemetry through @x402/fetch on the dev chain', () => {
  it('spread-candles: the 09:15 candle from the four samples of the slice (GET and POST)', async () => {
    const inSlice = SAMPLES.filter((s) => s.pair === 'ETH/USD' && s.ts_ms >= T0 && s.ts_ms < T0 + 15 * MIN);
    expect(inSlice).toHaveLength(4);
    const expected = {
      pair: 'ETH/USD',
      interval: '15m',
      slice_start: iso(T0),
      slice_end: iso(T0 + 15 * MIN),
      // Closed (the pair's data runs past it by more than an hour); 4 of its 60 fifteen-second steps hold a sample.
      complete: true,
      as_of: iso(T0 + 600_000),
      coverage_pct: 6.67,
      open_raw_spread_bps: 5,
      high_raw_spread_bps: 12,
      low_raw_spread_bps: -4,
      close_raw_spread_bps: 7,
      avg_net_spread_bps: dp((-3 + 2 - 11 + 1) / 4, 2),
      max_net_spread_bps: 2,
      volume_depth_usd: (10_000 + 20_000 + 30_000 + 40_000) / 4,
      volume_depth_capped: false,
      dislocation_count: 2, // A and B opened in the slice; C opened at 09:13
      source: SOURCE,
    };
    const body = await paid(
      '/api/v1/crypto/spread-candles?pair=ETH/USD&date=2025-03-10&time=0915',
      undefined,
      SpreadCandlesOutput,
      'spread-candles',
    );
    expect(keysOf(body)).toEqual(
      [
        'pair',
        'interval',
        'slice_start',
        'slice_end',
        'complete',
        'as_of',
        'coverage_pct',
        'open_raw_spread_bps',
        'high_raw_spread_bps',
        'low_raw_spread_bps',
        'close_raw_spread_bps',
        'avg_net_spread_bps',
        'max_net_spread_bps',
        'volume_depth_usd',
        'volume_depth_capped',
        'dislocation_count',
        'source',
      ].sort(),
    );
    expect(body).toEqual(expected);
    // A time inside the slice floors to it; POST with a JSON body and the ETH-USD spelling answers the same.
    const viaPost = await paid(
      '/api/v1/crypto/spread-candles',
      post({ pair: 'ETH-USD', date: '2025-03-10', time: '0929' }),
      SpreadCandlesOutput,
      'spread-candles',
    );
    expect(viaPost).toEqual(expected);
    // 1h bucket 09:00-10:00: samples 0..4 (09:14 .. 09:25); 09:30:30 too. The interval in any case.
    const hour = await paid(
      '/api/v1/crypto/spread-candles?pair=ETH/USD&date=2025-03-10&time=0900&interval=1H',
      undefined,
      SpreadCandlesOutput,
      'spread-candles',
    );
    const h = SAMPLES.filter((s) => s.pair === 'ETH/USD' && s.ts_ms >= T0 - 15 * MIN && s.ts_ms < T0 + 45 * MIN);
    expect(hour).toMatchObject({
      interval: '1h',
      slice_start: iso(T0 - 15 * MIN),
      slice_end: iso(T0 + 45 * MIN),
      open_raw_spread_bps: 100,
      close_raw_spread_bps: 200,
      high_raw_spread_bps: 200,
      low_raw_spread_bps: -4,
      max_net_spread_bps: 150,
      dislocation_count: 3,
      complete: true,
      as_of: iso(T0 + 15 * MIN + 30_000),
      coverage_pct: 2.5, // 6 of 240 steps
    });
    expect(hour.avg_net_spread_bps).toBe(dp(mean(h.map((s) => s.net_spread_bps)), 2));
    expect(hour.volume_depth_usd).toBe(dp(mean(h.map((s) => s.liquidity_depth_usd)), 2));
    // Neither date nor time: the slice holding the newest sample of the pair (11:00).
    const newest = await paid(
      '/api/v1/crypto/spread-candles?pair=ETH/USD',
      undefined,
      SpreadCandlesOutput,
      'spread-candles',
    );
    expect(newest).toMatchObject({
      slice_start: iso(Date.UTC(2025, 2, 10, 11, 0)),
      open_raw_spread_bps: 3,
      close_raw_spread_bps: 3,
      dislocation_count: 0,
      // The newest slice: the data has not moved past it, so it is not final.
      complete: false,
      as_of: iso(ETH_LAST),
      coverage_pct: 1.67,
    });
  });

  it('dislocations: A (latest revision: CLOSED) and B, oldest first; C opened before the slice', async () => {
    // The costs and legs of each item's latest revision (disloc); the pool's fee tier from the pairs catalogue.
    const COSTS = {
      profit_size_usd: 10_000,
      cex_fee_bps: 10,
      dex_fee_bps: 5,
      fees_bps: 10,
      gas_usd: 0.5,
      slippage_bps: 15.03,
    };
    const legs = (opp: string, rev: number, updated: number) => ({
      cex: { venue: 'coinbase', event_id: `cex-${opp}-${rev}`, event_time: iso(updated - 100) },
      dex: {
        venue: 'uniswap_v3_base',
        event_id: `dex-${opp}-${rev}`,
        event_time: iso(updated - 1000),
        block_number: 28_000_000 + rev,
        pool_address: null,
        fee_tier: 500,
      },
    });
    const body = await paid(
      '/api/v1/crypto/dislocations?pair=ETH/USD&date=2025-03-10&time=0915',
      undefined,
      DislocationsOutput,
      'dislocations',
    );
    expect(keysOf(body)).toEqual(
      [
        'pair',
        'slice_start',
        'slice_end',
        'complete',
        'as_of',
        'coverage_pct',
        'count',
        'methodology',
        'stale_legs',
        'dislocations',
        'source',
      ].sort(),
    );
    expect(body).toEqual({
      pair: 'ETH/USD',
      slice_start: iso(T0),
      slice_end: iso(T0 + 15 * MIN),
      complete: true,
      as_of: iso(T0 + 600_000),
      coverage_pct: 6.67,
      count: 2,
      methodology: '2',
      stale_legs: 0,
      dislocations: [
        {
          id: 1001,
          timestamp: iso(A.opened),
          pair: 'ETH/USD',
          buy_venue: 'uniswap_v3_base',
          sell_venue: 'coinbase',
          buy_price: 2000,
          sell_price: 2010,
          raw_spread_bps: 50,
          net_spread_bps: 35,
          est_profit_usd: 24.47,
          liquidity_depth_usd: 50_000,
          status: 'CLOSED',
          duration_ms: 10_000,
          liquidity_depth_capped: false,
          capacity_usd: 26_463.5,
          capacity_capped: false,
          peak_raw_spread_bps: 50,
          peak_net_spread_bps: 35,
          peak_profit_usd: 24.47,
          peak_size_usd: 10_000,
          peak_capacity_usd: 26_463.5,
          revision_count: 2,
          updated_at: iso(A.opened + 10_000),
          costs: COSTS,
          legs: legs(A.opp, 1, A.opened + 10_000),
          methodology: '2',
        },
        {
          id: 1002,
          timestamp: iso(B.opened),
          pair: 'ETH/USD',
          buy_venue: 'coinbase',
          sell_venue: 'uniswap_v3_base',
          buy_price: 2001,
          sell_price: 2003,
          raw_spread_bps: 9.99,
          net_spread_bps: 1.5,
          est_profit_usd: 3,
          liquidity_depth_usd: 20_000,
          status: 'OPPORTUNITY',
          duration_ms: 0,
          liquidity_depth_capped: false,
          capacity_usd: 5000,
          capacity_capped: false,
          peak_raw_spread_bps: 9.99,
          peak_net_spread_bps: 1.5,
          peak_profit_usd: 3,
          peak_size_usd: 10_000,
          peak_capacity_usd: 5000,
          revision_count: 1,
          updated_at: iso(B.opened),
          costs: COSTS,
          legs: legs(B.opp, 0, B.opened),
          methodology: '2',
        },
      ],
      source: SOURCE,
    });
    for (const item of body.dislocations) {
      expect(keysOf(item)).toEqual(
        [
          ...[
            'id',
            'timestamp',
            'pair',
            'buy_venue',
            'sell_venue',
            'buy_price',
            'sell_price',
            'raw_spread_bps',
            'net_spread_bps',
            'est_profit_usd',
            'liquidity_depth_usd',
            'status',
            'duration_ms',
          ],
          ...[
            'liquidity_depth_capped',
            'capacity_usd',
            'capacity_capped',
            'peak_raw_spread_bps',
            'peak_net_spread_bps',
            'peak_profit_usd',
            'peak_size_usd',
            'peak_capacity_usd',
            'revision_count',
            'updated_at',
            'costs',
            'legs',
            'methodology',
          ],
        ].sort(),
      );
    }
    // revisions=true (any case): every revision of each opportunity beside it, oldest first.
    const withRevisions = await paid(
      '/api/v1/crypto/dislocations?pair=ETH/USD&date=2025-03-10&time=0915&revisions=TRUE',
      undefined,
      DislocationsOutput,
      'dislocations',
    );
    const [a, b] = withRevisions.dislocations;
    expect(a!.revisions!.map((r) => [r.revision, r.status, r.updated_at])).toEqual([
      [0, 'OPPORTUNITY', iso(A.opened)],
      [1, 'CLOSED', iso(A.opened + 10_000)],
    ]);
    expect(a!.revisions![0]).toMatchObject({
      raw_spread_bps: 50,
      net_spread_bps: 35,
      est_profit_usd: 24.47,
      profit_size_usd: 10_000,
      capacity_usd: 26_463.5,
      liquidity_depth_usd: 50_000,
      capacity_capped: false,
      liquidity_depth_capped: false,
    });
    expect(b!.revisions!.map((r) => r.revision)).toEqual([0]);
    expect({ ...a, revisions: undefined }).toEqual({ ...body.dislocations[0], revisions: undefined });
    // POST alias; a slice inside coverage without any spread sample (the pipeline was not running) is refused
    // before any challenge, never charged: not an empty list that would read as a quiet market.
    const empty = await refused(
      '/api/v1/crypto/dislocations',
      post({ pair: 'ETH/USD', date: '2025-03-10', time: '1000' }),
      404,
    );
    expect(empty).toMatchObject({
      code: 'no_data_in_window',
      charged: ZERO,
      slice_start: iso(Date.UTC(2025, 2, 10, 10, 0)),
    });
  });

  it('execution-latency: nearest-rank percentiles of the successful samples, per-kind means, fill rate 50 %', async () => {
    const all = [...CEX_RTT, ...DEX_RTT];
    const body = await paid(
      '/api/v1/crypto/execution-latency?date=2025-03-10&time=0915',
      undefined,
      ExecutionLatencyOutput,
      'execution-latency',
    );
    expect(keysOf(body)).toEqual(
      [
        'slice_start',
        'slice_end',
        'complete',
        'as_of',
        'coverage_pct',
        'sample_count',
        'p50_latency_ms',
        'p90_latency_ms',
        'p99_latency_ms',
        'min_latency_ms',
        'max_latency_ms',
        'avg_latency_ms',
        'failed_count',
        'failure_rate_pct',
        'fill_rate_pct',
        'venues',
        'source',
      ].sort(),
    );
    expect(keysOf(body.venues)).toEqual(['cex_rest_ms', 'dex_base_ms']);
    expect(body).toEqual({
      slice_start: iso(T0),
      slice_end: iso(T0 + 15 * MIN),
      // The successful samples all fall in the first 15-second step of the slice.
      complete: true,
      as_of: iso(T0 + 12_000),
      coverage_pct: 1.67,
      sample_count: 8,
      p50_latency_ms: rank(all, 0.5),
      p90_latency_ms: rank(all, 0.9),
      p99_latency_ms: rank(all, 0.99),
      min_latency_ms: 40,
      max_latency_ms: 140,
      avg_latency_ms: dp(mean(all), 1),
      // The failed CEX probe: out of the statistics, in the failure rate (1 of 9 probes).
      failed_count: 1,
      failure_rate_pct: 11.11,
      fill_rate_pct: 50,
      venues: { cex_rest_ms: dp(mean(CEX_RTT), 1), dex_base_ms: dp(mean(DEX_RTT), 1) },
      source: 'coinbase+base_rpc (simulated)',
    });
    expect(body.p50_latency_ms).toBe(90);

    const cex = await paid(
      '/api/v1/crypto/execution-latency',
      post({ date: '2025-03-10', time: '0915', venue: 'coinbase' }),
      ExecutionLatencyOutput,
      'execution-latency',
    );
    expect(cex).toMatchObject({
      sample_count: 5,
      p50_latency_ms: rank(CEX_RTT, 0.5),
      p90_latency_ms: rank(CEX_RTT, 0.9),
      avg_latency_ms: dp(mean(CEX_RTT), 1),
      failed_count: 1,
      failure_rate_pct: 16.67,
      fill_rate_pct: 50,
      as_of: iso(T0 + 5000),
    });
    // The venue in any case.
    const dex = await paid(
      '/api/v1/crypto/execution-latency?date=2025-03-10&time=0915&venue=BASE_DEX',
      undefined,
      ExecutionLatencyOutput,
      'execution-latency',
    );
    expect(dex).toMatchObject({
      sample_count: 3,
      failed_count: 0,
      failure_rate_pct: 0,
      p50_latency_ms: 50,
      min_latency_ms: 40,
      max_latency_ms: 60,
      venues: { cex_rest_ms: dp(mean(CEX_RTT), 1), dex_base_ms: dp(mean(DEX_RTT), 1) },
    });
  });

  it('shadow-capacity: available, captured and uncaptured volume and the capital split, by hand', async () => {
    const body = await paid(
      '/api/v1/crypto/shadow-capacity?date=2025-03-10&time=0915',
      undefined,
      ShadowCapacityOutput,
      'shadow-capacity',
    );
    const peakA = 26_463.5;
    const peakB = 5000;
    const captured = Math.min(10_000, peakA); // A filled at 10 000; B missed
    const uncapturedA = peakA - captured;
    const uncapturedB = peakB;
    const group = {
      opportunities: 2,
      actionable_opportunities: 2,
      available_volume_usd: peakA + peakB,
      captured_volume_usd: captured,
      uncaptured_volume_usd: peakA + peakB - captured,
      capture_rate_pct: dp((captured / (peakA + peakB)) * 100, 2),
      est_uncaptured_profit_usd: dp(Math.max(0, 24.47 - 20) + Math.max(0, 3 - 0), 2),
      avg_capacity_usd: dp((peakA + peakB) / 2, 2),
      max_capacity_usd: peakA,
      max_capacity_capped: false,
      time_weighted_capacity_usd: dp((peakA * 10_000 + 0) / (15 * MIN), 2),
      capital_required_usd: { cex: uncapturedA + uncapturedB, base_dex: uncapturedA + uncapturedB },
      // A buys on the DEX (USD there) and sells on the CEX (base there); B the other way round.
      capital_split_usd: {
        cex: { quote_usd: uncapturedB, base_usd: uncapturedA },
        base_dex: { quote_usd: uncapturedA, base_usd: uncapturedB },
      },
    };
    expect(body.slice_start).toBe(iso(T0));
    expect(body.pair).toBeNull();
    expect(body.source).toBe(SOURCE);
    expect(body).toMatchObject({ complete: true, as_of: iso(T0 + 600_000), coverage_pct: 6.67 });
    const {
      slice_start: _s,
      slice_end: _e,
      complete: _c,
      as_of: _a,
      coverage_pct: _cov,
      pair: _p,
      pairs,
      source: _src,
      ...total
    } = body;
    expect(total).toEqual(group);
    expect(pairs).toHaveLength(1);
    expect(pairs[0]!.pair).toBe('ETH/USD');
    expect(pairs[0]!.uncaptured_volume_usd).toBe(group.uncaptured_volume_usd);

    const onePair = await paid(
      '/api/v1/crypto/shadow-capacity',
      post({ date: '2025-03-10', time: '0915', pair: 'ETH-USD' }),
      ShadowCapacityOutput,
      'shadow-capacity',
    );
    expect(onePair).toMatchObject({ pair: 'ETH/USD', opportunities: 2, captured_volume_usd: captured });
  });

  it('impact-simulation: a paper order walked through the newest book, probabilities from the documented model', async () => {
    // Realised volatility of the three CEX mids before the book: returns over 30 s and 20 s.
    const sigma1s = Math.sqrt(((Math.log(2001 / 2000) * 1e4) ** 2 + (Math.log(1999 / 2001) * 1e4) ** 2) / (30 + 20));
    const p50 = rank(HORIZON_RTT, 0.5); // 300 ms
    /** Bounds of Phi(d / sigma_h) over the book ages the request could have seen, for a sum of `terms` served values. */
    const bounds = (distance: number, tSend: number, tRecv: number, terms = 1): [number, number] => {
      const at = (ageMs: number) => phi(distance / (sigma1s * Math.sqrt((ageMs + p50) / 1000)));
      // Probabilities are served to 4 decimals: half a unit of the last one either way, per value summed.
      const rounding = 5e-5 * terms;
      return [at(tRecv - bookAt) - 1e-6 - rounding, at(tSend - bookAt) + 1e-6 + rounding];
    };
    /** The served probability lies within the bounds; a failure names the value, the bounds and the book ages. */
    const within = (label: string, served: number, [lo, hi]: [number, number], c: { tSend: number; tRecv: number }) => {
      const why = `${label}: served ${served}, bounds [${lo}, ${hi}] for book ages ${c.tSend - bookAt}..${c.tRecv - bookAt} ms (sigma_1s ${sigma1s}, p50 rtt ${p50} ms)`;
      expect(served, why).toBeGreaterThanOrEqual(lo);
      expect(served, why).toBeLessThanOrEqual(hi);
    };
    const call = async (body: Record<string, unknown>) => {
      const tSend = Date.now();
      const out = await paid(
        '/api/v1/crypto/impact-simulation',
        post(body),
        ImpactSimulationOutput,
        'impact-simulation',
      );
      return { out, tSend, tRecv: Date.now() };
    };

    // BUY 6 ETH: 1 @ 2001, 2 @ 2002, 3 @ 2004. `BUY`, the response's own spelling, is accepted.
    const buy = await call({ pair: 'ETH-USD', side: 'BUY', size_base: 6 });
    expect(keysOf(buy.out)).toEqual(
      [
        'pair',
        'side',
        'requested_size_base',
        'requested_size_usd',
        'mid_price',
        'best_bid',
        'best_ask',
        'spread_bps',
        'expected_fill_price',
        'slippage_bps',
        'fillable_size_base',
        'fillable_size_usd',
        'fill_ratio',
        'full_fill_probability',
        'partial_fill_probability',
        'fill_model',
        'fill_model_samples',
        'fill_horizon_ms',
        'fill_model_history_from',
        'fill_model_history_to',
        'executable',
        'levels_consumed',
        'opposite_depth_usd',
        'source',
        'charged',
      ].sort(),
    );
    const vwap = (2001 * 1 + 2002 * 2 + 2004 * 3) / 6;
    expect(buy.out).toMatchObject({
      pair: 'ETH/USD',
      side: 'BUY',
      requested_size_base: 6,
      requested_size_usd: 12_000,
      mid_price: 2000,
      best_bid: 1999,
      best_ask: 2001,
      fillable_size_base: 6,
      fill_ratio: 1,
      executable: true,
      levels_consumed: 3,
      charged: '0.075 USDC',
    });
    expect(buy.out.spread_bps).toBe(10);
    expect(buy.out.expected_fill_price).toBe(price6(vwap));
    expect(buy.out.slippage_bps).toBe(dp(((vwap - 2000) / 2000) * 1e4, 4));
    expect(buy.out.fillable_size_usd).toBe(2001 + 4004 + 6012);
    expect(buy.out.opposite_depth_usd).toBe(2001 * 1 + 2002 * 2 + 2004 * 5);
    for (const p of [buy.out.full_fill_probability, buy.out.partial_fill_probability]) expect(p).toBe(dp(p, 4));
    expect(buy.out.source).toMatch(/^coinbase \(simulated\), level-2 book of .+, paper order \(nothing placed\)$/);
    // One stored book: too short a history for depth survival, the adverse-sweep model answers (and says so).
    expect(buy.out).toMatchObject({ fill_model: 'adverse_sweep', fill_model_samples: 0 });
    // Tail from the worst level: 5 < 6, 2 + 5 >= 6: the sweep may reach the 2002 level, not beyond.
    const [fullLo, fullHi] = bounds((1 / 2001) * 1e4, buy.tSend, buy.tRecv);
    // full + partial: two values, each rounded (a CI run saw 0.9998 for a sum whose exact value was 0.99985 or more).
    const [anyLo, anyHi] = bounds((3 / 2001) * 1e4, buy.tSend, buy.tRecv, 2);
    within('buy full_fill_probability', buy.out.full_fill_probability, [fullLo, fullHi], buy);
    within('buy full + partial', buy.out.full_fill_probability + buy.out.partial_fill_probability, [anyLo, anyHi], buy);
    expect(buy.out.partial_fill_probability).toBeGreaterThan(0);

    // SELL 10 000 USD: 1999 + 3996 from the first two levels, 4005 USD of the 1997 level.
    const sell = await call({ pair: 'ETH/USD', side: 'sell', size_usd: 10_000 });
    const baseSold = 1 + 2 + 4005 / 1997;
    expect(sell.out).toMatchObject({
      side: 'SELL',
      requested_size_usd: 10_000,
      requested_size_base: 5,
      fill_ratio: 1,
      executable: true,
      levels_consumed: 3,
    });
    expect(sell.out.fillable_size_base).toBe(Number(baseSold.toPrecision(8)));
    expect(sell.out.fillable_size_usd).toBe(10_000);
    expect(sell.out.expected_fill_price).toBe(price6(10_000 / baseSold));
    expect(sell.out.slippage_bps).toBe(dp(((2000 - 10_000 / baseSold) / 2000) * 1e4, 4));
    expect(sell.out.opposite_depth_usd).toBe(1999 + 3996 + 9985);
    const [sLo, sHi] = bounds((1 / 1999) * 1e4, sell.tSend, sell.tRecv); // 9985 < 10 000 <= 3996 + 9985
    within('sell full_fill_probability', sell.out.full_fill_probability, [sLo, sHi], sell);

    // BUY 10 ETH: only 8 visible.
    const big = await call({ pair: 'ETH/USD', side: 'buy', size_base: 10 });
    expect(big.out).toMatchObject({
      fillable_size_base: 8,
      fill_ratio: 0.8,
      executable: false,
      levels_consumed: 3,
      full_fill_probability: 0,
    });
    const [pLo, pHi] = bounds((3 / 2001) * 1e4, big.tSend, big.tRecv);
    within('big partial_fill_probability', big.out.partial_fill_probability, [pLo, pHi], big);
  });
});

describe('refused before any challenge, never charged', () => {
  it('400 with a stable code and the offending field', async () => {
    const cases: [string, RequestInit | undefined, string, string | undefined][] = [
      ['/api/v1/crypto/spread-candles?pair=XYZ/USD', undefined, 'invalid_parameter', 'pair'],
      ['/api/v1/crypto/spread-candles?pair=ETH', undefined, 'invalid_parameter', 'pair'],
      ['/api/v1/crypto/spread-candles?date=2025-03-10', undefined, 'missing_parameter', 'pair'],
      ['/api/v1/crypto/spread-candles?pair=ETH/USD&date=2025-02-30', undefined, 'invalid_parameter', 'date'],
      ['/api/v1/crypto/spread-candles?pair=ETH/USD&date=10-03-2025', undefined, 'invalid_parameter', 'date'],
      ['/api/v1/crypto/spread-candles?pair=ETH/USD&time=2460', undefined, 'invalid_parameter', 'time'],
      ['/api/v1/crypto/spread-candles?pair=ETH/USD&time=915', undefined, 'invalid_parameter', 'time'],
      ['/api/v1/crypto/spread-candles?pair=ETH/USD&interval=2h', undefined, 'invalid_parameter', 'interval'],
      ['/api/v1/crypto/spread-candles?pair=ETH/USD&dat=2025-03-10', undefined, 'unknown_parameter', 'dat'],
      ['/api/v1/crypto/spread-candles?pair=ETH/USD&pair=BTC/USD', undefined, 'invalid_parameter', 'pair'],
      ['/api/v1/crypto/dislocations', post({ pair: 'ETH/USD', date: 20250310 }), 'invalid_parameter', 'date'],
      ['/api/v1/crypto/execution-latency?venue=binance', undefined, 'invalid_parameter', 'venue'],
      ['/api/v1/crypto/shadow-capacity?pair=DOGE-USD', undefined, 'invalid_parameter', 'pair'],
      [
        '/api/v1/crypto/impact-simulation',
        post({ pair: 'ETH/USD', side: 'hold', size_base: 1 }),
        'invalid_parameter',
        'side',
      ],
      ['/api/v1/crypto/impact-simulation', post({ pair: 'ETH/USD', side: 'buy' }), 'invalid_parameter', 'size_base'],
      [
        '/api/v1/crypto/impact-simulation',
        post({ pair: 'ETH/USD', side: 'buy', size_base: 1, size_usd: 100 }),
        'invalid_parameter',
        'size_usd',
      ],
      [
        '/api/v1/crypto/impact-simulation',
        post({ pair: 'ETH/USD', side: 'buy', size_base: -1 }),
        'invalid_parameter',
        'size_base',
      ],
      [
        '/api/v1/crypto/impact-simulation',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"pair":' },
        'invalid_json',
        undefined,
      ],
      [
        '/api/v1/crypto/impact-simulation',
        { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'pair=ETH' },
        'unsupported_media_type',
        undefined,
      ],
    ];
    for (const [path, init, code, field] of cases) {
      const status = code === 'unsupported_media_type' ? 415 : 400;
      const body = await refused(path, init, status);
      expect(body, `${path} ${String(init?.body ?? '')}`).toMatchObject({ status, code, ...(field ? { field } : {}) });
      expect(body.type).toEqual(expect.any(String));
      expect(body.detail).toEqual(expect.any(String));
    }
  });

  it('404 with a zero `charged` for windows outside coverage or without data', async () => {
    const outside: [string, RequestInit | undefined, string][] = [
      ['/api/v1/crypto/spread-candles?pair=ETH/USD&date=2025-03-09', undefined, 'date'],
      ['/api/v1/crypto/dislocations?pair=ETH/USD&date=2030-01-01', undefined, 'date'],
      ['/api/v1/crypto/dislocations?pair=cbBTC/USD&date=2025-03-10&time=0915', undefined, 'date'], // cbBTC's own coverage starts 03-11
      ['/api/v1/crypto/execution-latency', post({ date: '2024-12-31' }), 'date'],
      ['/api/v1/crypto/shadow-capacity?date=2025-03-12', undefined, 'date'],
    ];
    for (const [path, init, field] of outside) {
      const body = await refused(path, init, 404);
      expect(body, path).toMatchObject({ status: 404, code: 'outside_coverage', field, charged: ZERO });
    }
    const gap = await refused('/api/v1/crypto/spread-candles?pair=ETH/USD&date=2025-03-10&time=1000', undefined, 404);
    expect(gap).toMatchObject({
      code: 'no_data_in_window',
      charged: ZERO,
      slice_start: iso(Date.UTC(2025, 2, 10, 10, 0)),
    });
    const noLatency = await refused('/api/v1/crypto/execution-latency?date=2025-03-10&time=1000', undefined, 404);
    expect(noLatency).toMatchObject({ code: 'no_data_in_window', charged: ZERO });
    // Every windowed route: no paid answer of zeros for a slice the pipeline did not observe.
    for (const path of [
      '/api/v1/crypto/dislocations?pair=ETH/USD&date=2025-03-10&time=1000',
      '/api/v1/crypto/shadow-capacity?date=2025-03-10&time=1000',
      '/api/v1/crypto/shadow-capacity?pair=ETH/USD&date=2025-03-10&time=1000',
    ]) {
      const body = await refused(path, undefined, 404);
      expect(body, path).toMatchObject({ code: 'no_data_in_window', field: 'date', charged: ZERO });
    }
  });

  it('503 for a pair without a fresh book, and for the SKUs not served yet', async () => {
    for (const pair of ['cbBTC/USD', 'AERO/USD']) {
      const body = await refused('/api/v1/crypto/impact-simulation', post({ pair, side: 'buy', size_base: 1 }), 503);
      expect(body).toMatchObject({ code: 'book_unavailable', field: 'pair', charged: ZERO });
    }
    for (const sku of catalogue.skus.filter((s) => !s.available)) {
      const body = await refused(sku.path, post(sku.exampleInput), 503);
      expect(body, sku.id).toMatchObject({ status: 503, code: 'sku_unavailable', charged: ZERO });
    }
    expect(catalogue.skus.filter((s) => !s.available).map((s) => s.id)).toContain('summarize'); // SKUS_DISABLED below
  });

  it('a paid route without payment is challenged with the catalogue price (only after validation passed)', async () => {
    const res = await fetch(`${url}/api/v1/crypto/dislocations?pair=ETH/USD&date=2025-03-10&time=0915`);
    expect(res.status).toBe(402);
    const header = JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString('utf8')) as {
      x402Version: number;
      accepts: { amount: string; network: string; maxTimeoutSeconds: number }[];
    };
    expect(header).toMatchObject({
      x402Version: 2,
      accepts: [{ amount: '45000', network: 'eip155:8453', maxTimeoutSeconds: 300 }],
    });
  });
});
