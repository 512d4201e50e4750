/** Table `latency_samples` (sql/<dialect>/002_market_data.sql): raw LatencyEvents, their row type, insert and reads. */
import type { LatencyEvent } from '../../events/market.js';
import { dialect, final, sql, type Sql } from '../sql.js';
import type { Row, Store } from '../store.js';
import { fillRate, fillRateBySlice, NO_FILLS, type FillRate } from './paper-executions.js';
import { intDiv, num, numOrNull, sourceLabel, timeRange } from './query-helpers.js';

export interface LatencySampleRow {
  event_id: string;
  venue: string;
  venue_kind: string;
  kind: string;
  endpoint: string;
  rtt_ms: number;
  ok: number;
  ts: Date;
  ts_ms: number;
  ingest_time_ms: number;
  source: string;
}

export function latencySampleRow(e: LatencyEvent): LatencySampleRow {
  return {
    event_id: e.event_id,
    venue: e.venue,
    venue_kind: e.venue_kind,
    kind: e.kind,
    endpoint: e.endpoint,
    rtt_ms: e.rtt_ms,
    ok: e.ok ? 1 : 0,
    ts: new Date(e.event_time_ms),
    ts_ms: e.event_time_ms,
    ingest_time_ms: e.ingest_time_ms,
    source: e.source,
  };
}

export async function insertLatencySamples(store: Store, events: LatencyEvent[]): Promise<void> {
  if (!events.length) return;
  await store.insert('latency_samples', events.map(latencySampleRow) as unknown as Row[]);
}

export type LatencyKind = LatencyEvent['kind'];

/** Newest stored event time per kind (successful or not); max() needs no FINAL. */
export async function latencyWatermarks(store: Store): Promise<Map<LatencyKind, number>> {
  const rows = await store.query<{ kind: string; max_ms: unknown }>(
    sql`SELECT kind, max(ts_ms) AS max_ms FROM latency_samples GROUP BY kind`,
  );
  return new Map(rows.map((r) => [r.kind as LatencyKind, num(r.max_ms)]));
}

export interface LatencyPoint {
  event_id: string;
  ts_ms: number;
  rtt_ms: number;
}

/** Successful samples of one kind with event time in [fromMs, toMs], oldest first (ties by event_id). */
export async function latencySamplesInRange(
  store: Store,
  kind: LatencyKind,
  fromMs: number,
  toMs: number,
): Promise<LatencyPoint[]> {
  const rows = await store.query(sql`
    SELECT event_id, ts_ms, rtt_ms FROM latency_samples ${final}
    WHERE kind = ${kind} AND ok = 1 AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs + 1)}
    ORDER BY ts_ms, event_id`);
  return rows.map((r) => ({ event_id: String(r.event_id), ts_ms: num(r.ts_ms), rtt_ms: num(r.rtt_ms) }));
}

/** The `venue` filter of execution-latency: the CEX venue id, or `base_dex` for every Base RPC sample. */
export const DEX_VENUE_FILTER = 'base_dex';

export interface ExecutionLatency {
  slice_start: string;
  slice_end: string;
  sample_count: number;
  /** Null when the slice has no successful sample. */
  p50_latency_ms: number | null;
  p90_latency_ms: number | null;
  p99_latency_ms: number | null;
  min_latency_ms: number | null;
  max_latency_ms: number | null;
  avg_latency_ms: number | null;
  /** Probes that failed or timed out (ok = 0) in the slice, of the venue when filtered. */
  failed_count: number;
  /** failed_count / (sample_count + failed_count) x 100; null without any probe. */
  failure_rate_pct: number | null;
  /** filled / (filled + missed) * 100 over paper executions decided in the slice; null without any. */
  fill_rate_pct: number | null;
  executions: number;
  filled: number;
  venues: { cex_rest_ms: number | null; dex_base_ms: number | null };
  source: string | undefined;
}

/** Nearest-rank quantile (ClickHouse quantileExact: the element at index floor(level * n) of the sorted values). */
export function exactQuantile(level: number, column: Sql): Sql {
  return dialect({
    clickhouse: sql`quantileExact(${level})(${column})`,
    duckdb: sql`list_sort(list(${column}))[CAST(floor(${level} * count(*)) AS BIGINT) + 1]`,
  });
}

/**
 * Round-trip statistics over successful latency samples with event time in
 * [fromMs, toMs), optionally one venue (`base_dex`: every DEX RPC sample),
 * plus the fill rate of the paper executions decided in the slice (not
 * filtered by venue: an execution has both legs) and the average per kind.
 */
export async function executionLatency(
  store: Store,
  fromMs: number,
  toMs: number,
  venue?: string,
): Promise<ExecutionLatency> {
  const inSlice = sql`ok = 1 AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}`;
  const venueFilter = venueFilterOf(venue);
  const [[stats], [perKind], [failures], fills] = await Promise.all([
    store.query(sql`SELECT ${LATENCY_STATS} FROM latency_samples ${final} WHERE ${inSlice}${venueFilter}`),
    store.query(sql`SELECT ${PER_KIND} FROM latency_samples ${final} WHERE ${inSlice}`),
    store.query(
      sql`SELECT ${FAILURES} FROM latency_samples ${final} WHERE ok = 0 AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}${venueFilter}`,
    ),
    fillRate(store, fromMs, toMs),
  ]);
  return executionLatencyOf(fromMs, toMs, stats, perKind, failures, fills);
}

/**
 * executionLatency of consecutive slices of one length, UTC-aligned (start a
 * multiple of the length), from one grouped query per table over their range:
 * by slice start, each exactly what executionLatency answers for it.
 */
