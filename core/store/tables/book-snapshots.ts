/** Table `book_snapshots` (sql/<dialect>/002_market_data.sql): raw BookEvents, their row type and insert. */
import type { BookEvent } from '../../events/market.js';
import type { Row, Store } from '../store.js';

export interface BookSnapshotRow {
  event_id: string;
  pair: string;
  venue: string;
  ts: Date;
  ts_ms: number;
  ingest_time_ms: number;
  source: string;
  sequence: number | null;
  best_bid: number | null;
  best_ask: number | null;
  bid_prices: number[];
  bid_sizes: number[];
  ask_prices: number[];
  ask_sizes: number[];
}

export function bookSnapshotRow(e: BookEvent): BookSnapshotRow {
  return {
    event_id: e.event_id,
    pair: e.pair,
    venue: e.venue,
    ts: new Date(e.event_time_ms),
    ts_ms: e.event_time_ms,
    ingest_time_ms: e.ingest_time_ms,
    source: e.source,
    sequence: e.sequence,
    best_bid: e.bids[0]?.[0] ?? null,
    best_ask: e.asks[0]?.[0] ?? null,
    bid_prices: e.bids.map((l) => l[0]),
    bid_sizes: e.bids.map((l) => l[1]),
    ask_prices: e.asks.map((l) => l[0]),
    ask_sizes: e.asks.map((l) => l[1]),
  };
}

export async function insertBookSnapshots(store: Store, events: BookEvent[]): Promise<void> {
  if (!events.length) return;
  await store.insert('book_snapshots', events.map(bookSnapshotRow) as unknown as Row[]);
}
