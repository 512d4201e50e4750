/**
 * The free/paid boundary: no number the free dashboard endpoints return is
 * one a paid route sells for the same window.
 *
 * A real store (DuckDB file, and ClickHouse) holds three hours and fifty minutes of one pair's
 * spread samples, round trips of both venue kinds and dislocations. The free
 * endpoints are read over HTTP (mountDashboard); the paid answers come from
 * the paid handlers themselves on the same store, for every window they sell
 * that the free view touches (15-minute slices; 1h, 4h and 1d candles). Then
 * every number in the free answers is checked:
 *
 *   - a field the boundary does not know fails the test (a new free number
 *     must be declared here with its unit and precision);
 *   - a free number over a window [start, start + 1 h) is compared with every
 *     paid number of the same unit (bp with bp, ms with ms) of a paid answer for
 *     exactly that window, rounded to the free number's precision: equal is a
 *     giveaway.
 *
 * The spread data put the open, close, high and low of each slice far from its
 * bulk, so a median (the free statistic) is not an OHLC value (the paid one):
 * serving the candles rounded, as the dashboard once did, fails here.
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
import type { SkuRuntime } from '../../api/sku/sku.js';
import { spreadCandlesHandler } from '../../api/telemetry/spread-candles/handler.js';
import { executionLatencyHandler } from '../../api/telemetry/execution-latency/handler.js';
import { dislocationsHandler } from '../../api/telemetry/dislocations/handler.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { openDislocation } from '../helpers/dislocation-record.js';
import { TEST_PAYMENT_INFO } from '../helpers/x402-client.js';

const logger = testLogger();
const PAIR = 'ETH/USD';
const SLICE = 900_000;
const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 2, 2, 15, 0, 0);
const DELAY_S = 600; // the free view ends at 14:50
const FIRST = NOW - 4 * HOUR; // 11:00, the window's first hour (3 h before 14:50, hour-aligned)
const DATA_END = NOW - 10 * 60_000; // samples up to 14:50

/** Every number a free answer may hold: its unit and precision (structural ones: null). */
const FREE_NUMBERS: Record<string, { unit: 'bp' | 'ms'; step: number } | null> = {
  time: null, // a window's start
  delay_seconds: null, // configuration
  window_hours: null,
  refresh_seconds: null,
  // The service's own track record (settled calls, payers, USDC), not market data.
  paid_calls: null,
  distinct_payers: null,
  settled_usdc: null,
  median_raw_spread_bps: { unit: 'bp', step: 0.5 },
  median_ms: { unit: 'ms', step: 1 },
};
const unitOf = (key: string): 'bp' | 'ms' | undefined =>
  key.endsWith('_bps') ? 'bp' : key.endsWith('_ms') ? 'ms' : undefined;

const config = testConfig({
  DASHBOARD_DELAY_SECONDS: String(DELAY_S),
  DASHBOARD_WINDOW_HOURS: '3',
  DASHBOARD_RATE_LIMIT_PER_MINUTE: '1000',
  MARKET_SOURCE: 'simulated',
  CEX_EXCHANGE: 'coinbase',
});

const backends: { name: string; open(): Promise<{ store: Store; cleanup(): Promise<void> }> }[] = [
  {
    name: 'DuckDB',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'dashboard-free-tier-'));
      const store = await createDuckDbStore({ path: join(dir, 'db.duckdb'), logger });
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
    async open() {
      const { store, close } = await openClickHouseTestStore(config, 'dashboard_free', logger);
      return { store, cleanup: close };
    },
  },
];

function spreadSamples(): SpreadSample[] {
  const random = seededRandom(29);
  const out: SpreadSample[] = [];
  let seq = 0;
  for (let t = FIRST; t < DATA_END; t += 30_000) {
    const j = ((t - FIRST) % SLICE) / 30_000; // 0..29 within its slice
    // Open, close, high and low of each slice sit far from its bulk (around 2 bp).
    const raw = j === 0 ? -4.3 : j === 29 ? 8.7 : j === 7 ? 14.2 : j === 19 ? -7.6 : 2 + (random() - 0.5) * 0.6;
    seq += 1;
    out.push({
      sample_id: `s-${seq}`,
      pair: PAIR,
      methodology: '2',
      seq,
      ts_ms: t + 10_000,
      buy_venue: 'coinbase',
      sell_venue: 'uniswap_v3_base',
      raw_spread_bps: raw,
      net_spread_bps: raw - 9.8,
      est_profit_usd: 1,
      capacity_usd: 1000,
      liquidity_depth_usd: 50_000,
      liquidity_depth_capped: false,
      quote_event_id: `q-${seq}`,
      counterpart_event_id: `c-${seq}`,
      source: 'simulated',
    });
  }
  return out;
}

