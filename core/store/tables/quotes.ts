/** Table `quotes` (sql/<dialect>/002_market_data.sql): raw QuoteEvents, their row type, insert and reads. */
import type { QuoteEvent } from '../../events/market.js';
import { dialect, join, sql } from '../sql.js';
import type { Row, Store } from '../store.js';
import { inList, num, numOrNull, timeRange } from './query-helpers.js';

export type QuoteRow = {
  event_id: string;
  pair: string;
  venue: string;
  venue_kind: string;
  ts: Date;
  ts_ms: number;
  ingest_time_ms: number;
  source: string;
  bid: number;
  ask: number;
  bid_size: number | null;
  ask_size: number | null;
  ladder_size_usd: number[];
  ladder_buy_price: (number | null)[];
  ladder_sell_price: (number | null)[];
  fee_bps: number;
  fee_included: number;
  gas_usd: number | null;
  gas_price_gwei: number | null;
  sequence: number | null;
  /** QuoteEvent.depth, flattened (null / 0 / empty when the quote has none). */
  depth_impact_bps: number | null;
  depth_buy_usd: number | null;
  depth_sell_usd: number | null;
  depth_buy_capped: number;
  depth_sell_capped: number;
  depth_buy_sizes: number[];
  depth_buy_prices: number[];
  depth_sell_sizes: number[];
  depth_sell_prices: number[];
};

export function quoteRow(e: QuoteEvent): QuoteRow {
  const d = e.depth;
  return {
    event_id: e.event_id,
    pair: e.pair,
    venue: e.venue,
    venue_kind: e.venue_kind,
    ts: new Date(e.event_time_ms),
    ts_ms: e.event_time_ms,
    ingest_time_ms: e.ingest_time_ms,
    source: e.source,
    bid: e.bid,
    ask: e.ask,
    bid_size: e.bid_size,
    ask_size: e.ask_size,
    ladder_size_usd: e.ladder.map((s) => s.size_usd),
    ladder_buy_price: e.ladder.map((s) => s.buy_price),
    ladder_sell_price: e.ladder.map((s) => s.sell_price),
    fee_bps: e.fee_bps,
    fee_included: e.fee_included ? 1 : 0,
    gas_usd: e.gas_usd,
    gas_price_gwei: e.gas_price_gwei,
    sequence: e.sequence,
    depth_impact_bps: d ? d.impact_bps : null,
    depth_buy_usd: d ? d.buy_usd : null,
    depth_sell_usd: d ? d.sell_usd : null,
    depth_buy_capped: d?.buy_capped ? 1 : 0,
    depth_sell_capped: d?.sell_capped ? 1 : 0,
    depth_buy_sizes: d ? d.buy_points.map((p) => p[0]) : [],
    depth_buy_prices: d ? d.buy_points.map((p) => p[1]) : [],
    depth_sell_sizes: d ? d.sell_points.map((p) => p[0]) : [],
    depth_sell_prices: d ? d.sell_points.map((p) => p[1]) : [],
  };
}

/** Two parallel stored arrays back into [size, price] points. */
function pointsOf(sizes: unknown, prices: unknown): [number, number][] {
  const s = (sizes as unknown[] | null) ?? [];
  const p = (prices as unknown[] | null) ?? [];
  return s.map((size, i) => [num(size), num(p[i])]);
}

export async function insertQuotes(store: Store, events: QuoteEvent[]): Promise<void> {
  if (!events.length) return;
  await store.insert('quotes', events.map(quoteRow));
}

