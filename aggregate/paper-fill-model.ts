/**
 * The paper-execution model, pure: would a desk that sent both legs of a detected
 * opportunity at the measured latencies still have made money?
 *
 * A paper execution is a deterministic function of stored rows (the runner,
 * paper-execution.ts, reads them from the store), so it is the same whenever,
 * and however often, it runs:
 *  - decision: the first revision of an opportunity that is profitable at
 *    some size (status OPPORTUNITY, capacity > 0) at time t0 = its
 *    updated_at_ms; size = its profit_size_usd (the most profitable ladder
 *    size);
 *  - latency of a leg: the newest successful latency sample of the leg's
 *    kind (CEX leg: `cex_rest`, DEX leg: `dex_rpc`) with event time <= t0
 *    and >= t0 - 1 h; a DEX leg also waits `dexInclusionMs` (one Base block)
 *    to be mined. No such sample: outcome `unmeasured`;
 *  - arrival of a leg: t0 + its latency; the quote in effect then is the
 *    newest stored quote of (pair, venue) with event time <= arrival;
 *  - fill: realised_raw_bps = (sell price at size - buy price at size) /
 *    buy price at size x 1e4 from the arrival quotes' ladders,
 *    realised_net_bps = realised_raw - fees - gas (spread-math.ts), filled
 *    when realised_net_bps > 0 (legs priced to break even: the trade still
 *    paid); `missed` otherwise, or when a leg's quote is older than
 *    maxQuoteAgeMs at arrival, the size is not fillable, or a leg takes
 *    longer than maxLegLatencyMs.
 * It runs only once its inputs are complete: the latency kind has a stored
 * sample newer than t0, and each venue a stored quote newer than the leg's
 * arrival (per key, events arrive in order, so nothing older is still
 * missing). A venue that stays silent for maxQuoteAgeMs after arrival while
 * the pair's other venue quotes counts as stale (missed); a latency kind
 * silent for `unmeasuredAfterMs` of quote time counts as unmeasured.
 */
import type { QuoteEvent } from '../core/events/market.js';
import type { ActionableRevision } from '../core/store/tables/dislocations.js';
import type { LatencyKind, LatencyPoint } from '../core/store/tables/latency-samples.js';
import type { PaperExecution } from '../core/store/tables/paper-executions.js';
import { DEFAULT_MAX_QUOTE_AGE_MS } from './dislocation-detector.js';
import { extraFeeBps, priceAtSize } from './spread-math.js';

export interface PaperExecutionOptions {
  /** Added to a DEX leg's RPC round trip: waiting for inclusion in the next Base block. */
  dexInclusionMs: number;
  /** A leg slower than this misses. */
  maxLegLatencyMs: number;
  maxQuoteAgeMs: number;
  /** Latency samples older than this before the decision are not "the latest measured latency". */
  latencyLookbackMs: number;
  /** Quote time after which a still-missing latency kind makes the execution `unmeasured`. */
  unmeasuredAfterMs: number;
}

export const DEFAULT_PAPER_OPTIONS: PaperExecutionOptions = {
  dexInclusionMs: 2000,
  maxLegLatencyMs: 10_000,
  maxQuoteAgeMs: DEFAULT_MAX_QUOTE_AGE_MS,
  latencyLookbackMs: 3_600_000,
  unmeasuredAfterMs: 600_000,
};

/** What one decision needs from the store, already fetched. */
export interface PaperInputs {
  /** Quotes of the decision's pair, oldest first (ties by event_id). */
  quotes: readonly QuoteEvent[];
  /** Successful latency samples per kind, oldest first. */
  latency: ReadonlyMap<LatencyKind, readonly LatencyPoint[]>;
  latencyWatermarks: ReadonlyMap<LatencyKind, number>;
  /** Newest stored quote time per venue of the pair. */
  quoteWatermarks: ReadonlyMap<string, number>;
}

const kindOf = (venueKind: QuoteEvent['venue_kind']): LatencyKind => (venueKind === 'dex' ? 'dex_rpc' : 'cex_rest');

