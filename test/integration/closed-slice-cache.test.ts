/**
 * Closed telemetry slices are answered from memory: through the real api role
 * (ROLE=api, DuckDB, the dev chain, x402 paid by the real client), a second
 * paid read of a closed slice makes no store query at all and answers the same
 * body (the other slices and candle intervals of its day too); an open slice
 * and a request without a date are computed every time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../core/store/store.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { spreadSample } from '../helpers/spread-sample.js';
import { startPaidApi, type PaidApi } from '../helpers/paid-api.js';
import { testLogger } from '../helpers/config.js';
import { payingFetch } from '../helpers/x402-client.js';

const logger = testLogger();
const CLOSED = Date.UTC(2025, 2, 10, 9, 15);
let dataDir: string;
let api: PaidApi;
let store: Store;
let queries = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'closed-slice-'));
  api = await startPaidApi(dataDir, { STORE: 'duckdb', DUCKDB_PATH: ':memory:', MARKET_SOURCE: 'simulated' }, logger);
  store = api.proc.ctx.store!;
  // This suite counts the store queries of the paid request path. A challenge also refreshes, behind it and at
  // most every 2 s, the install's example requests for the Bazaar listing (store reads of their own): off here.
  api.api.payments.core.useExampleInputs(() => undefined);
  const now = Date.now();
  await insertSpreadSamples(store, [
    spreadSample(1, CLOSED + 10_000),
    spreadSample(2, CLOSED + 60_000),
    spreadSample(3, now - 30_000),
    spreadSample(4, now - 20_000),
  ]);
  const query = store.query.bind(store);
  store.query = ((...args: Parameters<Store['query']>) => {
    queries += 1;
    return query(...args);
  }) as Store['query'];
});

afterAll(async () => {
  await api?.proc.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const paid = async (query: string) => {
  const { fetch: pay } = payingFetch(api.payer, { network: 'eip155:8453', asset: api.api.payments.settlement.asset });
  const before = queries;
  const res = await pay(`${api.url}/api/v1/crypto/spread-candles?${query}`);
  const body = await res.text();
  return { status: res.status, body, queries: queries - before };
};

describe('closed-slice cache', () => {
  it('answers a second paid read of a closed slice without any store query, with the same body', async () => {
    const first = await paid('pair=ETH/USD&date=2025-03-10&time=0915');
    expect(first.status, first.body).toBe(200);
    expect(first.queries).toBeGreaterThan(0);
    const second = await paid('pair=ETH/USD&date=2025-03-10&time=0915');
    expect(second.status).toBe(200);
    expect(second.queries).toBe(0);
    expect(second.body).toBe(first.body);
    // The same 15-minute slice written differently: the pre-flight runs, the answer comes from memory.
    const third = await paid('pair=ETH/USD&date=2025-03-10&time=0920');
    expect(third.status).toBe(200);
    expect(third.queries).toBeLessThan(first.queries);
    expect(third.body).toBe(first.body);
    // Another interval is another answer, rolled up from the day's read already made (no query of its own).
    const hour = await paid('pair=ETH/USD&date=2025-03-10&time=0915&interval=1h');
    expect(hour.status).toBe(200);
    expect(hour.body).not.toBe(first.body);
    expect(JSON.parse(hour.body)).toMatchObject({ interval: '1h', slice_start: '2025-03-10T09:00:00.000Z' });
    // A closed slice of that day without samples: the pre-flight's refusal, kept with the day (never charged).
    const empty = await paid('pair=ETH/USD&date=2025-03-10&time=1200');
    expect(empty.status).toBe(404);
    expect(JSON.parse(empty.body)).toMatchObject({ code: 'no_data_in_window' });
    expect(empty.queries).toBe(0);
  });

  it('computes the open slice and a request without a date every time', async () => {
    const d = new Date(Date.now() - 25_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    const open = `pair=ETH/USD&date=${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}&time=${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}`;
    for (const query of [open, open, 'pair=ETH/USD', 'pair=ETH/USD']) {
      const r = await paid(query);
      expect(r.status, r.body).toBe(200);
      expect(r.queries, query).toBeGreaterThan(0);
    }
  });
});