const dislocation = (id: string, openedMs: number, net: number) => openDislocation(id, openedMs, net, PAIR);

/** The data, the dashboard over HTTP and the paid handlers' runtime on one store. */
async function serve(store: Store): Promise<{ http: HttpServer; runtime: SkuRuntime }> {
  await store.migrate();
  await insertSpreadSamples(store, spreadSamples());
  const random = seededRandom(402);
  const latency = [];
  for (let t = FIRST; t < DATA_END; t += 60_000) {
    for (const kind of ['cex_rest', 'dex_rpc'] as const) {
      latency.push({
        event_id: `lat-${kind}-${t}`,
        venue: kind === 'cex_rest' ? 'coinbase' : 'base_rpc',
        venue_kind: kind === 'cex_rest' ? ('cex' as const) : ('dex' as const),
        kind,
        endpoint: kind === 'cex_rest' ? '/time' : 'eth_blockNumber',
        rtt_ms: (kind === 'cex_rest' ? 20 : 90) + random() * 60,
        ok: true,
        event_time_ms: t + 5_000,
        ingest_time_ms: t + 5_000,
        source: 'simulated' as const,
      });
    }
  }
  await insertLatencySamples(store, latency);
  await insertDislocations(store, [
    dislocation('opp-1', FIRST + 17 * 60_000 + 12_345, 3.14159),
    dislocation('opp-2', FIRST + 75 * 60_000 + 41_000, 11.2),
    dislocation('opp-3', FIRST + 140 * 60_000 + 7_000, -1.5),
    dislocation('opp-fresh', NOW - 20 * 60_000, 30), // within the hour: not on the free tape
  ]);

  const pairs = loadPairs();
  const catalogue = buildCatalogue({ config, pairs });
  const runtime: SkuRuntime = { store, config, pairs, catalogue, now: () => NOW };
  const health = new HealthRegistry({ version: 'test', role: 'api' });
  health.register('store', async () => ({ status: 'ok' }));
  const router = new Router();
  mountDashboard(router, {
    store,
    health,
    catalogue,
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
  return { http: await listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 }), runtime };
}

interface FreeNumber {
  path: string;
  key: string;
  value: number;
  /** The window the number is about: [fromMs, fromMs + 1 h) for a point, undefined for a structural number. */
  fromMs?: number;
}

/** Every number in a free answer, with its field name and, for points (objects with `time`), their hour. */
function freeNumbers(value: unknown, path = '$', hourMs?: number): FreeNumber[] {
  if (typeof value === 'number') return [{ path, key: path.split('.').pop()!, value, fromMs: hourMs }];
  if (Array.isArray(value)) return value.flatMap((v, i) => freeNumbers(v, `${path}[${i}]`, hourMs));
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const hour = typeof o.time === 'number' ? o.time * 1000 : hourMs;
    return Object.entries(o).flatMap(([k, v]) => freeNumbers(v, `${path}.${k}`, hour));
  }
  return [];
}

/** Every number of a paid answer with a unit (fields ending `_bps` or `_ms`), by unit. */
function paidNumbers(value: unknown, unit: 'bp' | 'ms', key = ''): number[] {
  if (typeof value === 'number') return unitOf(key) === unit ? [value] : [];
  if (Array.isArray(value)) return value.flatMap((v) => paidNumbers(v, unit, key));
  if (value && typeof value === 'object')
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => paidNumbers(v, unit, k));
  return [];
}

/** Every paid answer for a window the free view touches, by `${fromMs}-${toMs}`. */
async function paidAnswers(runtime: SkuRuntime): Promise<Map<string, unknown[]>> {
  const call = <I>(input: I) => ({ input, runtime, priceAtomic: '0' });
  const byWindow = new Map<string, unknown[]>();
  const add = (fromMs: number, toMs: number, answer: unknown) => {
    const key = `${fromMs}-${toMs}`;
    byWindow.set(key, [...(byWindow.get(key) ?? []), answer]);
  };
  for (let from = FIRST; from < NOW; from += SLICE) {
    const win = { fromMs: from, toMs: from + SLICE };
    add(from, from + SLICE, await spreadCandlesHandler(call({ pair: PAIR, interval: '15m' as const }), win));
    add(from, from + SLICE, await dislocationsHandler(call({ pair: PAIR, revisions: false }), win));
    for (const venue of [undefined, 'coinbase', 'base_dex'])
      add(from, from + SLICE, await executionLatencyHandler(call({ venue }), win));
  }
  for (const [interval, size] of [
    ['1h', HOUR],
    ['4h', 4 * HOUR],
    ['1d', 24 * HOUR],
  ] as const) {
    for (let from = Math.floor(FIRST / size) * size; from < NOW; from += size) {
      const win = { fromMs: from, toMs: from + size };
      add(from, from + size, await spreadCandlesHandler(call({ pair: PAIR, interval }), win));
    }
  }
  return byWindow;
}