/** Newest element with `time(x) <= t` in a list sorted by time, or undefined. */
export function latestAtOrBefore<T>(items: readonly T[], t: number, time: (x: T) => number): T | undefined {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (time(items[mid]!) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo ? items[lo - 1] : undefined;
}

const quoteAt = (quotes: readonly QuoteEvent[], venue: string, t: number) =>
  latestAtOrBefore(
    quotes.filter((q) => q.venue === venue),
    t,
    (q) => q.event_time_ms,
  );

/**
 * The paper execution of one decision, or undefined while its inputs are
 * incomplete (try again later). Pure: same inputs, same row.
 */
export function paperExecute(
  c: ActionableRevision,
  inputs: PaperInputs,
  options: PaperExecutionOptions = DEFAULT_PAPER_OPTIONS,
): PaperExecution | undefined {
  const t0 = c.decided_at_ms;
  const buy0 = quoteAt(inputs.quotes, c.buy_venue, t0);
  const sell0 = quoteAt(inputs.quotes, c.sell_venue, t0);
  const pairWatermark = Math.max(0, ...inputs.quoteWatermarks.values());
  if (!buy0 || !sell0) {
    // The quotes that made the decision are not stored yet (the raw sink lags) or never will be.
    return pairWatermark > t0 + options.unmeasuredAfterMs ? row(c, 'unmeasured', { buy0, sell0 }) : undefined;
  }

  const legs: { venue: string; kind: LatencyKind; dex: boolean }[] = [
    { venue: c.buy_venue, kind: kindOf(buy0.venue_kind), dex: buy0.venue_kind === 'dex' },
    { venue: c.sell_venue, kind: kindOf(sell0.venue_kind), dex: sell0.venue_kind === 'dex' },
  ];
  const latencies: number[] = [];
  for (const leg of legs) {
    const watermark = inputs.latencyWatermarks.get(leg.kind);
    if (watermark === undefined || watermark <= t0) {
      return pairWatermark > t0 + options.unmeasuredAfterMs ? row(c, 'unmeasured', { buy0, sell0 }) : undefined;
    }
    const sample = latestAtOrBefore(inputs.latency.get(leg.kind) ?? [], t0, (s) => s.ts_ms);
    if (!sample || sample.ts_ms < t0 - options.latencyLookbackMs) return row(c, 'unmeasured', { buy0, sell0 });
    latencies.push(sample.rtt_ms + (leg.dex ? options.dexInclusionMs : 0));
  }
  const [buyLatency, sellLatency] = latencies as [number, number];
  const buyArrival = t0 + Math.round(buyLatency);
  const sellArrival = t0 + Math.round(sellLatency);

  // Each leg's quote in effect at arrival, once the venue has quoted past it (or is stale).
  const arrivals: (QuoteEvent | null)[] = [];
  for (const [venue, arrival] of [
    [c.buy_venue, buyArrival],
    [c.sell_venue, sellArrival],
  ] as const) {
    const watermark = inputs.quoteWatermarks.get(venue) ?? 0;
    if (watermark > arrival) {
      const q = quoteAt(inputs.quotes, venue, arrival);
      arrivals.push(q && q.event_time_ms >= arrival - options.maxQuoteAgeMs ? q : null);
    } else if (pairWatermark > arrival + options.maxQuoteAgeMs) {
      arrivals.push(null); // the venue went silent: stale
    } else {
      return undefined;
    }
  }
  const [buyQ, sellQ] = arrivals as [QuoteEvent | null, QuoteEvent | null];
  const base = { buy0, sell0, buyLatency, sellLatency, buyArrival, sellArrival, buyQ, sellQ };
  if (buyLatency > options.maxLegLatencyMs || sellLatency > options.maxLegLatencyMs || !buyQ || !sellQ)
    return row(c, 'missed', base);
  const buyPrice = priceAtSize(buyQ.ladder, c.profit_size_usd, 'buy');
  const sellPrice = priceAtSize(sellQ.ladder, c.profit_size_usd, 'sell');
  if (buyPrice === null || sellPrice === null) return row(c, 'missed', base);
  const raw = ((sellPrice - buyPrice) / buyPrice) * 1e4;
  const fees = extraFeeBps(buyQ) + extraFeeBps(sellQ);
  const gas = (((buyQ.gas_usd ?? 0) + (sellQ.gas_usd ?? 0)) / c.profit_size_usd) * 1e4;
  const net = raw - fees - gas;
  return row(c, net > 0 ? 'filled' : 'missed', { ...base, buyPrice, sellPrice, raw, net });
}

function row(
  c: ActionableRevision,
  outcome: PaperExecution['outcome'],
  x: {
    buy0?: QuoteEvent | undefined;
    sell0?: QuoteEvent | undefined;
    buyLatency?: number;
    sellLatency?: number;
    buyArrival?: number;
    sellArrival?: number;
    buyQ?: QuoteEvent | null;
    sellQ?: QuoteEvent | null;
    buyPrice?: number;
    sellPrice?: number;
    raw?: number;
    net?: number;
  },
): PaperExecution {
  const size = c.profit_size_usd;
  const quotedBuy = x.buy0 ? priceAtSize(x.buy0.ladder, size, 'buy') : null;
  const quotedSell = x.sell0 ? priceAtSize(x.sell0.ladder, size, 'sell') : null;
  return {
    opportunity_id: c.opportunity_id,
    id: c.id,
    revision: c.revision,
    pair: c.pair,
    buy_venue: c.buy_venue,
    sell_venue: c.sell_venue,
    decided_at_ms: c.decided_at_ms,
    size_usd: size,
    quoted_buy_price: quotedBuy ?? 0,
    quoted_sell_price: quotedSell ?? 0,
    quoted_net_bps: c.net_spread_bps,
    buy_latency_ms: x.buyLatency ?? 0,
    sell_latency_ms: x.sellLatency ?? 0,
    buy_arrival_ms: x.buyArrival ?? c.decided_at_ms,
    sell_arrival_ms: x.sellArrival ?? c.decided_at_ms,
    buy_quote_event_id: x.buyQ?.event_id ?? '',
    sell_quote_event_id: x.sellQ?.event_id ?? '',
    fill_buy_price: x.buyPrice ?? null,
    fill_sell_price: x.sellPrice ?? null,
    realised_raw_bps: x.raw ?? null,
    realised_net_bps: x.net ?? null,
    realised_profit_usd: x.net === undefined ? null : (size * x.net) / 1e4,
    outcome,
    filled: outcome === 'filled' ? 1 : 0,
    source: c.source,
  };
}
