/**
 * The analysts' views (sql/<engine>/004_analyst_views.sql) and the SQL of docs/querying-the-store.md, on both
 * engines, over the same simulated market (ETH/USD and AERO/USD, 2026-01-05 09:00-12:00 UTC, written by the
 * pipeline's own functions: test/helpers/market-history.ts):
 *  - ClickHouse (a PRIVATE server from the engines templates, merges stopped): after every row of the base tables
 *    is inserted a second time, the tables count each twice and every view still counts it once;
 *  - every view row equals what the routes' own queries (core/store/tables/*) compute for that pair and slice,
 *    field by field, on DuckDB and on ClickHouse with the duplicates;
 *  - every fenced `sql` block of the docs page runs as written on ClickHouse as the read-only analyst and on the
 *    DuckDB file opened read-only, both engines answer the same, and each answer matches the routes' queries.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPairs } from '../../core/markets/pairs.js';
import { createClickHouseStore } from '../../core/store/clickhouse-store.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { readRows } from '../../core/store/duckdb-values.js';
import { ident, sql, type SqlDialect } from '../../core/store/sql.js';
import type { Row, Store } from '../../core/store/store.js';
import { revisionsInSlice } from '../../core/store/tables/dislocation-revisions.js';
import { dislocationsInSlice, opportunitiesInSlice } from '../../core/store/tables/dislocations.js';
import { DEX_VENUE_FILTER, executionLatency } from '../../core/store/tables/latency-samples.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { shadowCapacity } from '../../core/store/tables/shadow-capacity.js';
import { spreadCandles } from '../../core/store/tables/spread-samples.js';
import { testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { seedMarketHistory } from '../helpers/market-history.js';
import { startPrivateClickHouse, type PrivateClickHouse } from '../helpers/private-clickhouse.js';

const config = testConfig();
const all = loadPairs(config.PAIRS_FILE);
const PAIRS = ['AERO/USD', 'ETH/USD'];
const pairs = { ...all, pairs: all.pairs.filter((p) => PAIRS.includes(p.pair)) };
const FROM = Date.UTC(2026, 0, 5, 9);
const TO = Date.UTC(2026, 0, 5, 12);
const SLICE = 900_000;
const HOUR = 3_600_000;
const PLAN = { seed: 30, tickMs: 5_000, startMs: FROM, endMs: TO };
const ANALYST_PASSWORD = 'analyst-views-test';
const BASE_TABLES = ['spread_samples', 'dislocations', 'latency_samples', 'paper_executions'] as const;
const VIEWS = [
  'spread_candles_15m',
  'dislocation_opportunities',
  'dislocation_revisions',
  'execution_latency_15m',
  'shadow_capacity_15m',
] as const;
const DOC = fileURLToPath(new URL('../../docs/querying-the-store.md', import.meta.url));

/** The page's fenced sql blocks with the name of the `<!-- example: name -->` marker before each (undefined: none). */
function docExamples(): { name: string | undefined; text: string }[] {
  const doc = readFileSync(DOC, 'utf8');
  return [...doc.matchAll(/(?:<!-- example: ([a-z0-9-]+) -->\n)?```sql\n([\s\S]*?)```/g)].map((m) => ({
    name: m[1],
    text: m[2]!.trim().replace(/;$/, ''),
  }));
}

