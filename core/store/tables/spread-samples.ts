/**
 * Table `spread_samples` (sql/<dialect>/002_market_data.sql): one row per
 * detector evaluation; its row type, insert, the spread candles and the
 * coverage summary built on it. Formulas: docs/metrics.md.
 */
import { z } from 'zod';
import { DataSource, DislocationNumbers } from '../../events/market.js';
import { final, sql } from '../sql.js';
import type { Row, Store } from '../store.js';
import { countDislocations, dislocationCountsBy15m } from './dislocations.js';
import { countExecutions } from './paper-executions.js';
import { BASE_SLICE_MS, inList, intDiv, num, sourceLabel, timeRange } from './query-helpers.js';
import { keysOf, RecordColumns } from './record-columns.js';
import { countStaleLegs } from './stale-evaluations.js';

/**
 * A detector evaluation: the better of the two directions between a quote
 * and a fresh counterpart, with its dislocation numbers (the depth's
 * `liquidity_depth_capped`: a lower bound, docs/metrics.md "Depth").
 */
export const SpreadSample = z.object({
  sample_id: z.string(),
  pair: z.string(),
  /** Per-pair evaluation counter: orders samples, ties in time included. */
  seq: z.number().int(),
  ts_ms: z.number().int(),
  buy_venue: z.string(),
  sell_venue: z.string(),
  ...DislocationNumbers.pick({
    raw_spread_bps: true,
    net_spread_bps: true,
    est_profit_usd: true,
    capacity_usd: true,
    liquidity_depth_usd: true,
    liquidity_depth_capped: true,
  }).shape,
  quote_event_id: z.string(),
  counterpart_event_id: z.string(),
  source: DataSource,
  /** The methodology version of the detector that took it (aggregate/methodology.ts). */
  methodology: z.string(),
});
export type SpreadSample = z.output<typeof SpreadSample>;

/** The columns of `spread_samples`: one per sample field, named as the field, plus `ts` (the second-precision DateTime of ts_ms). */
const SPREAD_SAMPLE_COLUMNS = new RecordColumns(SpreadSample, {});

/**
 * The stored row: the sample plus `ts`. Written out field by field (one row
 * per quote and counterpart, built in the hot path: a literal, not
 * SPREAD_SAMPLE_COLUMNS.rowOf's loop); `satisfies` keeps it to every field.
 */
export const spreadSampleRow = (s: SpreadSample): Row =>
  ({
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
    methodology: s.methodology,
  }) satisfies Record<keyof SpreadSample | 'ts', unknown>;

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
 * samples, over [fromMs, toMs) widened to whole buckets: the 15-minute
 * candles of the range (spreadBaseCandles), rolled up (rollUpCandles).
 */
export async function spreadCandles(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
  interval: CandleInterval = '15m',
): Promise<SpreadCandle[]> {
  const size = CANDLE_INTERVALS[interval];
  if (!size) throw new TypeError(`unknown candle interval ${String(interval)}`);
  const from = Math.floor(fromMs / size) * size;
  const to = Math.ceil(toMs / size) * size;
  if (to <= from) return [];
  return rollUpCandles(pair, await spreadBaseCandles(store, pair, from, to), interval);
}

/** A 15-minute candle of one pair as stored: what every interval is built from. */
export interface BaseCandle {
  /** Bucket start, ms (a multiple of 15 minutes). */
  startMs: number;
  open: number;
  high: number;
  low: number;
  close: number;
  avgNet: number;
  maxNet: number;
  depth: number;
  depthCapped: boolean;
  n: number;
  sourceMin: unknown;
  sourceMax: unknown;
  dislocations: number;
}

/**
 * The 15-minute candles of one pair over [fromMs, toMs) (15-minute aligned),
 * oldest first: open/close = raw spread of the first/last sample by seq, high/low,
 * mean and max net spread, mean depth, sample count, and the distinct
 * dislocations opened in the bucket. Two queries (samples, dislocations).
 */
export async function spreadBaseCandles(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
): Promise<BaseCandle[]> {
  const [rows, counts] = await Promise.all([
    store.query(sql`
      SELECT ${intDiv(sql`ts_ms`, BASE_SLICE_MS)} AS b,
        argMin(raw_spread_bps, seq) AS q_open, max(raw_spread_bps) AS q_high, min(raw_spread_bps) AS q_low,
        argMax(raw_spread_bps, seq) AS q_close, avg(net_spread_bps) AS q_avg_net, max(net_spread_bps) AS q_max_net,
        avg(liquidity_depth_usd) AS q_depth, max(liquidity_depth_capped) AS q_depth_capped, count(*) AS q_n,
        min(source) AS q_source_min, max(source) AS q_source_max
      FROM spread_samples ${final}
      WHERE pair = ${pair} AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}
      GROUP BY b
      ORDER BY b`),
    dislocationCountsBy15m(store, pair, fromMs, toMs),
  ]);
  return rows.map((r) => ({
    startMs: num(r.b) * BASE_SLICE_MS,
    open: num(r.q_open),
    high: num(r.q_high),
    low: num(r.q_low),
    close: num(r.q_close),
    avgNet: num(r.q_avg_net),
    maxNet: num(r.q_max_net),
    depth: num(r.q_depth),
    depthCapped: num(r.q_depth_capped) === 1,
    n: num(r.q_n),
    sourceMin: r.q_source_min,
    sourceMax: r.q_source_max,
    dislocations: counts.get(num(r.b)) ?? 0,
  }));
}

