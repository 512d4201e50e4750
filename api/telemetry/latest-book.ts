/**
 * The newest level-2 snapshot of a pair, read from the store's `book_snapshots`
 * table (written by the aggregate role's raw sink from md.books.v1). The api
 * role has no bus consumer, so the store is its view of the live book: the
 * ingest publishes at most one BookEvent per pair per second, and the sink
 * writes it within its batch interval.
 */
import type { BookEvent } from '../../core/events/market.js';
import { sql } from '../../core/store/sql.js';
import type { Row, Store } from '../../core/store/store.js';
import { num } from '../../core/store/tables/query-helpers.js';

const asLevels = (prices: unknown, sizes: unknown): [number, number][] => {
  const p = Array.isArray(prices) ? prices.map(num) : [];
  const s = Array.isArray(sizes) ? sizes.map(num) : [];
  return p.map((price, i) => [price, s[i] ?? 0]);
};

const COLUMNS = sql`event_id, pair, venue, ts_ms, ingest_time_ms, source, sequence, bid_prices, bid_sizes, ask_prices, ask_sizes`;

/** Newest snapshot of `pair` with event time at or after `sinceMs` (duplicates are identical: no FINAL needed), or undefined. */
export async function latestBook(store: Store, pair: string, sinceMs: number): Promise<BookEvent | undefined> {
  const since = new Date(Math.floor(sinceMs / 1000) * 1000);
  const [row] = await store.query(sql`
    SELECT ${COLUMNS}
    FROM book_snapshots
    WHERE pair = ${pair} AND ts >= ${since} AND ts_ms >= ${sinceMs}
    ORDER BY ts_ms DESC, event_id DESC
    LIMIT 1`);
  return row ? bookOf(row) : undefined;
}

/**
 * The newest snapshot of every pair with event time at or after `sinceMs`,
 * by pair, in one query (what latestBook answers for each pair).
 */
export async function latestBooks(store: Store, sinceMs: number): Promise<Map<string, BookEvent>> {
  const since = new Date(Math.floor(sinceMs / 1000) * 1000);
  const recent = sql`ts >= ${since} AND ts_ms >= ${sinceMs}`;
  const rows = await store.query(sql`
    SELECT ${COLUMNS}
    FROM book_snapshots
    WHERE ${recent} AND (pair, ts_ms) IN (SELECT pair, max(ts_ms) FROM book_snapshots WHERE ${recent} GROUP BY pair)`);
  const out = new Map<string, BookEvent>();
  for (const row of rows) {
    const book = bookOf(row);
    const known = out.get(book.pair);
    // Two snapshots of one instant: the larger event id, as latestBook orders them.
    if (!known || book.event_id > known.event_id) out.set(book.pair, book);
  }
  return out;
}

function bookOf(row: Row): BookEvent {
  return {
    event_id: String(row.event_id),
    pair: String(row.pair),
    venue: String(row.venue),
    event_time_ms: num(row.ts_ms),
    ingest_time_ms: num(row.ingest_time_ms),
    source: String(row.source) as BookEvent['source'],
    sequence: row.sequence === null || row.sequence === undefined ? null : num(row.sequence),
    bids: asLevels(row.bid_prices, row.bid_sizes),
    asks: asLevels(row.ask_prices, row.ask_sizes),
  };
}