/** A value as both engines give it: ClickHouse's 64-bit integers are strings, DuckDB's may be bigints; NaN is null. */
function norm(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(v)) return Number(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  return v ?? null;
}
/** Equal, numbers to 1e-9 relative: both engines sum the same doubles in another order. */
function close(a: unknown, b: unknown): boolean {
  const x = norm(a);
  const y = norm(b);
  if (typeof x === 'number' && typeof y === 'number')
    return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
  return x === y;
}
/** `actual` has every field of `expected` (only those, with `exact`), each close. */
function expectRow(
  actual: Record<string, unknown> | undefined,
  label: string,
  expected: Record<string, unknown>,
  exact = false,
) {
  expect(actual, label).toBeDefined();
  if (exact) expect(Object.keys(actual!).sort(), label).toEqual(Object.keys(expected).sort());
  const diffs = Object.entries(expected)
    .filter(([k, v]) => !close(actual![k], v))
    .map(([k, v]) => `${k}: ${JSON.stringify(actual![k])} != ${JSON.stringify(v)}`);
  expect(diffs, label).toEqual([]);
}
function expectRows(actual: Record<string, unknown>[], expected: Record<string, unknown>[], label: string) {
  expect(actual.length, label).toBe(expected.length);
  expected.forEach((e, i) => expectRow(actual[i], `${label} [${i}]`, e, true));
}
const normRow = (r: Row) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, norm(v)]));
const isoToDateTime = (iso: string) => iso.replace('T', ' ').replace(/\.\d{3}Z$/, '');
const round2 = (x: number) => Math.round(x * 100) / 100;
/** Half away from zero to 2 decimals, as both engines' round() (the few ties of doubles aside). */
const rounded = (x: number | null) => (x === null ? null : Math.sign(x) * round2(Math.abs(x)));
const bool01 = (b: boolean) => (b ? 1 : 0);

interface Engine {
  name: SqlDialect;
  store: Store;
  /** The view rows, normalized. */
  view(name: string): Promise<Record<string, unknown>[]>;
}

async function viewRows(store: Store, name: string): Promise<Record<string, unknown>[]> {
  return (await store.query(sql`SELECT * FROM ${ident(name)}`)).map(normRow);
}

