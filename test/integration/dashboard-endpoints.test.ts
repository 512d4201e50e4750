/**
 * The dashboard's free data endpoints against a real store (DuckDB file) with
 * known rows: they stop DASHBOARD_DELAY_SECONDS before now, round what they
 * show (0.1 bp, $1, $1,000, $100, whole ms), leave out what only the paid
 * routes carry (venues, prices, ids, durations, net spread of candles), share
 * one snapshot between viewers, refuse an unknown pair with a 400 problem, and
 * answer 429 `rate_limited` (problem+json, Retry-After) past the per-client
 * limit.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { Router } from '@koa/router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPairs } from '../../core/markets/pairs.js';
import { HealthRegistry } from '../../core/health.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import type { Store } from '../../core/store/store.js';
import { insertSpreadSamples, type SpreadSample } from '../../core/store/tables/spread-samples.js';
import { insertLatencySamples } from '../../core/store/tables/latency-samples.js';
import { insertDislocations, type DislocationRecord } from '../../core/store/tables/dislocations.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { listen, type HttpServer } from '../../api/http-server.js';
import { problemErrors } from '../../api/middleware/problem-errors.js';
import { requestContext } from '../../api/middleware/request-context.js';
import { mountDashboard } from '../../api/dashboard/mount.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { TEST_PAYMENT_INFO } from '../helpers/x402-client.js';

const logger = testLogger();
const SLICE = 900_000;
const NOW = Date.UTC(2026, 2, 2, 15, 0, 0); // 15:00:00 UTC
const DELAY_S = 600; // the dashboard shows data up to 14:50
let dir: string;
let store: Store;
let http: HttpServer;
let limited: HttpServer;

function sample(i: number, tsMs: number, raw: number): SpreadSample {
  return {
    sample_id: `s-${i}`,
    pair: 'ETH/USD',
    seq: i,
    ts_ms: tsMs,
    buy_venue: 'coinbase',
    sell_venue: 'uniswap_v3_base',
    raw_spread_bps: raw,
    net_spread_bps: raw - 10,
    est_profit_usd: 1,
    capacity_usd: 1000,
    liquidity_depth_usd: 50_000,
    liquidity_depth_capped: false,
    quote_event_id: `q-${i}`,
    counterpart_event_id: `c-${i}`,
    source: 'simulated',
  };
}

function dislocation(id: string, openedMs: number, net: number): DislocationRecord {
  return {
    event_id: `${id}:0`,
    opportunity_id: id,
    revision: 0,
    pair: 'ETH/USD',
    buy_venue: 'uniswap_v3_base',
    sell_venue: 'coinbase',
    buy_price: 2000.12,
    sell_price: 2003.45,
    raw_spread_bps: net + 9,
    net_spread_bps: net,
    est_profit_usd: 12.64,
    capacity_usd: 25_000,
    liquidity_depth_usd: 123_456,
    liquidity_depth_capped: false,
    status: 'OPPORTUNITY',
    opened_at_ms: openedMs,
    updated_at_ms: openedMs + 1000,
    duration_ms: 1000,
    source: 'simulated',
    numeric_id: 42,
    trigger_event_id: `t-${id}`,
    net_size_usd: 25_000,
    profit_size_usd: 25_000,
    fees_bps: 5,
    gas_usd: 0.02,
    peak_capacity_usd: 25_049,
    peak_profit_usd: 13,
    capacity_capped: false,
    peak_raw_spread_bps: net + 9,
    peak_net_spread_bps: net,
    peak_size_usd: 25_000,
    peak_capacity_capped: false,
    capacity_usd_ms: 25_000_000,
    closed_at_ms: null,
  };
}

async function serve(limit: number): Promise<HttpServer> {
  const pairs = loadPairs();
  const config = testConfig({
    DASHBOARD_DELAY_SECONDS: String(DELAY_S),
    DASHBOARD_WINDOW_HOURS: '2',
    DASHBOARD_RATE_LIMIT_PER_MINUTE: String(limit),
    MARKET_SOURCE: 'simulated',
  });
  const health = new HealthRegistry({ version: 'test', role: 'api' });
  health.register('store', async () => ({ status: 'ok' }));
  const router = new Router();
  mountDashboard(router, {
    store,
    health,
    catalogue: buildCatalogue({ config, pairs }),
    pairs,
    payment: TEST_PAYMENT_INFO,
    config,
    mcpPath: '/mcp',
    now: () => NOW,
  });
  const app = new Koa();
  app.use(requestContext(logger));
  app.use(problemErrors());
  app.use(router.routes());
  return listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dashboard-endpoints-'));
  store = await createDuckDbStore({ path: join(dir, 'db.duckdb'), logger });
  await store.migrate();
  const s1 = NOW - 4 * SLICE; // 14:00
  await insertSpreadSamples(store, [
    sample(1, s1 + 1000, 4.21),
    sample(2, s1 + 60_000, 11.87),
    sample(3, s1 + 120_000, -3.04),
    sample(4, s1 + SLICE + 1000, 2.04),
    sample(5, NOW - 60_000, 99), // 14:59, inside the delay: not shown
  ]);
  await insertDislocations(store, [
    dislocation('opp-a', s1 + 5000, 3.14159),
    dislocation('opp-b', s1 + SLICE + 5000, -2.26),
    dislocation('opp-late', NOW - 30_000, 50),
  ]);
  await insertLatencySamples(
    store,
    [10, 20, 30, 40, 500].map((rtt, i) => ({
      event_id: `lat-${i}`,
      venue: 'coinbase',
      venue_kind: 'cex' as const,
      kind: 'cex_rest' as const,
      endpoint: '/time',
      rtt_ms: rtt + 0.4,
      ok: true,
      event_time_ms: s1 + 1000 * (i + 1),
      ingest_time_ms: s1 + 1000 * (i + 1),
      source: 'simulated' as const,
    })),
  );
  http = await serve(1000);
  limited = await serve(3);
});

afterAll(async () => {
  await http?.close();
  await limited?.close();
  await store?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('dashboard data endpoints', () => {
  it('market: delayed, rounded, and without what only the paid routes carry', async () => {
    const res = await fetch(`${http.url}/dashboard/api/market?pair=eth-usd`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const m = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(m.window.to).toBe(new Date(NOW - DELAY_S * 1000).toISOString());
    expect(m.candles.pair).toBe('ETH/USD');
    expect(m.candles.points).toEqual([
      { time: (NOW - 4 * SLICE) / 1000, open: 4.2, high: 11.9, low: -3, close: -3 },
      { time: (NOW - 3 * SLICE) / 1000, open: 2, high: 2, low: 2, close: 2 },
    ]);
    expect(m.tape).toHaveLength(2); // opp-late opened inside the delay
    expect(Object.keys(m.tape[0]).sort()).toEqual([
      'direction',
      'est_profit_usd',
      'liquidity_depth_usd',
      'net_spread_bps',
      'pair',
      'status',
      'time',
    ]);
    expect(m.tape[0]).toMatchObject({
      pair: 'ETH/USD',
      direction: 'DEX->CEX',
      net_spread_bps: -2.3,
      est_profit_usd: 13,
      liquidity_depth_usd: 123_000,
    });
    expect(m.tape[1]).toMatchObject({ net_spread_bps: 3.1 });
    expect(m.capacity).toEqual([
      { time: (NOW - 4 * SLICE) / 1000, available_volume_usd: 25_000, opportunities: 1 },
      { time: (NOW - 3 * SLICE) / 1000, available_volume_usd: 25_000, opportunities: 1 },
    ]);
    expect(m.latency.cex_rest).toEqual([
      { time: (NOW - 4 * SLICE) / 1000, p50_ms: 30, p90_ms: 500, p99_ms: 500, samples: 5 },
    ]);
    expect(m.latency.dex_rpc).toEqual([]);
    expect(JSON.stringify(m)).not.toMatch(/2000\.12|buy_price|coinbase|uniswap|opp-/);
  });

  it('overview: health per component, pairs and the window', async () => {
    const o = (await (await fetch(`${http.url}/dashboard/api/overview`)).json()) as Record<string, unknown>;
    expect(o).toMatchObject({
      status: 'ok',
      components: { store: { status: 'ok' } },
      delay_seconds: DELAY_S,
      window_hours: 2,
      market_source: 'simulated',
    });
    expect(o.pairs).toContain('ETH/USD');
  });

  it('an unknown pair is a 400 problem with its field', async () => {
    const res = await fetch(`${http.url}/dashboard/api/market?pair=NOPE-USD`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_parameter', field: 'pair' });
  });

  it('past the per-client limit: 429 rate_limited with Retry-After', async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await fetch(`${limited.url}/dashboard/api/overview`);
      statuses.push(last.status);
      if (last.status === 429) break;
      await last.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(last!.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await last!.json()).toMatchObject({ status: 429, code: 'rate_limited' });
  });
});
