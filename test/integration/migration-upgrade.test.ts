/**
 * Upgrading a store that already holds market data: migration 003 (measured
 * depth, capped markers, peaks) applies on both engines to tables with rows
 * written before it, and those rows read back as they were: quotes without a
 * depth measurement, samples and revisions not capped. (DuckDB refuses some
 * ALTERs on a table with a primary key and rows inside one transaction: the
 * migration is written around that, this test keeps it so.)
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import { sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { num } from '../../core/store/tables/query-helpers.js';
import { quoteFromRow } from '../../core/store/tables/quotes.js';
import { testConfig, testLogger } from '../helpers/config.js';

const config = testConfig();
const logger = testLogger();
const SQL_ROOT = fileURLToPath(new URL('../../sql', import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A migrations root holding the dialect's files up to `upTo`. */
function rootUpTo(dialect: 'duckdb' | 'clickhouse', upTo: number): string {
  const root = mkdtempSync(join(tmpdir(), 'mig-root-'));
  dirs.push(root);
  cpSync(join(SQL_ROOT, dialect), join(root, dialect), {
    recursive: true,
    filter: (src) => !/\/\d{3}_/.test(src) || Number(/\/(\d{3})_/.exec(src)![1]) <= upTo,
  });
  return root;
}

const cases: {
  name: string;
  dialect: 'duckdb' | 'clickhouse';
  open(): Promise<{ store: Store; done(): Promise<void> }>;
}[] = [
  {
    name: 'DuckDB',
    dialect: 'duckdb',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'mig-db-'));
      dirs.push(dir);
      const store = await createDuckDbStore({ path: join(dir, 'old.duckdb'), logger });
      return { store, done: () => store.close() };
    },
  },
  {
    name: 'ClickHouse',
    dialect: 'clickhouse',
    async open() {
      const { store, close } = await openClickHouseTestStore(config, 'mig_upgrade', logger);
      return {
        store,
        done: close,
      };
    },
  },
];

describe.each(cases)('migration 003 on a $name store with data', ({ dialect, open }) => {
  it('applies over rows written before it, which read back unmeasured and not capped', async () => {
    const { store, done } = await open();
    try {
      expect((await store.migrate(rootUpTo(dialect, 2))).applied).toEqual([
        '001_pipeline_heartbeats.sql',
        '002_market_data.sql',
      ]);
      // Rows in the shape the previous release wrote.
      await store.insert(
        'quotes',
        Array.from({ length: 500 }, (_, i) => ({
          event_id: `old-${i}`,
          pair: 'ETH/USD',
          venue: 'coinbase',
          venue_kind: 'cex',
          ts: new Date(1_735_689_600_000 + i),
          ts_ms: 1_735_689_600_000 + i,
          ingest_time_ms: 1_735_689_600_005 + i,
          source: 'live',
          bid: 2000,
          ask: 2001,
          bid_size: 1,
          ask_size: 1,
          ladder_size_usd: [1000],
          ladder_buy_price: [2001],
          ladder_sell_price: [2000],
          fee_bps: 10,
          fee_included: 0,
          gas_usd: null,
          gas_price_gwei: null,
          sequence: i,
        })),
      );
      await store.insert('spread_samples', [
        {
          sample_id: 's-1',
          pair: 'ETH/USD',
          seq: 1,
          ts: new Date(1_735_689_600_000),
          ts_ms: 1_735_689_600_000,
          buy_venue: 'coinbase',
          sell_venue: 'uniswap_v3_base',
          raw_spread_bps: 1,
          net_spread_bps: -1,
          est_profit_usd: 0,
          capacity_usd: 0,
          liquidity_depth_usd: 100_000,
          quote_event_id: 'old-1',
          counterpart_event_id: 'x',
          source: 'live',
        },
      ]);
      expect((await store.migrate()).applied[0]).toBe('003_measured_depth_and_peaks.sql'); // then any later ones
      const [q] = await store.query(sql`SELECT * FROM quotes WHERE event_id = ${'old-7'}`);
      const quote = quoteFromRow(q!);
      expect(quote.depth).toBeUndefined();
      expect(quote.sequence).toBe(7);
      const [counts] = await store.query(sql`SELECT count(*) AS n, sum(depth_buy_capped) AS capped FROM quotes`);
      expect([num(counts!.n), num(counts!.capped)]).toEqual([500, 0]);
      const [s] = await store.query(sql`SELECT liquidity_depth_capped AS c FROM spread_samples`);
      expect(num(s!.c)).toBe(0);
      expect((await store.migrate()).applied).toEqual([]);
    } finally {
      await done();
    }
  }, 60_000);
});