describe('analyst views and the querying-the-store page (DuckDB and a private ClickHouse)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-analyst-views-'));
  const duckPath = join(dir, 'gateway.duckdb');
  const database = uniqueName('analyst_views');
  let ch: PrivateClickHouse;
  let chStore: Store;
  let duckStore: Store;
  let engines: Engine[];
  /** Per view, its row count before the ClickHouse duplicates (DuckDB and ClickHouse agree on it). */
  const viewCounts = new Map<string, number>();

  beforeAll(async () => {
    ch = await startPrivateClickHouse({
      CLICKHOUSE_ANALYST_PASSWORD: ANALYST_PASSWORD,
      CLICKHOUSE_ANALYST_DATABASE: database,
    });
    chStore = await createClickHouseStore({
      url: ch.url,
      database,
      username: 'default',
      password: '',
      connectTimeoutMs: 30_000,
      logger: testLogger(),
    });
    duckStore = await createDuckDbStore({ path: duckPath, logger: testLogger() });
    await Promise.all([chStore.migrate(), duckStore.migrate()]);
    await seedMarketHistory(duckStore, pairs, config, PLAN);
    await seedMarketHistory(chStore, pairs, config, PLAN);
    engines = [
      { name: 'duckdb', store: duckStore, view: (v) => viewRows(duckStore, v) },
      { name: 'clickhouse', store: chStore, view: (v) => viewRows(chStore, v) },
    ];
  }, 300_000);

  afterAll(async () => {
    await chStore?.close();
    await duckStore?.close().catch(() => undefined);
    await ch?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('the market has what the views show: candles, dislocations with revisions, fills, latency', async () => {
    const [o] = await duckStore.query(
      sql`SELECT count(*) AS n, max(revision) AS max_rev FROM dislocations WHERE revision >= 0`,
    );
    const [p] = await duckStore.query(
      sql`SELECT sum(CASE WHEN outcome = 'filled' THEN 1 ELSE 0 END) AS filled, sum(CASE WHEN outcome = 'missed' THEN 1 ELSE 0 END) AS missed FROM paper_executions`,
    );
    expect(num(o!.n)).toBeGreaterThan(20);
    expect(num(o!.max_rev)).toBeGreaterThan(1);
    expect(num(p!.filled)).toBeGreaterThan(0);
    expect(num(p!.missed)).toBeGreaterThan(0);
    for (const v of VIEWS) {
      const [d] = await duckStore.query(sql`SELECT count(*) AS n FROM ${ident(v)}`);
      const [c] = await chStore.query(sql`SELECT count() AS n FROM ${ident(v)}`);
      expect(num(d!.n), v).toBeGreaterThan(0);
      expect(num(c!.n), v).toBe(num(d!.n));
      viewCounts.set(v, num(d!.n));
    }
  });

  it('ClickHouse: with every base row stored twice (before any merge), each view still counts it once', async () => {
    await chStore.command(sql`SYSTEM STOP MERGES`);
    for (const t of BASE_TABLES) {
      const [before] = await chStore.query(sql`SELECT count() AS n FROM ${ident(t)}`);
      await chStore.command(sql`INSERT INTO ${ident(t)} SELECT * FROM ${ident(t)}`);
      const [raw] = await chStore.query(sql`SELECT count() AS n FROM ${ident(t)}`);
      const [collapsed] = await chStore.query(sql`SELECT count() AS n FROM ${ident(t)} FINAL`);
      expect(num(raw!.n), t).toBe(2 * num(before!.n));
      expect(num(collapsed!.n), t).toBe(num(before!.n));
    }
    for (const v of VIEWS) {
      const [c] = await chStore.query(sql`SELECT count() AS n FROM ${ident(v)}`);
      expect(num(c!.n), v).toBe(viewCounts.get(v));
    }
    // the samples inside the candles, too
    const [samples] = await chStore.query(sql`SELECT count() AS n FROM spread_samples FINAL`);
    const [inCandles] = await chStore.query(sql`SELECT sum(sample_count) AS n FROM spread_candles_15m`);
    expect(num(inCandles!.n)).toBe(num(samples!.n));
  });

  it('spread_candles_15m equals the 15-minute spread-candles of every pair and slice', async () => {
    for (const e of engines) {
      const rows = await e.view('spread_candles_15m');
      for (const pair of PAIRS) {
        const candles = await spreadCandles(e.store, pair, FROM, TO, '15m');
        const mine = rows
          .filter((r) => r.pair === pair)
          .sort((a, b) => Number(a.slice_start_ms) - Number(b.slice_start_ms));
        expect(mine.length, `${e.name} ${pair}`).toBe(candles.length);
        candles.forEach((c, i) => {
          const { interval: _i, slice_end: _e, slice_start, volume_depth_capped, source, ...numbers } = c;
          expectRow(mine[i], `${e.name} ${pair} ${slice_start}`, {
            ...normRow(numbers as unknown as Row),
            slice_start_ms: Date.parse(slice_start),
            slice_start: isoToDateTime(slice_start),
            volume_depth_capped: bool01(volume_depth_capped),
            source,
          });
        });
      }
    }
  });

  it('dislocation_opportunities and dislocation_revisions equal the dislocations route (items, revisions)', async () => {
    for (const e of engines) {
      const items = await e.view('dislocation_opportunities');
      const revisions = await e.view('dislocation_revisions');
      for (const pair of PAIRS) {
        let total = 0;
        for (let s = FROM; s < TO; s += SLICE) {
          const served = await dislocationsInSlice(e.store, pair, s, s + SLICE);
          const byRevision = await revisionsInSlice(e.store, pair, s, s + SLICE);
          const mine = items
            .filter((r) => r.pair === pair && r.slice_start_ms === s)
            .sort(
              (a, b) =>
                Number(a.opened_at_ms) - Number(b.opened_at_ms) ||
                String(a.opportunity_id).localeCompare(String(b.opportunity_id)),
            );
          expect(mine.length, `${e.name} ${pair} ${s}`).toBe(served.count);
          total += served.count;
          served.dislocations.forEach((d, i) => {
            expectRow(mine[i], `${e.name} ${d.opportunity_id}`, {
              id: d.id,
              opportunity_id: d.opportunity_id,
              timestamp: isoToDateTime(new Date(Math.floor(d.opened_at_ms / 1000) * 1000).toISOString()),
              opened_at_ms: d.opened_at_ms,
              buy_venue: d.buy_venue,
              sell_venue: d.sell_venue,
              buy_price: norm(d.buy_price),
              sell_price: norm(d.sell_price),
              raw_spread_bps: norm(d.raw_spread_bps),
              net_spread_bps: norm(d.net_spread_bps),
              est_profit_usd: norm(d.est_profit_usd),
              liquidity_depth_usd: norm(d.liquidity_depth_usd),
              liquidity_depth_capped: bool01(d.liquidity_depth_capped),
              capacity_usd: norm(d.capacity_usd),
              capacity_capped: bool01(d.capacity_capped),
              status: d.status,
              duration_ms: d.duration_ms,
              peak_raw_spread_bps: norm(d.peak_raw_spread_bps),
              peak_net_spread_bps: norm(d.peak_net_spread_bps),
              peak_profit_usd: norm(d.peak_profit_usd),
              peak_size_usd: norm(d.peak_size_usd),
              peak_capacity_usd: norm(d.peak_capacity_usd),
              revision_count: d.revision_count,
              updated_at_ms: d.updated_at_ms,
              source: d.source,
            });
            const path = revisions
              .filter((r) => r.opportunity_id === d.opportunity_id)
              .sort((a, b) => Number(a.revision) - Number(b.revision));
            const want = byRevision.get(d.opportunity_id)!;
            expect(path.length, `${e.name} ${d.opportunity_id}`).toBe(want.length);
            want.forEach((w, j) => {
              const { updated_at, status, liquidity_depth_capped, capacity_capped, ...numbers } = w;
              expectRow(path[j], `${e.name} ${d.opportunity_id} revision ${j}`, {
                ...normRow(numbers as unknown as Row),
                status,
                liquidity_depth_capped: bool01(liquidity_depth_capped),
                capacity_capped: bool01(capacity_capped),
                updated_at_ms: Date.parse(updated_at),
              });
            });
          });
        }
        expect(items.filter((r) => r.pair === pair).length, `${e.name} ${pair}`).toBe(total);
      }
    }
  });

  it('execution_latency_15m equals the execution-latency route of every slice', async () => {
    for (const e of engines) {
      const rows = await e.view('execution_latency_15m');
      expect(rows.length, e.name).toBe((TO - FROM) / SLICE);
      for (let s = FROM; s < TO; s += SLICE) {
        const served = await executionLatency(e.store, s, s + SLICE);
        const row = rows.find((r) => r.slice_start_ms === s);
        expectRow(row, `${e.name} ${s}`, {
          slice_start: isoToDateTime(served.slice_start),
          sample_count: served.sample_count,
          p50_latency_ms: norm(served.p50_latency_ms),
          p90_latency_ms: norm(served.p90_latency_ms),
          p99_latency_ms: norm(served.p99_latency_ms),
          min_latency_ms: norm(served.min_latency_ms),
          max_latency_ms: norm(served.max_latency_ms),
          avg_latency_ms: norm(served.avg_latency_ms),
          fill_rate_pct: norm(served.fill_rate_pct),
          cex_rest_ms: norm(served.venues.cex_rest_ms),
          dex_base_ms: norm(served.venues.dex_base_ms),
          source: served.source,
        });
      }
    }
  });

  it('shadow_capacity_15m equals the shadow-capacity route of every pair and slice', async () => {
    for (const e of engines) {
      const rows = await e.view('shadow_capacity_15m');
      let matched = 0;
      for (const pair of PAIRS) {
        for (let s = FROM; s < TO; s += SLICE) {
          const served = await shadowCapacity(e.store, s, s + SLICE, pair);
          const row = rows.find((r) => r.pair === pair && r.slice_start_ms === s);
          if (served.opportunities === 0) {
            expect(row, `${e.name} ${pair} ${s}`).toBeUndefined();
            continue;
          }
          matched += 1;
          expectRow(row, `${e.name} ${pair} ${s}`, {
            opportunities: served.opportunities,
            actionable_opportunities: served.actionable_opportunities,
            available_volume_usd: norm(served.available_volume_usd),
            captured_volume_usd: norm(served.captured_volume_usd),
            uncaptured_volume_usd: norm(served.uncaptured_volume_usd),
            capture_rate_pct: norm(served.capture_rate_pct),
            est_uncaptured_profit_usd: norm(served.est_uncaptured_profit_usd),
            avg_capacity_usd: norm(served.avg_capacity_usd),
            max_capacity_usd: norm(served.max_capacity_usd),
            max_capacity_capped: bool01(served.max_capacity_capped),
            time_weighted_capacity_usd: norm(served.time_weighted_capacity_usd),
            capital_required_cex_usd: norm(served.capital_required_usd.cex),
            capital_required_base_dex_usd: norm(served.capital_required_usd.base_dex),
            capital_split_cex_quote_usd: norm(served.capital_split_usd.cex.quote_usd),
            capital_split_cex_base_usd: norm(served.capital_split_usd.cex.base_usd),
            capital_split_base_dex_quote_usd: norm(served.capital_split_usd.base_dex.quote_usd),
            capital_split_base_dex_base_usd: norm(served.capital_split_usd.base_dex.base_usd),
            source: served.source,
          });
        }
      }
      expect(matched, e.name).toBe(rows.length);
    }
  });

  it("every sql block of docs/querying-the-store.md runs on ClickHouse as the analyst and on read-only DuckDB, with the routes' answers", async () => {
    const examples = docExamples();
    expect(examples.length).toBeGreaterThanOrEqual(8);
    const unnamed = examples.filter((x) => x.name === undefined);
    expect(
      unnamed.map((x) => x.text),
      'every sql block has an <!-- example: name --> marker',
    ).toEqual([]);
    const names = examples.map((x) => x.name!);
    expect(Object.keys(EXPECTATIONS).sort(), 'every example has its expectation here').toEqual([...names].sort());

    // DuckDB: the file opened read-only, as the page says (the gateway's store closed first: one writer per file).
    await duckStore.close();
    const instance = await DuckDBInstance.create(duckPath, { access_mode: 'READ_ONLY' });
    const duck = await instance.connect();
    try {
      await expect(duck.run('DELETE FROM spread_samples')).rejects.toThrow(/read-only/i);
      for (const { name, text } of examples) {
        const onDuck = (await readRows(duck, text)).map(normRow);
        const onCh = (await analystQuery(ch.url, database, text)).map(normRow);
        expectRows(onCh, onDuck, `${name}: ClickHouse and DuckDB answer the same`);
        expect(onDuck.length, name).toBeGreaterThan(0);
        await EXPECTATIONS[name!]!(onDuck, chStore);
      }
    } finally {
      duck.closeSync();
      instance.closeSync();
    }
  });
});

