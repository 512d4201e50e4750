/**
 * Table `spread_samples` (sql/<dialect>/002_market_data.sql): one row per
 * detector evaluation; its row type, insert, the spread candles and the
 * coverage summary built on it. Formulas: docs/metrics.md.
 */
import type { DislocationEvent } from '../../events/market.js';
import { final, sql } from '../sql.js';
import type { Row, Store } from '../store.js';
import { countDislocations, dislocationCountsBy15m } from './dislocations.js';
import { countExecutions } from './paper-executions.js';
import { BASE_SLICE_MS, inList, intDiv, num, sourceLabel, timeRange } from './query-helpers.js';

/** A detector evaluation: the better of the two directions between a quote and a fresh counterpart. */
export interface SpreadSample {
  sample_id: string;
  pair: string;
  /** Per-pair evaluation counter: orders samples, ties in time included. */
  seq: number;
  ts_ms: number;
  buy_venue: string;
  sell_venue: string;
  raw_spread_bps: number;
  net_spread_bps: number;
  est_profit_usd: number;
  capacity_usd: number;
  liquidity_depth_usd: number;
  /** The depth is a lower bound (docs/metrics.md, "Depth"). */
  liquidity_depth_capped: boolean;
  quote_event_id: string;
  counterpart_event_id: string;
  source: DislocationEvent['source'];
}

/** The stored row: the sample plus `ts` (field by field: one row per quote and counterpart, built in the hot path). */
export const spreadSampleRow = (s: SpreadSample): Row => ({
  sample_id: s.sample_id,
  pair: s.pair,
  seq: s.seq,
  ts: new Date(s.ts_ms),
  ts_ms: s.ts_ms,
  buy_venue: s.buy_venue,
  sell_venue: s.sell_venue,
  raw_spread_bps: s.raw_spread_bps,
  net_spread_bps: s.net_spread_bps,
  est_profit_usd: s.est_profit_usd,
  capacity_usd: s.capacity_usd,
  liquidity_depth_usd: s.liquidity_depth_usd,
  liquidity_depth_capped: s.liquidity_depth_capped ? 1 : 0,
  quote_event_id: s.quote_event_id,
  counterpart_event_id: s.counterpart_event_id,
  source: s.source,
});

export async function insertSpreadSamples(store: Store, samples: SpreadSample[]): Promise<void> {
  if (!samples.length) return;
  await store.insert('spread_samples', samples.map(spreadSampleRow));
}

export const CANDLE_INTERVALS = { '15m': BASE_SLICE_MS, '1h': 3_600_000, '4h': 14_400_000, '1d': 86_400_000 } as const;
export type CandleInterval = keyof typeof CANDLE_INTERVALS;

export interface SpreadCandle {
  pair: string;
  interval: CandleInterval;
  slice_start: string;
  slice_end: string;
  open_raw_spread_bps: number;
  high_raw_spread_bps: number;
  low_raw_spread_bps: number;
  close_raw_spread_bps: number;
  avg_net_spread_bps: number;
  max_net_spread_bps: number;
  /** Average measured liquidity depth of the samples (docs/metrics.md, "Depth"). */
  volume_depth_usd: number;
  /** Some sample's depth was a lower bound, so the average is one too. */
  volume_depth_capped: boolean;
  dislocation_count: number;
  sample_count: number;
  source: string | undefined;
}

/**
 * Candles of one pair for every interval bucket (UTC-aligned) that has
 * samples, over [fromMs, toMs) widened to whole buckets. 15-minute candles
 * come from spread_samples; longer ones are built from the 15-minute ones:
 * open = first open, close = last close, high = max, low = min, average net
 * and depth weighted by sample count (= the plain average over all samples),
 * max net = max, dislocation count = sum.
 */
export async function spreadCandles(store: Store, pair: string, fromMs: number, toMs: number, interval: CandleInterval = '15m'): Promise<SpreadCandle[]> {
  const size = CANDLE_INTERVALS[interval];
  if (!size) throw new TypeError(`unknown candle interval ${String(interval)}`);
  const from = Math.floor(fromMs / size) * size;
  const to = Math.ceil(toMs / size) * size;
  if (to <= from) return [];
  const base = sql`
    SELECT ${intDiv(sql`ts_ms`, BASE_SLICE_MS)} AS b,
      argMin(raw_spread_bps, seq) AS q_open, max(raw_spread_bps) AS q_high, min(raw_spread_bps) AS q_low,
      argMax(raw_spread_bps, seq) AS q_close, avg(net_spread_bps) AS q_avg_net, max(net_spread_bps) AS q_max_net,
      avg(liquidity_depth_usd) AS q_depth, max(liquidity_depth_capped) AS q_depth_capped, count(*) AS q_n,
      min(source) AS q_source_min, max(source) AS q_source_max
    FROM spread_samples ${final}
    WHERE pair = ${pair} AND ${timeRange(sql`ts`, sql`ts_ms`, from, to)}
    GROUP BY b`;
  const factor = size / BASE_SLICE_MS;
  const statement =
    factor === 1
      ? sql`${base} ORDER BY b`
      : sql`
    SELECT ${intDiv(sql`b`, factor)} AS bb,
      argMin(q_open, b) AS open_raw, max(q_high) AS high_raw, min(q_low) AS low_raw, argMax(q_close, b) AS close_raw,
      sum(q_avg_net * q_n) / sum(q_n) AS avg_net, max(q_max_net) AS max_net, sum(q_depth * q_n) / sum(q_n) AS avg_depth,
      max(q_depth_capped) AS depth_capped, sum(q_n) AS n, min(q_source_min) AS source_min, max(q_source_max) AS source_max
    FROM (${base}) AS c
    GROUP BY bb ORDER BY bb`;
  const [rows, counts] = await Promise.all([store.query(statement), dislocationCountsBy15m(store, pair, from, to)]);
  const byBucket = new Map<number, number>();
  for (const [b15, n] of counts) {
    const start = Math.floor((b15 * BASE_SLICE_MS) / size) * size;
    byBucket.set(start, (byBucket.get(start) ?? 0) + n);
  }
  return rows.map((row) => {
    const r = factor === 1 ? fromBase(row) : row;
    const start = num(r.bb) * size;
    return {
      pair,
      interval,
      slice_start: new Date(start).toISOString(),
      slice_end: new Date(start + size).toISOString(),
      open_raw_spread_bps: num(r.open_raw),
      high_raw_spread_bps: num(r.high_raw),
      low_raw_spread_bps: num(r.low_raw),
      close_raw_spread_bps: num(r.close_raw),
      avg_net_spread_bps: num(r.avg_net),
      max_net_spread_bps: num(r.max_net),
      volume_depth_usd: num(r.avg_depth),
      volume_depth_capped: num(r.depth_capped) === 1,
      dislocation_count: byBucket.get(start) ?? 0,
      sample_count: num(r.n),
      source: sourceLabel([r.source_min, r.source_max]),
    };
  });
}

