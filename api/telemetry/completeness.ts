/**
 * How complete a windowed telemetry answer is (spread-candles, dislocations,
 * execution-latency, shadow-capacity; docs/metrics.md section 9). Every such
 * answer, over every door (HTTP, MCP, A2A: they serve the same answer
 * object), carries three fields:
 *
 *   - `coverage_pct`: the share of the window the pipeline observed. The
 *     window is cut into UTC-aligned steps of COVERAGE_STEP_MS (15 s: 60 per
 *     slice); a step is covered when it holds at least one of the
 *     observations the answer is computed from (the pair's spread samples,
 *     every pair's without a pair; the successful latency samples, of the
 *     venue when filtered). Covered steps / steps of the window x 100, 2
 *     decimals. The steps of an open slice that have not happened yet count
 *     as uncovered: 35 at 09:05 of the 09:00 slice (5 of 15 minutes).
 *     15 s: the detector evaluates at the quote cadence (sub-second CEX
 *     ticks, a DEX block every 2 s) and the CEX latency probe runs every
 *     10 s, so a running pipeline fills every step; an outage, or legs too
 *     stale to compare, empties the steps it lasts.
 *   - `as_of`: event time of the newest of those observations (ISO 8601):
 *     the answer saw the window up to there. (A dislocation opened in the
 *     window is served at its latest revision, whose `updated_at` may be later.)
 *   - `complete`: the answer is final. The window ended
 *     TELEMETRY_CACHE_CLOSED_AFTER_MS ago on the wall clock AND the newest
 *     stored spread sample (of the pair; of any pair for the routes without
 *     one) is TELEMETRY_CACHE_DATA_MARGIN_MS past its end: the pipeline has
 *     moved on, nothing more lands in the window and the answer no longer
 *     changes. Not "fully covered": a closed window with a gap is complete,
 *     and its `coverage_pct` says how much the gap took. The closed-slice
 *     cache keeps windows by this same rule (closedThrough) and never keeps an
 *     answer that says `complete: false` (closed-slice-cache.ts, slice-blocks.ts).
 *
 * A window with no observation at all answers 404 `no_data_in_window` in the
 * pre-flight, before any challenge, never charged (window.ts).
 */
import { z } from 'zod';
import type { Config } from '../../core/config.js';
import { raw, sql, type Sql } from '../../core/store/sql.js';
import type { Store } from '../../core/store/store.js';
import { intDiv, num, timeRange } from '../../core/store/tables/query-helpers.js';
import { IsoTimestamp } from '../sku/schemas.js';
import type { SkuRuntime } from '../sku/sku.js';
import { PRECISION as P } from './precision.js';
import { coverageSpan, noDataInWindow, type TimeWindow } from './window.js';

/** The coverage step: a window of 15 minutes has 60. */
export const COVERAGE_STEP_MS = 15_000;

/** The rows an answer is computed from, whose presence per step is its coverage. */
export interface ObservationSource {
  table: 'spread_samples' | 'latency_samples';
  /** The route's own filter (pair, venue, `ok = 1`). */
  where: Sql;
  /** What they are, for the 404 text. */
  what: string;
}

/** The spread samples of a pair, or of every pair. */
export function spreadObservations(pair: string | undefined): ObservationSource {
  return pair === undefined
    ? { table: 'spread_samples', where: sql`1 = 1`, what: 'spread samples' }
    : { table: 'spread_samples', where: sql`pair = ${pair}`, what: `spread samples of ${pair}` };
}

/** What a window's observations say: covered steps and the newest event time. */
export interface Observed {
  steps: number;
  newestMs: number;
}

/** Covered steps and newest event time of the window; undefined when it holds no observation (count DISTINCT and max: no FINAL needed). */
export async function observeWindow(
  store: Store,
  source: ObservationSource,
  window: TimeWindow,
): Promise<Observed | undefined> {
  const [row] = await store.query(sql`
    SELECT count(*) AS n, count(DISTINCT ${intDiv(sql`ts_ms`, COVERAGE_STEP_MS)}) AS steps, max(ts_ms) AS newest
    FROM ${raw(source.table)}
    WHERE ${source.where} AND ${timeRange(sql`ts`, sql`ts_ms`, window.fromMs, window.toMs)}`);
  return row && num(row.n) > 0 ? { steps: num(row.steps), newestMs: num(row.newest) } : undefined;
}

/**
 * The same for consecutive windows of one length (a day block), in one grouped
 * query, by window start; windows without an observation are absent.
 */
export async function observeSlices(
  store: Store,
  source: ObservationSource,
  slices: readonly TimeWindow[],
): Promise<Map<number, Observed>> {
  const out = new Map<number, Observed>();
  if (!slices.length) return out;
  const sizeMs = slices[0]!.toMs - slices[0]!.fromMs;
  const rows = await store.query(sql`
    SELECT ${intDiv(sql`ts_ms`, sizeMs)} AS s, count(DISTINCT ${intDiv(sql`ts_ms`, COVERAGE_STEP_MS)}) AS steps,
      max(ts_ms) AS newest
    FROM ${raw(source.table)}
    WHERE ${source.where} AND ${timeRange(sql`ts`, sql`ts_ms`, slices[0]!.fromMs, slices[slices.length - 1]!.toMs)}
    GROUP BY s`);
  for (const r of rows) out.set(num(r.s) * sizeMs, { steps: num(r.steps), newestMs: num(r.newest) });
  return out;
}