/** A query as the analyst over ClickHouse's HTTP interface (JSONEachRow rows). */
async function analystQuery(url: string, database: string, query: string): Promise<Row[]> {
  const res = await fetch(`${url}/?database=${database}&default_format=JSONEachRow`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`analyst:${ANALYST_PASSWORD}`).toString('base64')}` },
    body: query,
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse refused the analyst's query (${res.status}): ${text}\n${query}`);
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);
}

type Rows = Record<string, unknown>[];

/** What each example of the page must answer, from the routes' own queries (on the ClickHouse store, duplicates and all). */
const EXPECTATIONS: Record<string, (rows: Rows, store: Store) => Promise<void>> = {
  'candles-of-a-morning': async (rows, store) => {
    const candles = await spreadCandles(store, 'ETH/USD', FROM, TO, '15m');
    expectRows(
      rows,
      candles.map((c) => ({
        slice_start: isoToDateTime(c.slice_start),
        open_raw_spread_bps: norm(c.open_raw_spread_bps),
        high_raw_spread_bps: norm(c.high_raw_spread_bps),
        low_raw_spread_bps: norm(c.low_raw_spread_bps),
        close_raw_spread_bps: norm(c.close_raw_spread_bps),
        avg_net_bps: rounded(c.avg_net_spread_bps),
        sample_count: c.sample_count,
        dislocation_count: c.dislocation_count,
      })),
      'candles-of-a-morning',
    );
  },
  'hourly-candles': async (rows, store) => {
    const candles = await spreadCandles(store, 'ETH/USD', FROM, TO, '1h');
    expectRows(
      rows,
      candles.map((c) => ({
        hour_start_ms: Date.parse(c.slice_start),
        open_bps: norm(c.open_raw_spread_bps),
        high_bps: norm(c.high_raw_spread_bps),
        low_bps: norm(c.low_raw_spread_bps),
        close_bps: norm(c.close_raw_spread_bps),
        avg_net_bps: norm(c.avg_net_spread_bps),
        samples: c.sample_count,
        dislocations: c.dislocation_count,
      })),
      'hourly-candles',
    );
  },
  'top-dislocations': async (rows, store) => {
    const all = await opportunitiesInSlice(store, FROM, TO);
    const top = [...all].sort((a, b) => b.peak_profit_usd - a.peak_profit_usd || a.id - b.id).slice(0, 10);
    expectRows(
      rows.map((r) => ({
        id: r.id,
        pair: r.pair,
        peak_profit: r.peak_profit,
        revisions: r.revision_count,
        status: r.status,
      })),
      top.map((o) => ({
        id: o.id,
        pair: o.pair,
        peak_profit: rounded(o.peak_profit_usd),
        revisions: o.revision_count,
        status: o.status,
      })),
      'top-dislocations',
    );
  },
  'dislocations-per-hour': async (rows, store) => {
    for (const pair of PAIRS) {
      for (let h = FROM; h < TO; h += HOUR) {
        const opened = await opportunitiesInSlice(store, h, h + HOUR, pair);
        const row = rows.find((r) => r.pair === pair && r.hour_start_ms === h);
        expect(row?.opened ?? 0, `${pair} ${h}`).toBe(opened.length);
        if (row) expect(row.actionable).toBe(opened.filter((o) => o.peak_capacity_usd > 0).length);
      }
    }
  },
  'revision-path': async (rows, store) => {
    const all = await opportunitiesInSlice(store, FROM, TO);
    const most = [...all].sort(
      (a, b) => b.revision_count - a.revision_count || (a.opportunity_id < b.opportunity_id ? -1 : 1),
    )[0]!;
    const path = (await revisionsInSlice(store, most.pair, FROM, TO)).get(most.opportunity_id)!;
    expectRows(
      rows.map((r) => ({ revision: r.revision, status: r.status, net_spread_bps: r.net_spread_bps })),
      path.map((r) => ({ revision: r.revision, status: r.status, net_spread_bps: r.net_spread_bps })),
      'revision-path',
    );
    expect(rows.length).toBe(most.revision_count);
  },
  'latency-per-hour': async (rows, store) => {
    expect(rows.length).toBe((TO - FROM) / HOUR);
    for (const r of rows) {
      const h = Number(r.hour_start_ms);
      const served = await executionLatency(store, h, h + HOUR);
      expect(r.samples).toBe(served.sample_count);
      expect(close(r.avg_ms, served.avg_latency_ms), `${String(r.avg_ms)} ${served.avg_latency_ms}`).toBe(true);
    }
  },
  'latency-samples-per-venue': async (rows, store) => {
    const dex = await executionLatency(store, FROM, TO, DEX_VENUE_FILTER);
    const cex = await executionLatency(store, FROM, TO, config.CEX_EXCHANGE);
    const count = (pick: (r: Record<string, unknown>) => boolean) =>
      rows.filter(pick).reduce((n, r) => n + Number(r.samples), 0);
    expect(count((r) => r.venue === config.CEX_EXCHANGE)).toBe(cex.sample_count);
    expect(count((r) => r.kind === 'dex_rpc')).toBe(dex.sample_count);
    expect(cex.sample_count).toBeGreaterThan(0);
  },
  'shadow-capacity-per-pair': async (rows, store) => {
    expect(rows.map((r) => r.pair)).toEqual(PAIRS);
    for (const r of rows) {
      const served = await shadowCapacity(store, FROM, TO, String(r.pair));
      expectRow(
        r,
        String(r.pair),
        {
          pair: r.pair,
          opened: served.opportunities,
          actionable: served.actionable_opportunities,
          available_usd: rounded(served.available_volume_usd),
          captured_usd: rounded(served.captured_volume_usd),
          capture_pct: rounded(served.capture_rate_pct),
        },
        true,
      );
    }
  },
};
