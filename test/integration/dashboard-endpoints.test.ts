/**
 * The dashboard's free data endpoints against a real store (DuckDB file) with
 * known rows: they stop DASHBOARD_DELAY_SECONDS before now, show hourly
 * medians (spread to 0.5 bp with the open hour marked, latency of closed hours
 * to the ms), the tape an hour late with minute, direction and net spread
 * band only, leave out what only the paid routes carry (venues, prices, ids,
 * profit, depth, capacity), take "data to" from the newest sample, serve the
 * metric definitions the page links to, count the track record (settled
 * paid calls, distinct payers, settled USDC) from the payment metrics, refuse an unknown pair with a 400
 * problem, and answer 429 `rate_limited` (problem+json, Retry-After) past the
 * per-client limit. (That no number is one a paid route sells:
 * dashboard-free-tier.test.ts.)
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
import { insertDislocations } from '../../core/store/tables/dislocations.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { listen, type HttpServer } from '../../api/http-server.js';
import { problemErrors } from '../../api/middleware/problem-errors.js';
import { requestContext } from '../../api/middleware/request-context.js';
import { mountDashboard } from '../../api/dashboard/mount.js';
import { recordSettlement, settlementTotals } from '../../api/payment/payment-metrics.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { TEST_PAYMENT_INFO } from '../helpers/x402-client.js';
import { openDislocation } from '../helpers/dislocation-record.js';

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
    methodology: '2',
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

const dislocation = (id: string, openedMs: number, net: number) => openDislocation(id, openedMs, net);

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
    dislocation('opp-old', NOW - 6 * SLICE + 30_500, 7.36), // 13:30:30, over an hour before 14:50
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
  // A closed hour (13:00-14:00) of CEX round trips in three slices: median (nearest rank) 21.7 -> 22 ms. And 12:00-
  // 13:00 with samples in one slice only (12:05-12:07): not shown, its median is that slice's, a paid number.
  await insertLatencySamples(
    store,
    [12.2, 21.7, 35.9, 5, 6, 7].map((rtt, i) => ({
      event_id: `lat-13-${i}`,
      venue: 'coinbase',
      venue_kind: 'cex' as const,
      kind: 'cex_rest' as const,
      endpoint: '/time',
      rtt_ms: rtt,
      ok: true,
      event_time_ms: i < 3 ? s1 - 3_000_000 + i * SLICE : s1 - 2 * 3_600_000 + 300_000 + i * 1000,
      ingest_time_ms: i < 3 ? s1 - 3_000_000 + i * SLICE : s1 - 2 * 3_600_000 + 300_000 + i * 1000,
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
  it('market: hourly medians, the tape an hour late, and nothing only the paid routes carry', async () => {
    const res = await fetch(`${http.url}/dashboard/api/market?pair=eth-usd`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const m = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const hour14 = (NOW - 4 * SLICE) / 1000;
    expect(m.window).toEqual({
      from: new Date(NOW - 3 * 3_600_000).toISOString(), // 12:00: hour-aligned, 2 h before 14:50
      to: new Date(NOW - DELAY_S * 1000).toISOString(),
      delay_seconds: DELAY_S,
      data_to: new Date(NOW - 3 * SLICE + 1000).toISOString(), // the newest sample shown (14:15:01), not the clock
    });
    // Samples 14:00-14:50: -3.04, 2.04, 4.21, 11.87 (the 14:59 one is inside the delay). Nearest-rank median
    // 4.21, to 0.5 bp; the hour ends after the window's end, so it is open and final at 15:00 + the delay.
    expect(m.spread).toEqual({
      pair: 'ETH/USD',
      resolution: '1h',
      points: [{ time: hour14, median_raw_spread_bps: 4, open: true }],
      next_close_at: new Date(NOW + DELAY_S * 1000).toISOString(),
    });
    // Only opp-old opened more than an hour before the window's end: minute, direction, band (7.36 bp: 5-10).
    expect(m.tape).toEqual({
      pair: 'ETH/USD',
      delay_seconds: 3600,
      items: [
        {
          time: new Date(NOW - 6 * SLICE).toISOString(),
          pair: 'ETH/USD',
          direction: 'DEX->CEX',
          net_spread_band_bps: '5-10',
        },
      ],
    });
    // Latency: the closed 13:00 hour only (14:00 is open; 12:00 has samples in one slice).
    expect(m.latency).toEqual({
      resolution: '1h',
      cex_rest: [{ time: hour14 - 3600, median_ms: 22 }],
      dex_rpc: [],
    });
    expect(m).not.toHaveProperty('capacity');
    expect(JSON.stringify(m)).not.toMatch(/2000\.12|buy_price|coinbase|uniswap|opp-|profit|depth|capacity/);
  });

  it('before any sample: no points, no "data to", and when the first hour closes', async () => {
    const res = await fetch(`${http.url}/dashboard/api/market?pair=AERO-USD`);
    const m = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(m.window.data_to).toBeNull();
    expect(m.spread.points).toEqual([]);
    expect(m.spread.next_close_at).toBe(new Date(NOW + DELAY_S * 1000).toISOString());
    expect(m.tape.items).toEqual([]);
  });

  it('serves the metric definitions the charts link to', async () => {
    const res = await fetch(`${http.url}/dashboard/docs/metrics.md`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^## 2\. Dislocations/m);
    expect(text).toMatch(/^## 3\. Spread samples and candles/m);
    expect(text).toMatch(/^## 4\. Execution latency/m);
  });

  it('overview: health per component, pairs, the window and the track record', async () => {
    // Settled payments as settle.ts records them: two payers (one in two spellings), 0.015 + 0.015 + 0.02 USDC.
    const before = await settlementTotals();
    recordSettlement('0xAbC0000000000000000000000000000000000001', '15000');
    recordSettlement('0xabc0000000000000000000000000000000000001', '15000');
    recordSettlement('0x00000000000000000000000000000000000000b2', '20000');
    const o = (await (await fetch(`${http.url}/dashboard/api/overview`)).json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(o.track_record).toMatchObject({
      scope: 'this instance, since it started',
      paid_calls: before.paidCalls + 3,
      distinct_payers: before.distinctPayers + 2,
      distinct_payers_at_least: false,
      settled_usdc: Math.round((before.settledAtomic + 50_000) / 10_000) / 100,
    });
    expect(Date.parse(o.track_record.since)).toBeLessThanOrEqual(Date.now());
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