/** A stored row back into the QuoteEvent it came from. */
export function quoteFromRow(r: Row): QuoteEvent {
  const sizes = (r.ladder_size_usd as unknown[]).map(num);
  const buys = r.ladder_buy_price as unknown[];
  const sells = r.ladder_sell_price as unknown[];
  return {
    event_id: String(r.event_id),
    pair: String(r.pair),
    venue: String(r.venue),
    venue_kind: String(r.venue_kind) as QuoteEvent['venue_kind'],
    event_time_ms: num(r.ts_ms),
    ingest_time_ms: num(r.ingest_time_ms),
    source: String(r.source) as QuoteEvent['source'],
    bid: num(r.bid),
    ask: num(r.ask),
    bid_size: numOrNull(r.bid_size),
    ask_size: numOrNull(r.ask_size),
    ladder: sizes.map((size_usd, i) => ({ size_usd, buy_price: numOrNull(buys[i]), sell_price: numOrNull(sells[i]) })),
    fee_bps: num(r.fee_bps),
    fee_included: num(r.fee_included) === 1,
    gas_usd: numOrNull(r.gas_usd),
    gas_price_gwei: numOrNull(r.gas_price_gwei),
    sequence: numOrNull(r.sequence),
    ...(r.depth_impact_bps === null || r.depth_impact_bps === undefined
      ? {}
      : {
          depth: {
            impact_bps: num(r.depth_impact_bps),
            buy_usd: num(r.depth_buy_usd),
            sell_usd: num(r.depth_sell_usd),
            buy_capped: num(r.depth_buy_capped) === 1,
            sell_capped: num(r.depth_sell_capped) === 1,
            buy_points: pointsOf(r.depth_buy_sizes, r.depth_buy_prices),
            sell_points: pointsOf(r.depth_sell_sizes, r.depth_sell_prices),
          },
        }),
  };
}

/** One pair's time window [fromMs, toMs). */
export interface QuoteWindow {
  pair: string;
  fromMs: number;
  toMs: number;
}

/** Width of the time buckets quotesInWindows looks windows up by on ClickHouse. */
const WINDOW_BUCKET_MS = 10_000;

/**
 * Quotes inside some windows, per pair, oldest first (ties by event_id), each
 * event once; windows of a pair may overlap. One query for all of them.
 * Duplicates (a replayed event not merged yet) are dropped here rather than
 * through FINAL: they are identical rows, adjacent in this order, and
 * ClickHouse's FINAL merges every part of the range on one thread.
 *
 * On ClickHouse the query does not spell each window out: an OR of one
 * `(pair, time range)` term per window is evaluated term by term on every row
 * read, and the paper executor's windows (hundreds per query) cost more
 * ClickHouse time than inserting the quotes did (bench:pipeline: 8.3 s for
 * 66k rows out of 3.5M read, against 6.6 s for inserting 1M). It reads the
 * pairs' overall span (index pruning) and keeps the rows whose
 * `(pair, 10-second bucket)` is in a hash set built from the windows; the
 * exact windows are applied here. DuckDB (embedded, small) gets the OR.
 */
export async function quotesInWindows(
  store: Store,
  windows: readonly QuoteWindow[],
): Promise<Map<string, QuoteEvent[]>> {
  const out = new Map<string, QuoteEvent[]>(windows.map((w) => [w.pair, []]));
  if (!windows.length) return out;
  const merged = mergedWindows(windows);
  if (!merged.size) return out;
  let fromMs = Infinity;
  let toMs = -Infinity;
  const buckets: ReturnType<typeof sql>[] = [];
  const ranges: ReturnType<typeof sql>[] = [];
  for (const [pair, list] of merged) {
    let last = -Infinity;
    for (const w of list) {
      fromMs = Math.min(fromMs, w.fromMs);
      toMs = Math.max(toMs, w.toMs);
      ranges.push(sql`(pair = ${pair} AND ${timeRange(sql`ts`, sql`ts_ms`, w.fromMs, w.toMs)})`);
      for (
        let b = Math.max(last + 1, Math.floor(w.fromMs / WINDOW_BUCKET_MS));
        b <= Math.floor((w.toMs - 1) / WINDOW_BUCKET_MS);
        b++
      ) {
        buckets.push(sql`(${pair}, ${b})`);
        last = b;
      }
    }
  }
  const span = sql`pair IN ${inList([...merged.keys()])} AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}`;
  // PREWHERE: the other columns (ladders included) are read only for the rows in the buckets.
  const filter = dialect({
    clickhouse: sql`PREWHERE (pair, intDiv(ts_ms, ${WINDOW_BUCKET_MS})) IN (${join(buckets)}) WHERE ${span}`,
    duckdb: sql`WHERE ${span} AND (${join(ranges, ' OR ')})`,
  });
  const rows = await store.query(sql`
    SELECT * FROM quotes
    ${filter}
    ORDER BY pair, ts_ms, event_id`);
  // Rows come by pair, then time: one cursor per pair over its sorted windows.
  let pair: unknown;
  let list: QuoteWindow[] = [];
  let into: QuoteEvent[] = [];
  let i = 0;
  let lastId: unknown;
  for (const r of rows) {
    if (r.event_id === lastId) continue;
    lastId = r.event_id;
    if (r.pair !== pair) {
      pair = r.pair;
      list = merged.get(String(pair)) ?? [];
      into = out.get(String(pair)) ?? [];
      i = 0;
    }
    const t = num(r.ts_ms);
    while (i < list.length && list[i]!.toMs <= t) i++;
    if (i < list.length && list[i]!.fromMs <= t) into.push(quoteFromRow(r));
  }
  return out;
}

