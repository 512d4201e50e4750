/**
 * The free coverage route reads its figures at most once per COVERAGE_TTL_MS
 * and refreshes them in the background (callers get the previous figures
 * meanwhile), but never serves figures older than COVERAGE_MAX_STALE_MS: the
 * first caller after a quiet spell waits for a fresh scan instead of getting
 * what was true minutes ago. Real DuckDB store; only Date is faked.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadPairs } from '../../core/markets/pairs.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import type { Store } from '../../core/store/store.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { spreadSample } from '../helpers/spread-sample.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import type { SkuRuntime } from '../../api/sku/sku.js';
import { COVERAGE_MAX_STALE_MS, COVERAGE_TTL_MS, coverageHandler } from '../../api/telemetry/coverage/handler.js';
import { testConfig, testLogger } from '../helpers/config.js';

const logger = testLogger();
let dir: string;
let store: Store;
let runtime: SkuRuntime;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'coverage-freshness-'));
  store = await createDuckDbStore({ path: join(dir, 'db.duckdb'), logger });
  await store.migrate();
  const config = testConfig({ MARKET_SOURCE: 'simulated' });
  const pairs = loadPairs();
  runtime = { store, config, pairs, catalogue: buildCatalogue({ config, pairs }), now: () => Date.now() };
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  await store?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const latest = async () =>
  (await coverageHandler({ input: { pair: 'ETH/USD' }, runtime, priceAtomic: '0' })).latest_timestamp;

describe('coverage freshness', () => {
  it(
    'serves cached figures within the TTL, refreshes in the background after it, and waits for a scan once they are too old',
    { timeout: 120_000 },
    async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const t0 = Date.UTC(2026, 10, 24, 12, 0);
      vi.setSystemTime(t0);
      await insertSpreadSamples(store, [spreadSample(1, t0 - 1_000)]);
      expect(await latest()).toBe(new Date(t0 - 1_000).toISOString());

      // Within the TTL: the cached figures, even though newer rows exist.
      await insertSpreadSamples(store, [spreadSample(2, t0 + 1_000)]);
      vi.setSystemTime(t0 + COVERAGE_TTL_MS - 100);
      expect(await latest()).toBe(new Date(t0 - 1_000).toISOString());

      // Past the TTL but not too old: this caller gets the previous figures, the background scan brings the new ones.
      vi.setSystemTime(t0 + COVERAGE_TTL_MS + 100);
      expect(await latest()).toBe(new Date(t0 - 1_000).toISOString());
      await vi.waitFor(async () => expect(await latest()).toBe(new Date(t0 + 1_000).toISOString()), {
        timeout: 60_000,
        interval: 20,
      });

      // A quiet spell longer than COVERAGE_MAX_STALE_MS: the first caller waits for a fresh scan.
      await insertSpreadSamples(store, [spreadSample(3, t0 + 60_000)]);
      vi.setSystemTime(t0 + COVERAGE_TTL_MS + 100 + COVERAGE_MAX_STALE_MS + 1_000);
      expect(await latest()).toBe(new Date(t0 + 60_000).toISOString());
    },
  );
});
