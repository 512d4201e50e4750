/**
 * Reads of `book_snapshots` (sql/<dialect>/002_market_data.sql) as a history:
 * the level-2 snapshots of one venue and pair over a window, bounded in rows,
 * for the depth-survival fill model (api/telemetry/depth-survival.ts).
 */
import { sql } from '../sql.js';
import type { Store } from '../store.js';
import { num, timeRange } from './query-helpers.js';

export interface BookHistoryPoint {
  t_ms: number;
  bids: [number, number][];
  asks: [number, number][];
}

const levels = (prices: unknown, sizes: unknown): [number, number][] => {
  const p = Array.isArray(prices) ? prices.map(num) : [];
  const s = Array.isArray(sizes) ? sizes.map(num) : [];
  return p.map((price, i) => [price, s[i] ?? 0]);
};

/**
 * The snapshots of `venue` and `pair` with event time in `[fromMs, toMs)`, oldest
 * first: the newest `maxRows` of them when there are more. One snapshot per
 * instant (two of one instant: the larger event id; duplicates of a
 * ReplacingMergeTree are identical, so no FINAL is needed).
 */
export async function bookHistory(
  store: Store,
  venue: string,
  pair: string,
  fromMs: number,
  toMs: number,
  maxRows: number,
): Promise<BookHistoryPoint[]> {
  const rows = await store.query(sql`
    SELECT ts_ms, event_id, bid_prices, bid_sizes, ask_prices, ask_sizes
    FROM book_snapshots
    WHERE pair = ${pair} AND venue = ${venue} AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}
    ORDER BY ts_ms DESC, event_id DESC
    LIMIT ${Math.max(1, Math.floor(maxRows))}`);
  const out: BookHistoryPoint[] = [];
  for (const r of rows) {
    const t = num(r.ts_ms);
    if (out.length && out[out.length - 1]!.t_ms === t) continue;
    out.push({ t_ms: t, bids: levels(r.bid_prices, r.bid_sizes), asks: levels(r.ask_prices, r.ask_sizes) });
  }
  return out.reverse();
}
