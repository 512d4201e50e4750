/**
 * What the public dashboard shows: a preview that does not replace the paid
 * routes. Every number here is a statistic no paid route sells, at a coarser
 * resolution, or later than the paid routes serve it (docs/routes.md, "The free
 * tier"; test/integration/dashboard-free-tier.test.ts compares it with the
 * paid handlers' answers on the same store):
 *
 *   - spread: the hourly MEDIAN raw spread of one pair, to 0.5 bp (the paid
 *     candles sell open/high/low/close of the raw spread and the mean/max net
 *     spread, never a median); the current hour is included, marked `open`;
 *   - tape: the newest 10 dislocations of the pair opened at least an hour ago
 *     (FREE_TAPE_DELAY_MS, or DASHBOARD_DELAY_SECONDS if longer), each with its
 *     minute, direction and net spread BAND only (NET_SPREAD_BANDS: no number; the
 *     paid route sells venues, prices, net spread to 0.01 bp, profit, depth,
 *     capacity, duration);
 *   - latency: one median round trip per venue kind per CLOSED hour with samples
 *     in more than one 15-minute slice, whole ms (the paid route sells
 *     p50/p90/p99/min/max/avg per 15-minute slice).
 *
 * Shadow capacity is not previewed (it is the paid shadow-capacity route).
 * Everything ends DASHBOARD_DELAY_SECONDS before now and starts
 * DASHBOARD_WINDOW_HOURS earlier (hour-aligned). `data_to` is the newest
 * sample's event time in that window, not the clock.
 */
import type { Store } from '../../core/store/store.js';
import { final, sql } from '../../core/store/sql.js';
import { BASE_SLICE_MS, intDiv, num, timeRange } from '../../core/store/tables/query-helpers.js';
import { isDexVenue, opportunitiesInSlice } from '../../core/store/tables/dislocations.js';
import { exactQuantile, type LatencyKind } from '../../core/store/tables/latency-samples.js';

export const HOUR_MS = 3_600_000;
/** The tape is at least this late: the paid dislocations route sells the fresh ones. */
export const FREE_TAPE_DELAY_MS = HOUR_MS;
export const FREE_TAPE_LENGTH = 10;
/** Resolution of the free spread median, bp. */
export const FREE_SPREAD_STEP_BPS = 0.5;

export interface DashboardWindow {
  fromMs: number;
  toMs: number;
}

export interface SpreadPoint {
  /** Hour start, UNIX seconds (what the chart library takes). */
  time: number;
  median_raw_spread_bps: number;
  /** The hour had not ended at the window's end: the value can still move. */
  open: boolean;
}

export interface TapeItem {
  /** Opening time, to the minute. */
  time: string;
  pair: string;
  direction: 'CEX->DEX' | 'DEX->CEX' | 'CEX->CEX' | 'DEX->DEX';
  /** Net spread at opening, as a band (NET_SPREAD_BANDS), not a number. */
  net_spread_band_bps: NetSpreadBand;
}

/** The tape's net spread bands, bp: lower bound inclusive, upper exclusive. */
export const NET_SPREAD_BANDS = ['<0', '0-5', '5-10', '10-25', '>=25'] as const;
export type NetSpreadBand = (typeof NET_SPREAD_BANDS)[number];

export function netSpreadBand(bps: number): NetSpreadBand {
  if (bps < 0) return '<0';
  if (bps < 5) return '0-5';
  if (bps < 10) return '5-10';
  if (bps < 25) return '10-25';
  return '>=25';
}

export interface LatencyPoint {
  /** Hour start, UNIX seconds. */
  time: number;
  median_ms: number;
}

export interface MarketView {
  window: {
    from: string;
    to: string;
    delay_seconds: number;
    /** Event time of the newest spread sample of the pair in the window; null before the first. */
    data_to: string | null;
  };
  spread: {
    pair: string;
    resolution: '1h';
    points: SpreadPoint[];
    /** When the open hour closes and is shown final (its end plus the delay). */
    next_close_at: string;
  };
  tape: { pair: string; delay_seconds: number; items: TapeItem[] };
  latency: { resolution: '1h'; cex_rest: LatencyPoint[]; dex_rpc: LatencyPoint[] };
}

const step = (v: number, size: number) => Math.round(v / size) * size;
const seconds = (ms: number) => Math.floor(ms / 1000);
const iso = (ms: number) => new Date(ms).toISOString();

/** The window the dashboard may show at `nowMs`: hour-aligned start, `delaySeconds` before now at the end. */
export function dashboardWindow(nowMs: number, delaySeconds: number, windowHours: number): DashboardWindow {
  const toMs = nowMs - delaySeconds * 1000;
  return { fromMs: Math.floor((toMs - windowHours * HOUR_MS) / HOUR_MS) * HOUR_MS, toMs };
}

