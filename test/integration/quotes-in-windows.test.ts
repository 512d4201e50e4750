/**
 * quotesInWindows (the paper executor's read) on both stores against a
 * brute-force filter of the same quotes: windows that overlap, touch, sit
 * inside one 10-second bucket with quotes on both sides, cross bucket edges,
 * span several buckets; a re-inserted (duplicate) event comes back once.
 * DuckDB: a temp file; ClickHouse: the engines' server, a fresh database.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { QuoteEvent } from '../../core/events/market.js';
import { openClickHouseTestStore } from '../helpers/clickhouse-test-store.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import type { Store } from '../../core/store/store.js';
import { insertQuotes, quotesInWindows, type QuoteWindow } from '../../core/store/tables/quotes.js';
import { T, cexQuote, dexQuote } from '../helpers/market-fixtures.js';
import { testConfig, testLogger } from '../helpers/config.js';

const config = testConfig();
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

const stores: { name: string; open(): Promise<Store> }[] = [
  {
    name: 'duckdb',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'quote-windows-'));
      const store = await createDuckDbStore({ path: join(dir, 'q.duckdb'), logger: testLogger() });
      cleanups.push(async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      });
      return store;
    },
  },
  {
    name: 'clickhouse',
    async open() {
      const { store, close } = await openClickHouseTestStore(config, 'quote_windows');
      cleanups.push(close);
      return store;
    },
  },
];

// Two pairs, two venues each, a quote every 1.7 s (cex) and 2.3 s (dex) over 3 minutes from T (a bucket edge).
const quotes: QuoteEvent[] = [];
for (const pair of ['ETH/USD', 'cbBTC/USD']) {
  for (let t = 0; t < 180_000; t += 1700)
    quotes.push(cexQuote({ pair, event_id: `${pair}-cex-${t}`, event_time_ms: T + t }));
  for (let t = 500; t < 180_000; t += 2300)
    quotes.push(dexQuote({ pair, event_id: `${pair}-dex-${t}`, event_time_ms: T + t }));
}

const windows: QuoteWindow[] = [
  { pair: 'ETH/USD', fromMs: T + 3_000, toMs: T + 6_000 }, // inside one bucket, quotes on both sides
  { pair: 'ETH/USD', fromMs: T + 5_000, toMs: T + 12_000 }, // overlaps the first, crosses a bucket edge
  { pair: 'ETH/USD', fromMs: T + 12_000, toMs: T + 12_001 }, // touches the previous one
  { pair: 'ETH/USD', fromMs: T + 60_000, toMs: T + 95_100 }, // several buckets, starts on an edge
  { pair: 'cbBTC/USD', fromMs: T + 19_999, toMs: T + 20_001 }, // around a bucket edge
  { pair: 'cbBTC/USD', fromMs: T + 150_000, toMs: T + 150_000 }, // empty
  { pair: 'cbBTC/USD', fromMs: T + 170_000, toMs: T + 400_000 }, // past the last quote
];

function expected(): Record<string, string[]> {
  const out: Record<string, string[]> = { 'ETH/USD': [], 'cbBTC/USD': [] };
  const inside = (q: QuoteEvent) =>
    windows.some((w) => w.pair === q.pair && q.event_time_ms >= w.fromMs && q.event_time_ms < w.toMs);
  const sorted = [...quotes].sort((a, b) => a.event_time_ms - b.event_time_ms || (a.event_id < b.event_id ? -1 : 1));
  for (const q of sorted) if (inside(q)) out[q.pair]!.push(q.event_id);
  return out;
}

describe.each(stores)('quotesInWindows on $name', ({ open }) => {
  it('returns exactly the quotes inside the windows, per pair, oldest first, each event once', async () => {
    const store = await open();
    await store.migrate();
    await insertQuotes(store, quotes);
    await insertQuotes(store, quotes.slice(0, 40)); // re-inserted events: a replay not merged yet
    const got = await quotesInWindows(store, windows);
    const ids = Object.fromEntries([...got].map(([pair, list]) => [pair, list.map((q) => q.event_id)]));
    const want = expected();
    expect(want['ETH/USD']!.length).toBeGreaterThan(20);
    expect(want['cbBTC/USD']!.length).toBeGreaterThan(3);
    expect(ids).toEqual(want);
    const first = got.get('ETH/USD')![0]!;
    expect(first).toEqual(quotes.find((q) => q.event_id === first.event_id));
    expect(await quotesInWindows(store, [])).toEqual(new Map());
  });
});