describe.each(backends)('the free tier previews and does not replace the paid routes ($name)', (backend) => {
  let http: HttpServer;
  let runtime: SkuRuntime;
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const opened = await backend.open();
    cleanup = opened.cleanup;
    ({ http, runtime } = await serve(opened.store));
  }, 120_000);

  afterAll(async () => {
    await http?.close();
    await cleanup?.();
  }, 60_000);

  it('no free number is a number a paid route sells for the same window', async () => {
    const market = await (await fetch(`${http.url}/dashboard/api/market?pair=${encodeURIComponent(PAIR)}`)).json();
    const overview = await (await fetch(`${http.url}/dashboard/api/overview`)).json();
    const free = [...freeNumbers(market, '$market'), ...freeNumbers(overview, '$overview')];
    const paid = await paidAnswers(runtime);

    // The free view has something in each panel, so the comparison below is not vacuous.
    const m = market as {
      spread: { points: unknown[] };
      latency: { cex_rest: unknown[]; dex_rpc: unknown[] };
      tape: { items: { time: string }[] };
    };
    expect(m.spread.points).toHaveLength(4); // 11:00, 12:00, 13:00 closed; 14:00 open
    expect(m.latency.cex_rest).toHaveLength(3); // closed hours only
    expect(m.latency.dex_rpc).toHaveLength(3);
    expect(m.tape.items.map((i) => i.time)).toEqual([
      new Date(FIRST + 140 * 60_000).toISOString(),
      new Date(FIRST + 75 * 60_000).toISOString(),
      new Date(FIRST + 17 * 60_000).toISOString(),
    ]);

    const unknown = free.filter((n) => !(n.key in FREE_NUMBERS)).map((n) => n.path);
    expect(unknown, 'free numbers the boundary does not know').toEqual([]);

    const giveaways: string[] = [];
    let compared = 0;
    for (const n of free) {
      const rule = FREE_NUMBERS[n.key];
      if (!rule) continue;
      expect(n.fromMs, `${n.path} has a window`).toBeTypeOf('number');
      // The free numbers are hourly: the paid answers for that hour (the 1h candle).
      for (const answer of paid.get(`${n.fromMs}-${n.fromMs! + HOUR}`) ?? []) {
        for (const p of paidNumbers(answer, rule.unit)) {
          compared += 1;
          if (Math.round(p / rule.step) * rule.step === n.value)
            giveaways.push(`${n.path} = ${n.value} is a paid ${rule.unit} number (${p}) of the same window`);
        }
      }
    }
    expect(giveaways).toEqual([]);
    expect(compared).toBeGreaterThan(0);
  }, 120_000);

  it('what the old preview served (the paid candles rounded to 0.1 bp) fails the same comparison', async () => {
    // The check above must be able to fail: the 15-minute candles' OHLC at 0.1 bp, compared the same way, are
    // all giveaways.
    const paid = await paidAnswers(runtime);
    let caught = 0;
    for (let from = FIRST; from < FIRST + HOUR; from += SLICE) {
      const [candle] = paid.get(`${from}-${from + SLICE}`) as { open_raw_spread_bps: number }[];
      const oldFree = Math.round(candle!.open_raw_spread_bps * 10) / 10;
      const sold = paid.get(`${from}-${from + SLICE}`)!.flatMap((a) => paidNumbers(a, 'bp'));
      if (sold.some((p) => Math.round(p * 10) / 10 === oldFree)) caught += 1;
    }
    expect(caught).toBe(4);
  }, 120_000);

  it('the tape is an hour late and holds no number: minute, direction, band', async () => {
    const market = (await (
      await fetch(`${http.url}/dashboard/api/market?pair=${encodeURIComponent(PAIR)}`)
    ).json()) as { tape: { delay_seconds: number; items: Record<string, unknown>[] } };
    expect(market.tape.delay_seconds).toBe(3600);
    for (const item of market.tape.items) {
      expect(Object.keys(item).sort()).toEqual(['direction', 'net_spread_band_bps', 'pair', 'time']);
      expect(Date.parse(item.time as string)).toBeLessThanOrEqual(NOW - HOUR);
    }
    expect(market.tape.items.map((i) => i.net_spread_band_bps)).toEqual(['<0', '10-25', '0-5']);
  });
});
