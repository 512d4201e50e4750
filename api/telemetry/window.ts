/**
 * The telemetry time window and its pre-flight guard.
 *
 * A request names a window with `date` (YYYY-MM-DD, UTC) and `time` (HHMM):
 *   - date and time: the slice (or interval bucket) containing date+time;
 *   - date only:     time defaults to 0000;
 *   - time only:     the date of the newest stored data;
 *   - neither:       the slice containing the newest stored data.
 * The slice is 15 minutes, UTC-aligned; a longer candle interval widens it to its bucket.
 *
 * Coverage is the span of stored spread samples (`earliest_timestamp` ..
 * `latest_timestamp` of /api/v1/crypto/coverage), per pair or overall. A
 * window that does not intersect it answers 404 `outside_coverage` with the
 * text of a zero charge, before any 402 challenge: never charged. A window
 * inside it without any observation the route reads (the pipeline was not
 * running then) answers 404 `no_data_in_window` the same way, on every
 * windowed route (completeness.ts).
 */
import { AppError } from '../../core/errors.js';
import { sql, type Sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { BASE_SLICE_MS, num, timeRange } from '../../core/store/tables/query-helpers.js';
import { ZERO_CHARGE_TEXT } from '../sku/schemas.js';

export interface WindowParams {
  date?: string | undefined;
  time?: string | undefined;
}

export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

export interface CoverageSpan {
  earliestMs: number;
  latestMs: number;
}

const DAY_MS = 86_400_000;

/** The window a request names, given the span of stored data (see the module comment). */
export function resolveWindow(params: WindowParams, span: CoverageSpan, sizeMs = BASE_SLICE_MS): TimeWindow {
  let anchor: number;
  if (params.date === undefined && params.time === undefined) anchor = span.latestMs;
  else {
    const day =
      params.date !== undefined ? Date.parse(`${params.date}T00:00:00Z`) : Math.floor(span.latestMs / DAY_MS) * DAY_MS;
    const time = params.time ?? '0000';
    anchor = day + (Number(time.slice(0, 2)) * 60 + Number(time.slice(2, 4))) * 60_000;
  }
  const fromMs = Math.floor(anchor / sizeMs) * sizeMs;
  return { fromMs, toMs: fromMs + sizeMs };
}

/**
 * Spans are cached briefly per store and pair; a window outside the cached span re-reads it once before refusing.
 * The span is a scan (of every pair's samples without a pair): one read at a time per store and pair, and once
 * the cached span is older than SPAN_TTL_MS callers get it while a read refreshes it in the background.
 */
const SPAN_TTL_MS = 5000;
const REFRESH_MIN_MS = 250;
interface CachedSpan {
  at: number;
  span: CoverageSpan | undefined;
}
const caches = new WeakMap<Store, Map<string, CachedSpan>>();
const reads = new WeakMap<Store, Map<string, Promise<CoverageSpan | undefined>>>();

function readSpan(
  store: Store,
  cache: Map<string, CachedSpan>,
  key: string,
  pair: string | undefined,
): Promise<CoverageSpan | undefined> {
  let inFlight = reads.get(store);
  if (!inFlight) reads.set(store, (inFlight = new Map()));
  const running = inFlight.get(key);
  if (running) return running;
  const flights = inFlight;
  const read = (async () => {
    try {
      const at = Date.now();
      const where = pair === undefined ? sql`` : sql` WHERE pair = ${pair}`;
      const [row] = await store.query(
        sql`SELECT count(*) AS n, min(ts_ms) AS lo, max(ts_ms) AS hi FROM spread_samples${where}`,
      );
      const span = row && num(row.n) > 0 ? { earliestMs: num(row.lo), latestMs: num(row.hi) } : undefined;
      cache.set(key, { at, span });
      return span;
    } finally {
      flights.delete(key);
    }
  })();
  flights.set(key, read);
  return read;
}

/** Span of the stored spread samples (one pair, or all), or undefined when nothing is stored. min/max need no FINAL. */
export async function coverageSpan(
  store: Store,
  pair?: string,
  options: { maxAgeMs?: number } = {},
): Promise<CoverageSpan | undefined> {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new Map()));
  const key = pair ?? '*';
  const cached = cache.get(key);
  if (cached && Date.now() - cached.at < (options.maxAgeMs ?? SPAN_TTL_MS)) return cached.span;
  if (cached && options.maxAgeMs === undefined) {
    void readSpan(store, cache, key, pair).catch(() => undefined); // stale while revalidating; the next caller retries a failed read
    return cached.span;
  }
  return readSpan(store, cache, key, pair);
}