/**
 * Candles of `interval` from 15-minute ones (oldest first): open = first
 * open, close = last close, high = max, low = min, average net and depth
 * weighted by sample count (= the plain average over all samples), max net =
 * max, dislocation count = sum. Buckets without a 15-minute candle have none.
 */
export function rollUpCandles(pair: string, base: readonly BaseCandle[], interval: CandleInterval): SpreadCandle[] {
  const size = CANDLE_INTERVALS[interval];
  const out: SpreadCandle[] = [];
  let i = 0;
  while (i < base.length) {
    const start = Math.floor(base[i]!.startMs / size) * size;
    let j = i;
    let high = -Infinity;
    let low = Infinity;
    let maxNet = -Infinity;
    let net = 0;
    let depth = 0;
    let n = 0;
    let capped = false;
    let dislocations = 0;
    const sources: unknown[] = [];
    for (; j < base.length && base[j]!.startMs < start + size; j++) {
      const c = base[j]!;
      high = Math.max(high, c.high);
      low = Math.min(low, c.low);
      maxNet = Math.max(maxNet, c.maxNet);
      net += c.avgNet * c.n;
      depth += c.depth * c.n;
      n += c.n;
      capped ||= c.depthCapped;
      dislocations += c.dislocations;
      sources.push(c.sourceMin, c.sourceMax);
    }
    const first = base[i]!;
    const single = j === i + 1;
    out.push({
      pair,
      interval,
      slice_start: new Date(start).toISOString(),
      slice_end: new Date(start + size).toISOString(),
      open_raw_spread_bps: first.open,
      high_raw_spread_bps: high,
      low_raw_spread_bps: low,
      close_raw_spread_bps: base[j - 1]!.close,
      // One 15-minute candle: its own mean (no re-weighting that could move the last bit).
      avg_net_spread_bps: single ? first.avgNet : net / n,
      max_net_spread_bps: maxNet,
      volume_depth_usd: single ? first.depth : depth / n,
      volume_depth_capped: capped,
      dislocation_count: dislocations,
      sample_count: n,
      source: sourceLabel(sources),
    });
    i = j;
  }
  return out;
}

export interface Coverage {
  /** Null when nothing is stored yet. */
  earliest_timestamp: string | null;
  latest_timestamp: string | null;
  supported_pairs: string[];
  slice_interval_minutes: number;
  total_dislocations: number;
  total_executions: number;
  /** Evaluations ever skipped because a leg was stale (stale-evaluations.ts). */
  total_stale_legs: number;
  source: string | undefined;
}

/** What the telemetry can answer: the span and pairs of spread samples, and the totals (optionally one pair). */
export async function coverage(store: Store, pair?: string): Promise<Coverage> {
  const where = pair === undefined ? sql`` : sql` WHERE pair = ${pair}`;
  const [spans, dislocations, executions, staleLegs] = await Promise.all([
    store.query(sql`
      SELECT pair, min(ts_ms) AS first_ms, max(ts_ms) AS last_ms, min(source) AS source_min, max(source) AS source_max
      FROM spread_samples${where} GROUP BY pair ORDER BY pair`),
    countDislocations(store, pair),
    countExecutions(store, pair),
    countStaleLegs(store, { pair }),
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
    total_stale_legs: staleLegs,
    source: sourceLabel(spans.flatMap((r) => [r.source_min, r.source_max])),
  };
}

/**
 * The methodology versions of a pair's spread samples (aggregate/methodology.ts) per slice of `sliceMs` over
 * [fromMs, toMs), as served: the distinct versions joined by `+` (min and max: a slice holds at most the versions
 * before and after one change). Slices without samples are absent.
 */
export async function methodologyBySlice(
  store: Store,
  pair: string,
  fromMs: number,
  toMs: number,
  sliceMs: number,
): Promise<Map<number, string>> {
  const rows = await store.query(sql`
    SELECT ${intDiv(sql`ts_ms`, sliceMs)} AS s, min(methodology) AS lo, max(methodology) AS hi
    FROM spread_samples
    WHERE pair = ${pair} AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}
    GROUP BY s`);
  return new Map(rows.map((r) => [num(r.s) * sliceMs, sourceLabel([r.lo, r.hi]) ?? '']));
}

/** Spread samples of some pairs in [fromMs, toMs), ordered by pair and seq (tests and tooling). */
export async function spreadSamplesInRange(
  store: Store,
  pairs: readonly string[],
  fromMs: number,
  toMs: number,
): Promise<SpreadSample[]> {
  if (!pairs.length) return [];
  const fields = keysOf(SpreadSample);
  const rows = await store.query(sql`
    SELECT ${SPREAD_SAMPLE_COLUMNS.select(fields)}
    FROM spread_samples ${final}
    WHERE pair IN ${inList(pairs)} AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}
    ORDER BY pair, seq`);
  return rows.map((r) => SPREAD_SAMPLE_COLUMNS.read(r, fields));
}

/** First and last sample time per pair (min/max need no FINAL), newest last first. */
export async function pairSpans(store: Store): Promise<{ pair: string; earliestMs: number; latestMs: number }[]> {
  const rows = await store.query(
    sql`SELECT pair, min(ts_ms) AS lo, max(ts_ms) AS hi FROM spread_samples GROUP BY pair`,
  );
  return rows
    .map((r) => ({ pair: String(r.pair), earliestMs: num(r.lo), latestMs: num(r.hi) }))
    .sort((a, b) => b.latestMs - a.latestMs || (a.pair < b.pair ? -1 : 1));
}