export async function executionLatencyBySlice(
  store: Store,
  slices: readonly { fromMs: number; toMs: number }[],
  venue?: string,
): Promise<Map<number, ExecutionLatency>> {
  const out = new Map<number, ExecutionLatency>();
  if (!slices.length) return out;
  const size = slices[0]!.toMs - slices[0]!.fromMs;
  if (slices.some((s) => s.fromMs % size !== 0 || s.toMs - s.fromMs !== size))
    throw new TypeError('executionLatencyBySlice: slices must be aligned and of one length');
  const fromMs = slices[0]!.fromMs;
  const toMs = slices[slices.length - 1]!.toMs;
  const inRange = sql`ok = 1 AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}`;
  const bucket = intDiv(sql`ts_ms`, size);
  const [stats, perKind, failures, fills] = await Promise.all([
    store.query(
      sql`SELECT ${bucket} AS b, ${LATENCY_STATS} FROM latency_samples ${final} WHERE ${inRange}${venueFilterOf(venue)} GROUP BY b`,
    ),
    store.query(sql`SELECT ${bucket} AS b, ${PER_KIND} FROM latency_samples ${final} WHERE ${inRange} GROUP BY b`),
    store.query(
      sql`SELECT ${bucket} AS b, ${FAILURES} FROM latency_samples ${final} WHERE ok = 0 AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}${venueFilterOf(venue)} GROUP BY b`,
    ),
    fillRateBySlice(store, fromMs, toMs, size),
  ]);
  const statsBy = new Map(stats.map((r) => [num(r.b) * size, r]));
  const kindBy = new Map(perKind.map((r) => [num(r.b) * size, r]));
  const failedBy = new Map(failures.map((r) => [num(r.b) * size, r]));
  for (const s of slices)
    out.set(
      s.fromMs,
      executionLatencyOf(
        s.fromMs,
        s.toMs,
        statsBy.get(s.fromMs),
        kindBy.get(s.fromMs),
        failedBy.get(s.fromMs),
        fills.get(s.fromMs) ?? NO_FILLS,
      ),
    );
  return out;
}

const LATENCY_STATS = sql`count(*) AS n, min(rtt_ms) AS min_ms, max(rtt_ms) AS max_ms, avg(rtt_ms) AS avg_ms,
  ${exactQuantile(0.5, sql`rtt_ms`)} AS p50, ${exactQuantile(0.9, sql`rtt_ms`)} AS p90, ${exactQuantile(0.99, sql`rtt_ms`)} AS p99`;
const PER_KIND = sql`avg(CASE WHEN kind = 'cex_rest' THEN rtt_ms ELSE NULL END) AS cex_ms,
  avg(CASE WHEN kind = 'dex_rpc' THEN rtt_ms ELSE NULL END) AS dex_ms,
  min(source) AS source_min, max(source) AS source_max`;
/** Failed (or timed out) probes: what the successful samples' statistics leave out. */
const FAILURES = sql`count(*) AS failed`;

function executionLatencyOf(
  fromMs: number,
  toMs: number,
  stats: Row | undefined,
  perKind: Row | undefined,
  failures: Row | undefined,
  fills: FillRate,
): ExecutionLatency {
  const n = num(stats?.n ?? 0);
  const failed = num(failures?.failed ?? 0);
  const stat = (v: unknown) => (n ? numOrNull(v) : null);
  return {
    slice_start: new Date(fromMs).toISOString(),
    slice_end: new Date(toMs).toISOString(),
    sample_count: n,
    p50_latency_ms: stat(stats?.p50),
    p90_latency_ms: stat(stats?.p90),
    p99_latency_ms: stat(stats?.p99),
    min_latency_ms: stat(stats?.min_ms),
    max_latency_ms: stat(stats?.max_ms),
    avg_latency_ms: stat(stats?.avg_ms),
    failed_count: failed,
    failure_rate_pct: n + failed ? (failed / (n + failed)) * 100 : null,
    fill_rate_pct: fills.fill_rate_pct,
    executions: fills.executions,
    filled: fills.filled,
    venues: { cex_rest_ms: finiteOrNull(perKind?.cex_ms), dex_base_ms: finiteOrNull(perKind?.dex_ms) },
    source: n ? sourceLabel([perKind?.source_min, perKind?.source_max]) : undefined,
  };
}

/** The `venue` filter of execution-latency as SQL (` AND ...`, or nothing). */
function venueFilterOf(venue: string | undefined): Sql {
  return venue === undefined
    ? sql``
    : venue === DEX_VENUE_FILTER
      ? sql` AND venue_kind = 'dex'`
      : sql` AND venue = ${venue}`;
}

/**
 * The median round trip of executionLatency (same samples, same nearest rank)
 * alone, or null without a sample: one query where executionLatency runs three.
 */
export async function medianRoundTripMs(
  store: Store,
  fromMs: number,
  toMs: number,
  venue?: string,
): Promise<number | null> {
  const [row] = await store.query(sql`
    SELECT count(*) AS n, ${exactQuantile(0.5, sql`rtt_ms`)} AS p50 FROM latency_samples ${final}
    WHERE ok = 1 AND ${timeRange(sql`ts`, sql`ts_ms`, fromMs, toMs)}${venueFilterOf(venue)}`);
  return num(row?.n ?? 0) ? numOrNull(row?.p50) : null;
}

function finiteOrNull(v: unknown): number | null {
  const x = numOrNull(v);
  return x !== null && Number.isFinite(x) ? x : null;
}
