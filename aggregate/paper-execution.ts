/**
 * Paper executions: would a desk that sent both legs of a detected
 * opportunity at the measured latencies still have made money?
 *
 * A paper execution is a deterministic function of stored rows, so it is
 * computed from the store (not from the bus) and is the same whenever, and
 * however often, it runs:
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
import type { Logger } from '../core/logger.js';
import { errorMessage } from '../core/errors.js';
import type { Store } from '../core/store/store.js';
import { actionableWithoutExecution, latestOpenedMs, type ActionableRevision } from '../core/store/tables/dislocations.js';
import { latencySamplesInRange, latencyWatermarks, type LatencyKind, type LatencyPoint } from '../core/store/tables/latency-samples.js';
import { insertPaperExecutions, latestExecutionMs, type PaperExecution } from '../core/store/tables/paper-executions.js';
import { quotesInWindows, quoteWatermarks, type QuoteWindow } from '../core/store/tables/quotes.js';
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
function latestAtOrBefore<T>(items: readonly T[], t: number, time: (x: T) => number): T | undefined {
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
export function paperExecute(c: ActionableRevision, inputs: PaperInputs, options: PaperExecutionOptions = DEFAULT_PAPER_OPTIONS): PaperExecution | undefined {
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
  if (buyLatency > options.maxLegLatencyMs || sellLatency > options.maxLegLatencyMs || !buyQ || !sellQ) return row(c, 'missed', base);
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
    id: c.numeric_id,
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

export interface PaperExecutorStatus {
  running: boolean;
  lastRunAt?: number;
  lastError?: string;
  executed: number;
  /** Decisions waiting for their inputs after the last run. */
  waiting: number;
}

/**
 * Decisions handled per store round trip, and the event-time span they may
 * cover. Each step scans the unresolved dislocations since its cursor, so
 * catching up through a backlog costs one scan per span: an hour (was ten
 * minutes: 84 scans of the whole table for 1M quotes in bench:pipeline).
 * The quotes read per step do not grow with the span (one window per
 * decision, quotesInWindows).
 */
const CANDIDATES_PER_RUN = 500;
const SPAN_PER_RUN_MS = 60 * 60_000;
/** How far back (opened_at) a run looks below its cursor: opportunities that turn profitable late. */
const LOOKBACK_MS = 3_600_000;
/** `pair|venue` -> [pair, venue] (pairs contain `/`, never `|`). */
const splitKey = (key: string): [string, string] => {
  const i = key.lastIndexOf('|');
  return [key.slice(0, i), key.slice(i + 1)];
};

/**
 * The quotes paperExecute can look at for these decisions, as merged windows
 * per pair: from `maxQuoteAgeMs` before the decision (older quotes are stale
 * for it) to the later of the two legs' arrivals (the latest latency sample
 * of each kind at the decision, as paperExecute takes them). Reading these
 * instead of the whole span of the batch reads a small part of the quotes when
 * decisions are sparse (a backfill: all of them, every run).
 */
export function quoteWindows(batch: readonly ActionableRevision[], latency: ReadonlyMap<LatencyKind, readonly LatencyPoint[]>, o: PaperExecutionOptions): QuoteWindow[] {
  const byPair = new Map<string, [number, number][]>();
  for (const c of batch) {
    const t0 = c.decided_at_ms;
    let reach = 0;
    for (const [kind, points] of latency) {
      const sample = latestAtOrBefore(points, t0, (p) => p.ts_ms);
      if (sample) reach = Math.max(reach, Math.round(sample.rtt_ms + (kind === 'dex_rpc' ? o.dexInclusionMs : 0)));
    }
    let list = byPair.get(c.pair);
    if (!list) byPair.set(c.pair, (list = []));
    list.push([t0 - o.maxQuoteAgeMs, t0 + reach + 1]);
  }
  const out: QuoteWindow[] = [];
  for (const [pair, list] of byPair) {
    list.sort((a, b) => a[0] - b[0]);
    let [from, to] = list[0]!;
    for (const [f, t] of list.slice(1)) {
      if (f <= to) to = Math.max(to, t);
      else {
        out.push({ pair, fromMs: from, toMs: to });
        [from, to] = [f, t];
      }
    }
    out.push({ pair, fromMs: from, toMs: to });
  }
  return out;
}

/**
 * Runs paper executions from the store: `runOnce()` handles every decision
 * whose inputs are complete; `start()` repeats it on a timer. Stateless apart
 * from a scan cursor (a lower bound of the opened_at of unresolved decisions),
 * so a restart only rescans a little.
 */
