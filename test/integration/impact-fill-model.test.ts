/**
 * impact-simulation's depth-survival fill model against the real stores
 * (DuckDB and ClickHouse): on a seeded book history whose 5 bps level comes
 * and goes, the served full fill probability lies strictly between 0 and 1
 * and equals the share computed from the survival ratios that the SQL of
 * docs/metrics.md (block `impact-depth-survival`) reads from the same rows;
 * a pair with too short a history is answered by the adverse-sweep model and
 * says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  impactSimulationHandler,
  impactSimulationPreflight,
  type ImpactSimulationInput,
} from '../../api/telemetry/impact-simulation/handler.js';
import { SURVIVAL_GRID_BPS } from '../../api/telemetry/depth-survival.js';
import { sharedSurvivalTable } from '../../api/telemetry/impact-inputs.js';
import type { SkuCall, SkuRuntime } from '../../api/sku/sku.js';
import type { Config } from '../../core/config.js';
import type { BookEvent } from '../../core/events/market.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { raw } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { insertBookSnapshots } from '../../core/store/tables/book-snapshots.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { openClickHouseTestStore, type ClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { docSql } from '../helpers/metrics-doc-sql.js';

const NOW = Date.UTC(2026, 2, 2, 14, 0, 0);
const HISTORY = 400;
/** The newest book is 600 ms old at NOW; no round-trip samples: 250 ms; a horizon of 850 ms, 1000 ms once rounded. */
const LAST_BOOK_AT = NOW - 600;
const SIZE = 2.7;

/** Snapshot i of ETH/USD: best ask 2000 (1.2), a level 5 bps out (2001) whose size varies and is absent at times, and a deep one. */
function ethBook(i: number): BookEvent {
  const t = LAST_BOOK_AT - (HISTORY - 1 - i) * 1000;
  const fiveBps = [0, 0.5, 1.1, 1.9, 2.4, 3.3, 0, 2.8][(i * 7 + (i >> 3)) % 8]!;
  const asks: [number, number][] = [
    [2000, 1.2],
    ...(fiveBps > 0 ? [[2001, fiveBps] as [number, number]] : []),
    [2010, 8],
  ];
  return {
    event_id: `book-eth-${String(i).padStart(4, '0')}`,
    pair: 'ETH/USD',
    venue: 'coinbase',
    event_time_ms: t,
    ingest_time_ms: t + 5,
    source: 'simulated',
    sequence: i,
    bids: [
      [1999, 3],
      [1990, 5],
    ],
    // The served book (the newest) holds 2.4 at 5 bps: a buy of 2.7 needs it (1.2 + 2.4 >= 2.7 > 1.2).
    asks:
      i === HISTORY - 1
        ? [
            [2000, 1.2],
            [2001, 2.4],
            [2010, 8],
          ]
        : asks,
  };
}

/** A short history: five snapshots of cbBTC/USD, one per second. */
const btcBook = (i: number): BookEvent => ({
  ...ethBook(HISTORY - 1),
  event_id: `book-btc-${i}`,
  pair: 'cbBTC/USD',
  event_time_ms: LAST_BOOK_AT - (4 - i) * 1000,
  ingest_time_ms: LAST_BOOK_AT - (4 - i) * 1000 + 5,
});

const engines: {
  name: 'duckdb' | 'clickhouse';
  open(config: Config): Promise<{ store: Store; close(): Promise<void> }>;
}[] = [
  {
    name: 'duckdb',
    async open() {
      const store = await createDuckDbStore({ path: ':memory:', logger: testLogger() });
      await store.migrate();
      return { store, close: () => store.close() };
    },
  },
  {
    name: 'clickhouse',
    async open(config) {
      const ch: ClickHouseTestStore = await openClickHouseTestStore(config, 'impact_fill_model');
      await ch.store.migrate();
      return ch;
    },
  },
];