export const intersects = (w: TimeWindow, s: CoverageSpan) => w.toMs > s.earliestMs && w.fromMs <= s.latestMs;

/**
 * The pre-flight of every windowed telemetry route: resolves the window and
 * refuses (404 `outside_coverage`, zero charge) one that lies outside coverage.
 */
export async function windowWithinCoverage(
  store: Store,
  params: WindowParams,
  options: { pair?: string; sizeMs?: number } = {},
): Promise<TimeWindow> {
  const sizeMs = options.sizeMs ?? BASE_SLICE_MS;
  let span = await coverageSpan(store, options.pair);
  let window = span ? resolveWindow(params, span, sizeMs) : undefined;
  if (!span || !window || !intersects(window, span)) {
    // Fresh data may have arrived since the span was cached.
    span = await coverageSpan(store, options.pair, { maxAgeMs: REFRESH_MIN_MS });
    window = span ? resolveWindow(params, span, sizeMs) : undefined;
  }
  if (!span || !window) {
    throw outsideCoverage(params, `no telemetry is stored yet${options.pair ? ` for ${options.pair}` : ''}`, {});
  }
  if (!intersects(window, span)) {
    const earliest = new Date(span.earliestMs).toISOString();
    const latest = new Date(span.latestMs).toISOString();
    throw outsideCoverage(
      params,
      `the window ${new Date(window.fromMs).toISOString()} - ${new Date(window.toMs).toISOString()} lies outside the available data${options.pair ? ` for ${options.pair}` : ''} (${earliest} - ${latest})`,
      {
        earliest_timestamp: earliest,
        latest_timestamp: latest,
        slice_start: new Date(window.fromMs).toISOString(),
        slice_end: new Date(window.toMs).toISOString(),
      },
    );
  }
  return window;
}

/** The parameter that named the window (`date`, else `time`), for a refusal's `field`; undefined when neither did. */
export function windowField(params: WindowParams): 'date' | 'time' | undefined {
  return params.date !== undefined ? 'date' : params.time !== undefined ? 'time' : undefined;
}

function outsideCoverage(params: WindowParams, detail: string, extra: Record<string, unknown>): AppError {
  const field = windowField(params);
  return new AppError('outside_coverage', detail, 404, {
    ...(field ? { field } : {}),
    charged: ZERO_CHARGE_TEXT,
    ...extra,
  });
}

/** A window inside coverage that holds no row the route needs: 404 `no_data_in_window`, zero charge. */
export function noDataInWindow(window: TimeWindow, what: string, field?: string): AppError {
  return new AppError(
    'no_data_in_window',
    `no ${what} between ${new Date(window.fromMs).toISOString()} and ${new Date(window.toMs).toISOString()}`,
    404,
    {
      ...(field ? { field } : {}),
      charged: ZERO_CHARGE_TEXT,
      slice_start: new Date(window.fromMs).toISOString(),
      slice_end: new Date(window.toMs).toISOString(),
    },
  );
}

/** Whether a table holds at least one row matching `where` with event time in the window (count, no FINAL needed). */
export async function hasRows(
  store: Store,
  table: 'spread_samples' | 'latency_samples',
  window: TimeWindow,
  where: Sql,
): Promise<boolean> {
  const statement =
    table === 'spread_samples'
      ? sql`SELECT count(*) AS n FROM spread_samples WHERE ${where} AND ${timeRange(sql`ts`, sql`ts_ms`, window.fromMs, window.toMs)}`
      : sql`SELECT count(*) AS n FROM latency_samples WHERE ${where} AND ${timeRange(sql`ts`, sql`ts_ms`, window.fromMs, window.toMs)}`;
  const [row] = await store.query(statement);
  return num(row?.n ?? 0) > 0;
}

/** Market-data `source` text: the venues, then whether live or simulated (the configured source when no row said). */
export function sourceText(
  venues: readonly string[],
  label: string | undefined,
  configured: 'live' | 'simulated',
): string {
  const unique = [...new Set(venues.filter(Boolean))];
  return `${unique.length ? unique.join('+') : 'unknown venues'} (${label ?? configured})`;
}

/** The venues of a pair: the CEX, then its Base pools. */
export function pairVenues(cexVenue: string, pools: readonly { venue: string }[]): string[] {
  return [cexVenue, ...pools.map((p) => p.venue)];
}