/** The three fields every windowed answer carries (see the module comment). */
export interface Completeness {
  complete: boolean;
  as_of: string;
  coverage_pct: number;
}

/** The published schema of the three fields, spread into each windowed route's output schema. */
export const COMPLETENESS_FIELDS = {
  complete: z
    .boolean()
    .describe(
      'Final answer: the window has closed and the pipeline has moved past it, so it no longer changes. `false`: an open (or too recent) slice, served at the full price, whose numbers will still change',
    ),
  as_of: IsoTimestamp.describe('Event time of the newest observation the answer includes'),
  coverage_pct: z
    .number()
    .describe(
      'Share of the window the pipeline observed: 15-second steps holding at least one observation / steps of the window x 100 (2 decimals); the part of an open slice still to come counts as not covered',
    ),
};

/** What every windowed route's description says of its refusals and of these fields (published in discovery, OpenAPI, MCP). */
export const WINDOWED_ANSWER_TERMS =
  '404 (no charge) outside coverage and for a window without data. Every answer says how final it is: `complete`, `as_of` (newest event included) and `coverage_pct` (share of the window observed); an open slice (the current one, the default without `date`) costs the full price and answers `complete: false`: its numbers still change. Range query: `from`/`to` (ISO 8601 UTC, on slice boundaries, up to 24 slices) instead of `date`/`time` answers `slices` (each exactly the single-slice answer) and `missing` (not charged), with the completeness of the whole range; charged per slice answered, at most 0.2 USD a call.';

/** The fields of a window from its observations and whether it is closed. */
export function completenessOf(window: TimeWindow, observed: Observed, complete: boolean): Completeness {
  const steps = Math.round((window.toMs - window.fromMs) / COVERAGE_STEP_MS);
  return {
    complete,
    as_of: new Date(observed.newestMs).toISOString(),
    coverage_pct: P.pct(Math.min(100, (observed.steps / steps) * 100)),
  };
}

export interface ClosedRule {
  /** A window is closed once it ended this long ago on the wall clock... */
  closedAfterMs: number;
  /** ...and the newest stored data is this far past its end. */
  dataMarginMs: number;
}

export const closedRuleOf = (
  config: Pick<Config, 'TELEMETRY_CACHE_CLOSED_AFTER_MS' | 'TELEMETRY_CACHE_DATA_MARGIN_MS'>,
): ClosedRule => ({
  closedAfterMs: config.TELEMETRY_CACHE_CLOSED_AFTER_MS,
  dataMarginMs: config.TELEMETRY_CACHE_DATA_MARGIN_MS,
});

/** The end of the newest closed window: a window ending at or before it is complete (and may be cached). */
export function closedThrough(nowMs: number, latestStoredMs: number, rule: ClosedRule): number {
  return Math.min(nowMs - rule.closedAfterMs, latestStoredMs - rule.dataMarginMs);
}

/**
 * The completeness of one window, read now: its observations and the stored
 * span of `coveragePair` (the one the pre-flight read, cached for seconds: a
 * span read a little early only delays `complete`). A window without any
 * observation is the pre-flight's refusal (data removed in between).
 */
export async function windowCompleteness(
  runtime: Pick<SkuRuntime, 'store' | 'config' | 'now'>,
  window: TimeWindow,
  source: ObservationSource,
  coveragePair: string | undefined,
): Promise<Completeness> {
  const [observed, closedEnd] = await Promise.all([
    observeWindow(runtime.store, source, window),
    closedEndNow(runtime, coveragePair),
  ]);
  if (!observed) throw noDataInWindow(window, source.what);
  return completenessOf(window, observed, window.toMs <= closedEnd);
}

/**
 * closedThrough now, for the stored span of `coveragePair` (every pair's when
 * undefined), under the configured rule; -Infinity before any data.
 */
export async function closedEndNow(
  runtime: Pick<SkuRuntime, 'store' | 'config' | 'now'>,
  coveragePair: string | undefined,
): Promise<number> {
  const span = await coverageSpan(runtime.store, coveragePair);
  return span ? closedThrough(runtime.now(), span.latestMs, closedRuleOf(runtime.config)) : -Infinity;
}

/**
 * The completeness of one slice of a day block (slice-blocks.ts), from the
 * block's grouped observations and closedEndNow read once for the block (the
 * same rule as windowCompleteness, so a slice answers the same from a block
 * as alone); undefined for a slice without any observation (the pre-flight's
 * refusal).
 */
export function blockCompleteness(
  slice: TimeWindow,
  observed: ReadonlyMap<number, Observed>,
  closedEnd: number,
): Completeness | undefined {
  const o = observed.get(slice.fromMs);
  return o ? completenessOf(slice, o, slice.toMs <= closedEnd) : undefined;
}

/** Whether an answer says it is not final (any answer without the field is not a windowed one: no opinion). */
export function saysIncomplete(answer: unknown): boolean {
  return !!answer && typeof answer === 'object' && (answer as { complete?: unknown }).complete === false;
}