/** Hourly median raw spread of one pair (0.5 bp) and the newest sample's event time, one grouped query. */
export async function spreadMedians(
  store: Store,
  pair: string,
  w: DashboardWindow,
): Promise<{ points: SpreadPoint[]; newestMs: number | null }> {
  if (w.toMs <= w.fromMs) return { points: [], newestMs: null };
  const rows = await store.query(sql`
    SELECT ${intDiv(sql`ts_ms`, HOUR_MS)} AS h, ${exactQuantile(0.5, sql`raw_spread_bps`)} AS q_median,
      max(ts_ms) AS q_newest
    FROM spread_samples ${final}
    WHERE pair = ${pair} AND ${timeRange(sql`ts`, sql`ts_ms`, w.fromMs, w.toMs)}
    GROUP BY h
    ORDER BY h`);
  const points = rows.map((r) => {
    const start = num(r.h) * HOUR_MS;
    return {
      time: seconds(start),
      // + 0 turns a -0 into 0.
      median_raw_spread_bps: step(num(r.q_median), FREE_SPREAD_STEP_BPS) + 0,
      open: start + HOUR_MS > w.toMs,
    };
  });
  const newest = rows.length ? Math.max(...rows.map((r) => num(r.q_newest))) : null;
  return { points, newestMs: newest };
}

/** The pair's newest dislocations opened before `toMs` (itself at least FREE_TAPE_DELAY_MS late): minute, direction, band. */
export async function tapeItems(store: Store, pair: string, fromMs: number, toMs: number): Promise<TapeItem[]> {
  if (toMs <= fromMs) return [];
  const opportunities = (await opportunitiesInSlice(store, fromMs, toMs, pair)).filter((o) => o.opened_at_ms < toMs);
  return opportunities
    .sort((a, b) => b.opened_at_ms - a.opened_at_ms)
    .slice(0, FREE_TAPE_LENGTH)
    .map((o) => ({
      time: iso(Math.floor(o.opened_at_ms / 60_000) * 60_000),
      pair: o.pair,
      direction: `${isDexVenue(o.buy_venue) ? 'DEX' : 'CEX'}->${isDexVenue(o.sell_venue) ? 'DEX' : 'CEX'}`,
      net_spread_band_bps: netSpreadBand(o.net_spread_bps),
    }));
}

/** Median round trip (nearest rank, as the paid route) of one venue kind per closed hour of the window, whole ms. */
export async function latencyMedians(store: Store, kind: LatencyKind, w: DashboardWindow): Promise<LatencyPoint[]> {
  const closedTo = Math.floor(w.toMs / HOUR_MS) * HOUR_MS;
  if (closedTo <= w.fromMs) return [];
  const rows = await store.query(sql`
    SELECT ${intDiv(sql`ts_ms`, HOUR_MS)} AS h, ${exactQuantile(0.5, sql`rtt_ms`)} AS q_median,
      min(ts_ms) AS q_first, max(ts_ms) AS q_last
    FROM latency_samples ${final}
    WHERE kind = ${kind} AND ok = 1 AND ${timeRange(sql`ts`, sql`ts_ms`, w.fromMs, closedTo)}
    GROUP BY h
    ORDER BY h`);
  // An hour whose samples all fall in one 15-minute slice would show that slice's median, which the paid route sells.
  const slice = (ms: unknown) => Math.floor(num(ms) / BASE_SLICE_MS);
  return rows
    .filter((r) => slice(r.q_first) !== slice(r.q_last))
    .map((r) => ({ time: seconds(num(r.h) * HOUR_MS), median_ms: Math.round(num(r.q_median)) }));
}

/** Everything the market panels show for one pair. */
export async function marketView(
  store: Store,
  pair: string,
  w: DashboardWindow,
  delaySeconds: number,
): Promise<MarketView> {
  const tapeDelayMs = Math.max(FREE_TAPE_DELAY_MS, delaySeconds * 1000);
  const tapeTo = w.toMs + delaySeconds * 1000 - tapeDelayMs;
  const [spread, tape, cex, dex] = await Promise.all([
    spreadMedians(store, pair, w),
    tapeItems(store, pair, w.fromMs, tapeTo),
    latencyMedians(store, 'cex_rest', w),
    latencyMedians(store, 'dex_rpc', w),
  ]);
  const openHourEnd = Math.floor(w.toMs / HOUR_MS) * HOUR_MS + HOUR_MS;
  return {
    window: {
      from: iso(w.fromMs),
      to: iso(w.toMs),
      delay_seconds: delaySeconds,
      data_to: spread.newestMs === null ? null : iso(spread.newestMs),
    },
    spread: {
      pair,
      resolution: '1h',
      points: spread.points,
      next_close_at: iso(openHourEnd + delaySeconds * 1000),
    },
    tape: { pair, delay_seconds: Math.round(tapeDelayMs / 1000), items: tape },
    latency: { resolution: '1h', cex_rest: cex, dex_rpc: dex },
  };
}