/** A 15-minute row of the base query under the names of the derived query. */
const fromBase = (r: Row): Row => ({
  bb: r.b,
  open_raw: r.q_open,
  high_raw: r.q_high,
  low_raw: r.q_low,
  close_raw: r.q_close,
  avg_net: r.q_avg_net,
  max_net: r.q_max_net,
  avg_depth: r.q_depth,
  depth_capped: r.q_depth_capped,
  n: r.q_n,
  source_min: r.q_source_min,
  source_max: r.q_source_max,
});

export interface Coverage {
  /** Null when nothing is stored yet. */
  earliest_timestamp: string | null;
  latest_timestamp: string | null;
  supported_pairs: string[];
  slice_interval_minutes: number;
  total_dislocations: number;
  total_executions: number;
  source: string | undefined;
}

/** What the telemetry can answer: the span and pairs of spread samples, and the totals (optionally one pair). */
export async function coverage(store: Store, pair?: string): Promise<Coverage> {
  const where = pair === undefined ? sql`` : sql` WHERE pair = ${pair}`;
  const [spans, dislocations, executions] = await Promise.all([
    store.query(sql`
      SELECT pair, min(ts_ms) AS first_ms, max(ts_ms) AS last_ms, min(source) AS source_min, max(source) AS source_max
      FROM spread_samples${where} GROUP BY pair ORDER BY pair`),
    countDislocations(store, pair),
    countExecutions(store, pair),
  ]);
  const firsts = spans.map((r) => num(r.first_ms));
  const lasts = spans.map((r) => num(r.last_ms));
  return {
    earliest_timestamp: firsts.length ? new Date(Math.min(...firsts)).toISOString() : null,
    latest_timestamp: lasts.length ? new Date(Math.max(...lasts)).toISOString() : null,
    supported_pairs: spans.map((r) => String(r.pair)),
    slice_interval_minutes: BASE_SLICE_MS / 60_000,
    total_dislocations: dislocations,
    total_executions: executions,
    source: sourceLabel(spans.flatMap((r) => [r.source_min, r.source_max])),
  };
}

/** Spread samples of some pairs in [fromMs, toMs), ordered by pair and seq (tests and tooling). */
export async function spreadSamplesInRange(store: Store, pairs: readonly string[], fromMs: number, toMs: number): Promise<SpreadSample[]> {
  if (!pairs.length) return [];
  const rows = await store.query(sql`
    SELECT sample_id, pair, seq, ts_ms, buy_venue, sell_venue, raw_spread_bps, net_spread_bps, est_profit_usd, capacity_usd,
      liquidity_depth_usd, liquidity_depth_capped, quote_event_id, counterpart_event_id, source
    FROM spread_samples ${final}
    WHERE pair IN ${inList(pairs)} AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}
    ORDER BY pair, seq`);
  return rows.map((r) => ({
    sample_id: String(r.sample_id),
    pair: String(r.pair),
    seq: num(r.seq),
    ts_ms: num(r.ts_ms),
    buy_venue: String(r.buy_venue),
    sell_venue: String(r.sell_venue),
    raw_spread_bps: num(r.raw_spread_bps),
    net_spread_bps: num(r.net_spread_bps),
    est_profit_usd: num(r.est_profit_usd),
    capacity_usd: num(r.capacity_usd),
    liquidity_depth_usd: num(r.liquidity_depth_usd),
    liquidity_depth_capped: num(r.liquidity_depth_capped) === 1,
    quote_event_id: String(r.quote_event_id),
    counterpart_event_id: String(r.counterpart_event_id),
    source: String(r.source) as SpreadSample['source'],
  }));
}

/** First and last sample time per pair (min/max need no FINAL), newest last first. */
export async function pairSpans(store: Store): Promise<{ pair: string; earliestMs: number; latestMs: number }[]> {
  const rows = await store.query(sql`SELECT pair, min(ts_ms) AS lo, max(ts_ms) AS hi FROM spread_samples GROUP BY pair`);
  return rows.map((r) => ({ pair: String(r.pair), earliestMs: num(r.lo), latestMs: num(r.hi) })).sort((a, b) => b.latestMs - a.latestMs || (a.pair < b.pair ? -1 : 1));
}
