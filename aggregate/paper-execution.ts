/**
 * Paper executions run from the store (not from the bus): PaperExecutor
 * scans the unresolved profitable decisions, reads the quotes, latency
 * samples and watermarks they need in a few store round trips, applies the
 * pure model (paper-fill-model.ts: decision, leg latency, arrival, fill,
 * re-exported here) and writes the rows it could decide. A decision whose
 * inputs are not complete yet stays for a later run; stateless apart from a
 * scan cursor, so a restart only rescans a little and the rows come out the
 * same whenever, and however often, it runs.
 */
import type { Logger } from '../core/logger.js';
import { errorMessage } from '../core/errors.js';
import type { Store } from '../core/store/store.js';
import {
  actionableWithoutExecution,
  latestOpenedMs,
  type ActionableRevision,
} from '../core/store/tables/dislocations.js';
import {
  latencySamplesInRange,
  latencyWatermarks,
  type LatencyKind,
  type LatencyPoint,
} from '../core/store/tables/latency-samples.js';
import {
  insertPaperExecutions,
  latestExecutionMs,
  type PaperExecution,
} from '../core/store/tables/paper-executions.js';
import { quotesInWindows, quoteWatermarks, type QuoteWindow } from '../core/store/tables/quotes.js';
import {
  DEFAULT_PAPER_OPTIONS,
  latestAtOrBefore,
  paperExecute,
  type PaperExecutionOptions,
} from './paper-fill-model.js';

export {
  DEFAULT_PAPER_OPTIONS,
  paperExecute,
  type PaperExecutionOptions,
  type PaperInputs,
} from './paper-fill-model.js';

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
export function quoteWindows(
  batch: readonly ActionableRevision[],
  latency: ReadonlyMap<LatencyKind, readonly LatencyPoint[]>,
  o: PaperExecutionOptions,
): QuoteWindow[] {
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
      const execution = paperExecute(
        c,
        { quotes: quotesByPair.get(c.pair) ?? [], latency, latencyWatermarks: latencyWm, quoteWatermarks: wm },
        o,
      );
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
  private async quoteWatermarks(
    batch: readonly ActionableRevision[],
    sinceMs: number,
    bound: number,
  ): Promise<Map<string, number>> {
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
      for (const [key, ms] of await quoteWatermarks(this.store, stale, Math.max(sinceMs, from)))
        known.set(key, Math.max(known.get(key) ?? 0, ms));
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