/** Windows per pair, sorted and with overlapping or touching ones merged. */
function mergedWindows(windows: readonly QuoteWindow[]): Map<string, QuoteWindow[]> {
  const byPair = new Map<string, QuoteWindow[]>();
  for (const w of [...windows].sort((a, b) => a.fromMs - b.fromMs)) {
    if (w.toMs <= w.fromMs) continue;
    let list = byPair.get(w.pair);
    if (!list) byPair.set(w.pair, (list = []));
    const prev = list[list.length - 1];
    if (prev && w.fromMs <= prev.toMs) prev.toMs = Math.max(prev.toMs, w.toMs);
    else list.push({ pair: w.pair, fromMs: w.fromMs, toMs: w.toMs });
  }
  return byPair;
}

/** A quote's event time and top of book. */
export interface QuoteTop {
  t_ms: number;
  bid: number;
  ask: number;
}

/**
 * Event time, bid and ask of one pair's quotes (optionally some venues) with
 * event time in [fromMs, toMs), oldest first (ties by event_id). No FINAL: a
 * duplicate of an event is the same point at the same time, for readers that
 * keep one point per instant (the impact simulation's volatility). Three
 * columns instead of whole rows through FINAL: what keeps it cheap.
 */
export async function quoteTopsInRange(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
  venues?: readonly string[],
): Promise<QuoteTop[]> {
  const venueFilter = venues?.length ? sql` AND venue IN ${inList(venues)}` : sql``;
  const rows = await store.query(sql`
    SELECT ts_ms, bid, ask FROM quotes
    WHERE pair = ${pair} AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}${venueFilter}
    ORDER BY ts_ms, event_id`);
  return rows.map((r) => ({ t_ms: num(r.ts_ms), bid: num(r.bid), ask: num(r.ask) }));
}

/**
 * Newest stored event time per (pair, venue) at or after `sinceMs` (max() is
 * unaffected by duplicates: no FINAL). Key `<pair>|<venue>`.
 */
export async function quoteWatermarks(
  store: Store,
  pairs: readonly string[],
  sinceMs: number,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!pairs.length) return out;
  const rows = await store.query<{ pair: string; venue: string; max_ms: unknown }>(sql`
    SELECT pair, venue, max(ts_ms) AS max_ms FROM quotes
    WHERE pair IN ${inList(pairs)} AND ts >= ${new Date(Math.floor(sinceMs / 1000) * 1000)}
    GROUP BY pair, venue`);
  for (const r of rows) out.set(`${r.pair}|${r.venue}`, num(r.max_ms));
  return out;
}

/** A pair's newest quote at one venue: top of book, event time and data source. */
export interface LatestQuote {
  venue: string;
  ts_ms: number;
  bid: number;
  ask: number;
  source: string;
}

/**
 * The newest quote of one pair among `venues` with event time at or after
 * `sinceMs`, or undefined (no FINAL: a duplicate is the same quote). Used by
 * dex-price-summary to price an ingested token from its own Base pools.
 */
export async function latestQuote(
  store: Store,
  pair: string,
  venues: readonly string[],
  sinceMs: number,
): Promise<LatestQuote | undefined> {
  if (!venues.length) return undefined;
  const rows = await store.query(sql`
    SELECT venue, ts_ms, bid, ask, source FROM quotes
    WHERE pair = ${pair} AND venue IN ${inList(venues)} AND ts >= ${new Date(Math.floor(sinceMs / 1000) * 1000)} AND ts_ms >= ${sinceMs}
    ORDER BY ts_ms DESC, event_id DESC
    LIMIT 1`);
  const r = rows[0];
  return r
    ? { venue: String(r.venue), ts_ms: num(r.ts_ms), bid: num(r.bid), ask: num(r.ask), source: String(r.source) }
    : undefined;
}