export class PaperExecutor {
  readonly status: PaperExecutorStatus = { running: false, executed: 0, waiting: 0 };
  private cursor: number | undefined;
  /** pair|venue -> the newest quote time seen (see quoteWatermarks). */
  private readonly knownQuoteWatermarks = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger | undefined,
    private readonly options: PaperExecutionOptions = DEFAULT_PAPER_OPTIONS,
  ) {}

  /** Executes everything that is ready; returns how many rows it wrote. */
  async runOnce(): Promise<number> {
    const run = this.current.then(() => this.drain());
    this.current = run.catch(() => undefined);
    return run;
  }

  private async drain(): Promise<number> {
    let written = 0;
    for (;;) {
      const { resolved, more } = await this.step();
      written += resolved;
      if (!more || resolved === 0) break;
    }
    this.status.executed += written;
    this.status.lastRunAt = Date.now();
    delete this.status.lastError;
    return written;
  }

  private async step(): Promise<{ resolved: number; more: boolean }> {
    if (this.cursor === undefined) {
      const latest = await latestExecutionMs(this.store);
      this.cursor = latest === undefined ? 0 : latest - LOOKBACK_MS;
    }
    const since = Math.max(0, this.cursor - LOOKBACK_MS);
    const candidates = await actionableWithoutExecution(this.store, since, CANDIDATES_PER_RUN);
    if (!candidates.length) {
      // Nothing unresolved: later scans start near the newest opportunity (LOOKBACK still covers late bloomers).
      this.status.waiting = 0;
      const newest = await latestOpenedMs(this.store);
      if (newest !== undefined) this.cursor = Math.max(this.cursor, newest);
      return { resolved: 0, more: false };
    }
    const first = candidates[0]!.decided_at_ms;
    const batch = candidates.filter((c) => c.decided_at_ms <= first + SPAN_PER_RUN_MS);
    const rest = candidates.slice(batch.length);
    const minT0 = first;
    const maxT0 = batch[batch.length - 1]!.decided_at_ms;
    const o = this.options;
    const horizon = maxT0 + o.maxLegLatencyMs + o.dexInclusionMs + 1;

    const [latencyWm, quoteWm, cex, dex] = await Promise.all([
      latencyWatermarks(this.store),
      this.quoteWatermarks(batch, minT0 - o.maxQuoteAgeMs, horizon + o.maxQuoteAgeMs + o.unmeasuredAfterMs + 1),
      latencySamplesInRange(this.store, 'cex_rest', minT0 - o.latencyLookbackMs, maxT0),
      latencySamplesInRange(this.store, 'dex_rpc', minT0 - o.latencyLookbackMs, maxT0),
    ]);
    const latency = new Map<LatencyKind, LatencyPoint[]>([
      ['cex_rest', cex],
      ['dex_rpc', dex],
    ]);
    const quotesByPair = await quotesInWindows(this.store, quoteWindows(batch, latency, o));
    const out: PaperExecution[] = [];
    const unresolved: ActionableRevision[] = [...rest];
    for (const c of batch) {
      const wm = new Map<string, number>();
      for (const [key, v] of quoteWm) if (key.startsWith(`${c.pair}|`)) wm.set(key.slice(c.pair.length + 1), v);
      const execution = paperExecute(c, { quotes: quotesByPair.get(c.pair) ?? [], latency, latencyWatermarks: latencyWm, quoteWatermarks: wm }, o);
      if (execution) out.push(execution);
      else unresolved.push(c);
    }
    await insertPaperExecutions(this.store, out);
    this.status.waiting = unresolved.length;
    if (unresolved.length) this.cursor = Math.min(...unresolved.map((c) => c.opened_at_ms));
    else if (candidates.length < CANDIDATES_PER_RUN) this.cursor = Math.max(...candidates.map((c) => c.opened_at_ms));
    return { resolved: out.length, more: rest.length > 0 || candidates.length === CANDIDATES_PER_RUN };
  }

  /**
   * Quote watermarks (pair|venue -> newest quote time) for the tests
   * paperExecute makes: "has the venue quoted past X?" with `sinceMs` <= X <
   * `bound`. A venue's newest quote only grows, so the newest seen so far is
   * kept: once it is past the bound, it decides every such test as the newest
   * quote overall would, and nothing is read. The store is asked only for the
   * pairs where some venue (or a decision's venue) is not known past the
   * bound, from the oldest of their known watermarks on: a backlog is read
   * about once instead of once per step (bench:pipeline), a live stream from
   * its last watermark. A watermark older than `sinceMs` answers those tests
   * as no watermark would (false).
   */
  private async quoteWatermarks(batch: readonly ActionableRevision[], sinceMs: number, bound: number): Promise<Map<string, number>> {
    const known = this.knownQuoteWatermarks;
    const venuesOf = new Map<string, Set<string>>();
    for (const c of batch) {
      let venues = venuesOf.get(c.pair);
      if (!venues) venuesOf.set(c.pair, (venues = new Set()));
      venues.add(c.buy_venue).add(c.sell_venue);
    }
    for (const [key] of known) {
      const [pair, venue] = splitKey(key);
      venuesOf.get(pair)?.add(venue);
    }
    const stale: string[] = [];
    let from = Infinity;
    for (const [pair, venues] of venuesOf) {
      let oldest = Infinity;
      for (const venue of venues) oldest = Math.min(oldest, known.get(`${pair}|${venue}`) ?? -Infinity);
      if (oldest > bound) continue;
      stale.push(pair);
      from = Math.min(from, oldest);
    }
    if (stale.length) {
      for (const [key, ms] of await quoteWatermarks(this.store, stale, Math.max(sinceMs, from))) known.set(key, Math.max(known.get(key) ?? 0, ms));
    }
    const out = new Map<string, number>();
    for (const [key, ms] of known) if (venuesOf.has(splitKey(key)[0])) out.set(key, ms);
    return out;
  }

  /** Runs every `intervalMs` until stop(); failures are logged and retried on the next tick. */
  start(intervalMs = 1000): void {
    if (this.status.running) return;
    this.status.running = true;
    const tick = async () => {
      try {
        await this.runOnce();
      } catch (err) {
        this.status.lastError = errorMessage(err);
        this.logger?.warn({ err: errorMessage(err) }, 'paper executions: run failed; retrying on the next tick');
      }
      if (this.status.running) this.timer = setTimeout(() => void tick(), intervalMs);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  async stop(): Promise<void> {
    this.status.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
  }
}
