/**
 * The shared live inputs of impact-simulation (api/telemetry/impact-inputs.ts)
 * on a real store (DuckDB): concurrent requests share one read, a newer book
 * is seen once the 250 ms bound has passed and not before, a shared book that
 * became too old is read again rather than refused, the volatility is read
 * once per book, and the round-trip median follows the same bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BookEvent, LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import { createDuckDbStore } from '../../core/store/duckdb-store.js';
import type { Store } from '../../core/store/store.js';
import { insertBookSnapshots } from '../../core/store/tables/book-snapshots.js';
import { insertLatencySamples } from '../../core/store/tables/latency-samples.js';
import { insertQuotes } from '../../core/store/tables/quotes.js';
import {
  IMPACT_INPUTS_MAX_AGE_MS,
  sharedLatestBook,
  sharedMedianRoundTrip,
  sharedVolatility,
} from '../../api/telemetry/impact-inputs.js';
import { testLogger } from '../helpers/config.js';
import { cexQuote } from '../helpers/market-fixtures.js';

const T0 = Date.UTC(2025, 4, 1, 12);
const MAX_AGE = 30_000;
let store: Store;
let queries = 0;

const book = (id: string, t: number, bid: number): BookEvent => ({
  event_id: `book-${id}-0000`,
  pair: 'ETH/USD',
  venue: 'coinbase',
  event_time_ms: t,
  ingest_time_ms: t + 5,
  source: 'simulated',
  sequence: null,
  bids: [[bid, 1]],
  asks: [[bid + 1, 1]],
});

const rtt = (i: number, t: number, ms: number): LatencyEvent => ({
  event_id: `rtt-${i}-00000`,
  venue: 'coinbase',
  venue_kind: 'cex',
  kind: 'cex_rest',
  endpoint: '/time',
  rtt_ms: ms,
  ok: true,
  event_time_ms: t,
  ingest_time_ms: t + 1,
  source: 'simulated',
});

beforeAll(async () => {
  store = await createDuckDbStore({ path: ':memory:', logger: testLogger() });
  await store.migrate();
  const quotes: QuoteEvent[] = [0, 1, 2, 3].map((i) =>
    cexQuote({ event_id: `q-${i}-000000`, event_time_ms: T0 - 40_000 + i * 10_000, bid: 2000 + i, ask: 2001 + i }),
  );
  await insertQuotes(store, quotes);
  await insertBookSnapshots(store, [book('a', T0 - 1000, 2000)]);
  await insertLatencySamples(store, [rtt(1, T0 - 60_000, 100), rtt(2, T0 - 50_000, 300), rtt(3, T0 - 40_000, 200)]);
  const query = store.query.bind(store);
  store.query = ((...args: Parameters<Store['query']>) => {
    queries += 1;
    return query(...args);
  }) as Store['query'];
});

afterAll(async () => {
  await store?.close();
});

describe('impact-simulation inputs shared for a bounded time', () => {
  it('the newest book: one read for concurrent requests, the newer book only after the bound', async () => {
    const q0 = queries;
    const books = await Promise.all(Array.from({ length: 20 }, () => sharedLatestBook(store, 'ETH/USD', T0, MAX_AGE)));
    expect(queries - q0).toBe(1);
    expect(new Set(books.map((b) => b?.event_id))).toEqual(new Set(['book-a-0000']));

    await insertBookSnapshots(store, [book('b', T0 + 50, 2010)]);
    const within = await sharedLatestBook(store, 'ETH/USD', T0 + IMPACT_INPUTS_MAX_AGE_MS - 1, MAX_AGE);
    expect(within?.event_id).toBe('book-a-0000'); // at most 250 ms behind the store
    const after = await sharedLatestBook(store, 'ETH/USD', T0 + IMPACT_INPUTS_MAX_AGE_MS, MAX_AGE);
    expect(after?.event_id).toBe('book-b-0000');
    expect(queries - q0).toBe(2);
  });

  it('a shared book too old for a later request is read again, not refused; no book is shared for the bound too', async () => {
    const now = T0 + 10_000;
    expect((await sharedLatestBook(store, 'ETH/USD', now, MAX_AGE))?.event_id).toBe('book-b-0000');
    const q0 = queries;
    // Within the bound, but the book's age limit is checked against the request's own clock.
    const strict = await sharedLatestBook(store, 'ETH/USD', now + 100, 10_000);
    expect(strict).toBeUndefined();
    expect(queries - q0).toBe(1);
    // A pair without any book: the absence is shared within the bound as well.
    const q1 = queries;
    expect(await sharedLatestBook(store, 'AERO/USD', now, MAX_AGE)).toBeUndefined();
    expect(await sharedLatestBook(store, 'AERO/USD', now + 100, MAX_AGE)).toBeUndefined();
    expect(queries - q1).toBe(1);
  });

  it('volatility is read once per book; the round-trip median follows the 250 ms bound', async () => {
    const a = book('a', T0 - 1000, 2000);
    const q0 = queries;
    const [v1, v2] = await Promise.all([sharedVolatility(store, a), sharedVolatility(store, a)]);
    expect(v1).toBeGreaterThan(0);
    expect(v2).toBe(v1);
    expect(await sharedVolatility(store, a)).toBe(v1);
    expect(queries - q0).toBe(1);
    await sharedVolatility(store, book('c', T0 + 2000, 2020));
    expect(queries - q0).toBe(2);

    const q1 = queries;
    expect(await sharedMedianRoundTrip(store, 'coinbase', T0)).toBe(200);
    await insertLatencySamples(store, [rtt(4, T0 - 30_000, 400), rtt(5, T0 - 20_000, 500)]);
    expect(await sharedMedianRoundTrip(store, 'coinbase', T0 + IMPACT_INPUTS_MAX_AGE_MS - 1)).toBe(200);
    expect(await sharedMedianRoundTrip(store, 'coinbase', T0 + IMPACT_INPUTS_MAX_AGE_MS)).toBe(300);
    expect(queries - q1).toBe(2);
  });
});
