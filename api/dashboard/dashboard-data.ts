/**
 * What the public dashboard shows, read from the store and made coarser and
 * later than the paid routes so it does not give the paid product away:
 *
 *   - every series ends DASHBOARD_DELAY_SECONDS before now and starts
 *     DASHBOARD_WINDOW_HOURS earlier (the paid routes answer any slice, to the
 *     newest sample, and any past day);
 *   - spread candles: the raw spread's 15-minute OHLC rounded to 0.1 bp, of whole
 *     slices only when delayed, nothing else (the paid candle adds net spread, depth and the dislocation count);
 *   - the dislocation tape: the newest 25 openings with direction (CEX->DEX or
 *     DEX->CEX), net spread to 0.1 bp, profit to the dollar, depth to $1,000;
 *     no venues, prices, ids or durations (the paid route has them all);
 *   - venue latency: p50/p90/p99 of each venue kind per 15 minutes, whole ms;
 *   - shadow capacity: volume tradable at a net profit per 15 minutes to $100
 *     (the paid route adds capture, uncaptured profit and capital per venue).
 *
 * Formulas are the paid routes' (docs/metrics.md); only resolution and reach differ.
 */
import type { Store } from '../../core/store/store.js';
import { BASE_SLICE_MS } from '../../core/store/tables/query-helpers.js';
import { spreadCandles } from '../../core/store/tables/spread-samples.js';
import { isDexVenue, opportunitiesInSlice } from '../../core/store/tables/dislocations.js';
import { latencySamplesInRange, type LatencyKind } from '../../core/store/tables/latency-samples.js';

export interface DashboardWindow {
  fromMs: number;
  toMs: number;
}

export interface CandlePoint {
  /** Slice start, UNIX seconds (what the chart library takes). */
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
}

export interface TapeItem {
  time: string;
  pair: string;
  direction: 'CEX->DEX' | 'DEX->CEX' | 'CEX->CEX' | 'DEX->DEX';
  net_spread_bps: number;
  est_profit_usd: number;
  liquidity_depth_usd: number;
  status: string;
}

export interface LatencyPoint {
  time: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  samples: number;
}

export interface CapacityPoint {
  time: number;
  available_volume_usd: number;
  opportunities: number;
}

export interface MarketView {
  window: { from: string; to: string; delay_seconds: number };
  candles: { pair: string; points: CandlePoint[] };
  tape: TapeItem[];
  latency: Record<'cex_rest' | 'dex_rpc', LatencyPoint[]>;
  capacity: CapacityPoint[];
}

const TAPE_LENGTH = 25;
const round = (v: number, step: number) => Math.round(v / step) * step;
const tenth = (v: number) => Math.round(v * 10) / 10;
const seconds = (ms: number) => Math.floor(ms / 1000);

/** The window the dashboard may show at `nowMs`. */
export function dashboardWindow(nowMs: number, delaySeconds: number, windowHours: number): DashboardWindow {
  const toMs = nowMs - delaySeconds * 1000;
  return { fromMs: Math.floor((toMs - windowHours * 3_600_000) / BASE_SLICE_MS) * BASE_SLICE_MS, toMs };
}

/**
 * The raw spread's 15-minute OHLC of one pair, rounded to 0.1 bp. With a delay, only the slices that
 * ended by the window's end (a slice is read whole); without one, the current slice so far too.
 */
export async function candlePoints(
  store: Store,
  pair: string,
  w: DashboardWindow,
  delaySeconds: number,
): Promise<CandlePoint[]> {
  const toMs = delaySeconds > 0 ? Math.floor(w.toMs / BASE_SLICE_MS) * BASE_SLICE_MS : w.toMs;
  if (toMs <= w.fromMs) return [];
  const candles = await spreadCandles(store, pair, w.fromMs, toMs, '15m');
  return candles.map((c) => ({
    time: seconds(Date.parse(c.slice_start)),
    open: tenth(c.open_raw_spread_bps),
    high: tenth(c.high_raw_spread_bps),
    low: tenth(c.low_raw_spread_bps),
    close: tenth(c.close_raw_spread_bps),
  }));
}

/** The tape (newest openings first) and the capacity per 15 minutes, from one read of the window's opportunities. */
export async function tapeAndCapacity(
  store: Store,
  w: DashboardWindow,
): Promise<{ tape: TapeItem[]; capacity: CapacityPoint[] }> {
  const opportunities = (await opportunitiesInSlice(store, w.fromMs, w.toMs)).filter((o) => o.opened_at_ms < w.toMs);
  const tape = opportunities
    .slice(-TAPE_LENGTH)
    .reverse()
    .map((o): TapeItem => ({
      time: new Date(Math.floor(o.opened_at_ms / 1000) * 1000).toISOString(),
      pair: o.pair,
      direction: `${isDexVenue(o.buy_venue) ? 'DEX' : 'CEX'}->${isDexVenue(o.sell_venue) ? 'DEX' : 'CEX'}`,
      net_spread_bps: tenth(o.net_spread_bps),
      est_profit_usd: Math.round(o.est_profit_usd),
      liquidity_depth_usd: round(o.liquidity_depth_usd, 1000),
      status: o.status,
    }));
  const buckets = new Map<number, CapacityPoint>();
  for (const o of opportunities) {
    const start = Math.floor(o.opened_at_ms / BASE_SLICE_MS) * BASE_SLICE_MS;
    let b = buckets.get(start);
    if (!b) buckets.set(start, (b = { time: seconds(start), available_volume_usd: 0, opportunities: 0 }));
    b.available_volume_usd += o.peak_capacity_usd;
    b.opportunities += 1;
  }
  const capacity = [...buckets.values()]
    .sort((a, b) => a.time - b.time)
    .map((b) => ({ ...b, available_volume_usd: round(b.available_volume_usd, 100) }));
  return { tape, capacity };
}

/** p50/p90/p99 (nearest rank, as execution-latency) of one venue kind per 15 minutes, whole ms. */
export async function latencyPoints(store: Store, kind: LatencyKind, w: DashboardWindow): Promise<LatencyPoint[]> {
  const samples = await latencySamplesInRange(store, kind, w.fromMs, w.toMs - 1);
  const buckets = new Map<number, number[]>();
  for (const s of samples) {
    const start = Math.floor(s.ts_ms / BASE_SLICE_MS) * BASE_SLICE_MS;
    let list = buckets.get(start);
    if (!list) buckets.set(start, (list = []));
    list.push(s.rtt_ms);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, values]) => {
      values.sort((a, b) => a - b);
      const rank = (q: number) =>
        Math.round(values[Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1))]!);
      return { time: seconds(start), p50_ms: rank(0.5), p90_ms: rank(0.9), p99_ms: rank(0.99), samples: values.length };
    });
}

/** Everything the market panels show for one pair. */
export async function marketView(
  store: Store,
  pair: string,
  w: DashboardWindow,
  delaySeconds: number,
): Promise<MarketView> {
  const [points, { tape, capacity }, cex, dex] = await Promise.all([
    candlePoints(store, pair, w, delaySeconds),
    tapeAndCapacity(store, w),
    latencyPoints(store, 'cex_rest', w),
    latencyPoints(store, 'dex_rpc', w),
  ]);
  return {
    window: { from: new Date(w.fromMs).toISOString(), to: new Date(w.toMs).toISOString(), delay_seconds: delaySeconds },
    candles: { pair, points },
    tape,
    latency: { cex_rest: cex, dex_rpc: dex },
    capacity,
  };
}