describe.each(engines)('depth-survival fill model on $name', (engine) => {
  const config = testConfig();
  let store: Store;
  let close: () => Promise<void> = async () => undefined;

  let reads = 0;
  const queries = () => reads;

  beforeAll(async () => {
    ({ store, close } = await engine.open(config));
    const query = store.query.bind(store);
    store.query = ((...args: Parameters<Store['query']>) => {
      reads += 1;
      return query(...args);
    }) as Store['query'];
    await insertBookSnapshots(store, [
      ...Array.from({ length: HISTORY }, (_, i) => ethBook(i)),
      ...[0, 1, 2, 3, 4].map(btcBook),
    ]);
  }, 120_000);

  afterAll(async () => {
    await close();
  });

  const simulate = async (input: ImpactSimulationInput) => {
    const runtime = { store, config, now: () => NOW } as unknown as SkuRuntime;
    const call: SkuCall<ImpactSimulationInput> = { input, runtime, priceAtomic: '75000' };
    return impactSimulationHandler(call, await impactSimulationPreflight(call));
  };

  it('serves a probability strictly between 0 and 1, the share the documented SQL computes from the rows', async () => {
    const out = await simulate({ pair: 'ETH/USD', side: 'buy', size_base: SIZE });
    expect(out).toMatchObject({
      fill_model: 'depth_survival',
      fill_model_samples: HISTORY - 1,
      fill_horizon_ms: 1000,
      fill_model_history_from: new Date(ethBook(0).event_time_ms).toISOString(),
      fill_model_history_to: new Date(LAST_BOOK_AT).toISOString(),
      executable: true,
      levels_consumed: 2,
    });
    expect(out.full_fill_probability).toBeGreaterThan(0);
    expect(out.full_fill_probability).toBeLessThan(1);

    const rows = await store.query(
      raw(
        docSql('impact-depth-survival', engine.name, {
          pair: 'ETH/USD',
          venue: 'coinbase',
          from_ms: Date.parse(out.fill_model_history_from!),
          to_ms: Date.parse(out.fill_model_history_to!),
          horizon_ms: out.fill_horizon_ms,
        }),
      ),
    );
    const at = (g: number) => rows.filter((r) => num(r.g) === g).map((r) => num(r.q));
    const q5 = at(5);
    expect(q5).toHaveLength(HISTORY - 1);
    for (const r of rows) expect(num(r.t1) - num(r.t0)).toBe(1000);
    // d_need = 5 bps (the 2001 level), D_now(5 bps) = 1.2 + 2.4; d_last = 50 bps (2010), D_now = the whole side.
    const full = q5.filter((q) => q * 3.6 >= SIZE).length / q5.length;
    const any = at(50).filter((q) => q * 11.6 > 0).length / q5.length;
    expect(out.full_fill_probability).toBe(Number(full.toFixed(4)));
    expect(out.partial_fill_probability).toBe(Number((any - full).toFixed(4)));
    // Every grid distance is in the SQL's answer.
    expect(new Set(rows.map((r) => num(r.g)))).toEqual(new Set(SURVIVAL_GRID_BPS));
  });

  it('a history shorter than IMPACT_FILL_MIN_SAMPLES pairs: the adverse-sweep model answers, and says so', async () => {
    const out = await simulate({ pair: 'cbBTC/USD', side: 'buy', size_base: SIZE });
    expect(out.fill_model).toBe('adverse_sweep');
    expect(out.fill_model_samples).toBe(4);
    expect(out.fill_model_samples).toBeLessThan(config.IMPACT_FILL_MIN_SAMPLES);
  });

  it('the calibration is read once per IMPACT_FILL_REFRESH_MS and venue/pair, its table computed once per horizon step', async () => {
    const pair = 'SOL/USD';
    const snap = (i: number): BookEvent => ({
      ...btcBook(0),
      event_id: `book-sol-${i}`,
      pair,
      event_time_ms: NOW - 10_000 + i * 1000,
    });
    await insertBookSnapshots(store, [0, 1, 2].map(snap));
    const q0 = queries();
    const [a, b] = await Promise.all([
      sharedSurvivalTable(store, 'coinbase', pair, 900, NOW, config),
      sharedSurvivalTable(store, 'coinbase', pair, 1000, NOW + 10, config),
    ]);
    expect(queries() - q0).toBe(1); // one read for both (single flight)
    expect(b).toBe(a); // 900 and 1000 ms: the same 250 ms step, the same table
    expect(a.asks.samples).toBe(2);
    const longer = await sharedSurvivalTable(store, 'coinbase', pair, 1001, NOW + 20, config);
    expect(longer.horizon_ms).toBe(1250);
    expect(longer.asks.samples).toBe(1);
    expect(queries() - q0).toBe(1);

    // Newer snapshots: not seen within the refresh bound, seen after it.
    await insertBookSnapshots(store, [3, 4].map(snap));
    const within = NOW + config.IMPACT_FILL_REFRESH_MS - 1;
    expect((await sharedSurvivalTable(store, 'coinbase', pair, 1000, within, config)).asks.samples).toBe(2);
    const after = NOW + config.IMPACT_FILL_REFRESH_MS;
    expect((await sharedSurvivalTable(store, 'coinbase', pair, 1000, after, config)).asks.samples).toBe(4);
    expect(queries() - q0).toBe(2);
  });
});
