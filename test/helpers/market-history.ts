/**
 * Simulated market history written the way the pipeline writes it: the
 * seeded simulator (ingest/simulator) at a coarse tick, its quotes driven
 * in-process through the real dislocation detector and the real
 * paper-execution function, every table written with its own insert
 * function, one simulated day per batch (the next day is generated while the
 * previous one is inserted). Used by `npm run bench:api` (30 days x 13 pairs)
 * and by tests that need realistic telemetry over a day or two.
 */
import type { Config } from '../../core/config.js';
import { errorMessage, isRetryable } from '../../core/errors.js';
import type { BookEvent, LatencyEvent, QuoteEvent } from '../../core/events/market.js';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import type { Store } from '../../core/store/store.js';
import { insertBookSnapshots } from '../../core/store/tables/book-snapshots.js';
import { insertDislocations, type ActionableRevision } from '../../core/store/tables/dislocations.js';
import { insertLatencySamples, type LatencyKind, type LatencyPoint } from '../../core/store/tables/latency-samples.js';
import { insertPaperExecutions, type PaperExecution } from '../../core/store/tables/paper-executions.js';
import { insertQuotes } from '../../core/store/tables/quotes.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { TOPICS } from '../../core/topics.js';
import {
  applyQuote,
  DEFAULT_MAX_QUOTE_AGE_MS,
  emptyPairState,
  type DislocationRecord,
  type PairState,
  type SpreadSample,
} from '../../aggregate/dislocation-detector.js';
import { DEFAULT_PAPER_OPTIONS, paperExecute } from '../../aggregate/paper-execution.js';
import { MarketSimulator } from '../../ingest/simulator/market-simulator.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const INSERT_BATCH = 100_000;

export interface MarketHistoryPlan {
  /** Simulator seed. */
  seed: number;
  /** Simulator tick (CEX tick, block time and latency probe), ms. */
  tickMs: number;
  startMs: number;
  endMs: number;
}

const seconds = (t0: number) => (performance.now() - t0) / 1000;
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Index of the first element with time >= t (time-sorted list). */
function lowerBound<T>(items: readonly T[], t: number, time: (x: T) => number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (time(items[mid]!) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Batches of INSERT_BATCH rows. A batch whose connection broke before the server answered (a reused keep-alive
 * socket the server had just closed: EPIPE / ECONNRESET on a loaded machine) is sent again, up to 3 times.
 */
export async function insertInBatches<T>(rows: T[], insert: (batch: T[]) => Promise<void>): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const batch = rows.slice(i, i + INSERT_BATCH);
    for (let attempt = 1; ; attempt++) {
      try {
        await insert(batch);
        break;
      } catch (err) {
        if (attempt >= 3 || !isRetryable(err) || !/EPIPE|ECONNRESET|socket hang up/.test(errorMessage(err))) throw err;
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }
}

/**
 * The simulator, one simulated day per batch, through the detector (spread
 * samples, dislocation revisions) and paper executions (the first profitable
 * revision of each opportunity, once its legs' arrival quotes exist). One
 * day's inserts run while the next day is generated.
 */
export async function seedMarketHistory(
  store: Store,
  pairs: PairsCatalogue,
  config: Config,
  plan: MarketHistoryPlan,
  progress: (day: number, text: string) => void = () => undefined,
): Promise<{ generateS: number; insertWaitS: number }> {
  const tick = plan.tickMs;
  const sim = new MarketSimulator(pairs, {
    seed: plan.seed,
    startMs: plan.startMs,
    cexVenue: config.CEX_EXCHANGE,
    ladderUsd: config.DEX_LADDER_USD,
    cexTickMs: tick,
    blockMs: tick,
    probeMs: tick,
    bookDepth: config.CEX_BOOK_DEPTH,
    bookEveryTicks: Math.max(1, Math.round(HOUR_MS / tick)),
  });
  const detector = { maxQuoteAgeMs: DEFAULT_MAX_QUOTE_AGE_MS };
  const paper = DEFAULT_PAPER_OPTIONS;
  const states = new Map<string, PairState>();
  const decided = new Set<string>();
  let pending: ActionableRevision[] = [];
  const latency = new Map<LatencyKind, LatencyPoint[]>([
    ['cex_rest', []],
    ['dex_rpc', []],
  ]);
  const latencyWm = new Map<LatencyKind, number>();
  let previous = new Map<string, QuoteEvent[]>();
  let inFlight: Promise<void> = Promise.resolve();
  let generateS = 0;
  let insertWaitS = 0;
  const yieldNow = () => new Promise<void>((r) => setImmediate(r));

  for (let chunkStart = plan.startMs; chunkStart < plan.endMs; chunkStart += DAY_MS) {
    const chunkEnd = Math.min(plan.endMs, chunkStart + DAY_MS);
    const tg = performance.now();
    const quotes: QuoteEvent[] = [];
    const books: BookEvent[] = [];
    const lats: LatencyEvent[] = [];
    const samples: SpreadSample[] = [];
    const dislocations: DislocationRecord[] = [];
    const byPair = new Map<string, QuoteEvent[]>();
    // An hour at a time, yielding so the previous day's inserts keep streaming.
    for (let hourEnd = chunkStart + HOUR_MS; hourEnd <= chunkEnd; hourEnd += HOUR_MS) {
      for (const e of sim.generate(hourEnd)) {
        if (e.topic === TOPICS.quotes) {
          const q = e.event;
          quotes.push(q);
          let list = byPair.get(q.pair);
          if (!list) byPair.set(q.pair, (list = []));
          list.push(q);
          let state = states.get(q.pair);
          if (!state) states.set(q.pair, (state = emptyPairState(q.pair)));
          const out = applyQuote(state, q, detector);
          for (const s of out.samples) samples.push(s);
          for (const d of out.dislocations) {
            dislocations.push(d);
            // The paper-execution decision: the first revision profitable at some size.
            if (
              d.status === 'OPPORTUNITY' &&
              d.capacity_usd > 0 &&
              d.profit_size_usd > 0 &&
              !decided.has(d.opportunity_id)
            ) {
              decided.add(d.opportunity_id);
              pending.push({
                opportunity_id: d.opportunity_id,
                id: d.id,
                revision: d.revision,
                pair: d.pair,
                buy_venue: d.buy_venue,
                sell_venue: d.sell_venue,
                opened_at_ms: d.opened_at_ms,
                decided_at_ms: d.updated_at_ms,
                profit_size_usd: d.profit_size_usd,
                net_spread_bps: d.net_spread_bps,
                source: d.source,
              });
            }
          }
        } else if (e.topic === TOPICS.books) {
          books.push(e.event);
        } else {
          const l = e.event;
          lats.push(l);
          if (l.ok) latency.get(l.kind)!.push({ event_id: l.event_id, ts_ms: l.event_time_ms, rtt_ms: l.rtt_ms });
          latencyWm.set(l.kind, Math.max(latencyWm.get(l.kind) ?? 0, l.event_time_ms));
        }
      }
      await yieldNow();
    }

    // Paper executions whose inputs are complete (the rest wait for the next day's quotes).
    const executions: PaperExecution[] = [];
    const stillPending: ActionableRevision[] = [];
    const inputs = new Map<string, { recent: QuoteEvent[]; watermarks: Map<string, number> }>();
    for (const c of pending) {
      let input = inputs.get(c.pair);
      if (!input) {
        // The pair's quotes of the previous and this day (time order), and the newest per venue.
        const recent = [...(previous.get(c.pair) ?? []), ...(byPair.get(c.pair) ?? [])];
        const watermarks = new Map<string, number>();
        for (const q of recent) watermarks.set(q.venue, Math.max(watermarks.get(q.venue) ?? 0, q.event_time_ms));
        inputs.set(c.pair, (input = { recent, watermarks }));
      }
      const { recent, watermarks } = input;
      const from = lowerBound(recent, c.decided_at_ms - paper.maxQuoteAgeMs - tick, (q) => q.event_time_ms);
      const to = lowerBound(
        recent,
        c.decided_at_ms + paper.maxLegLatencyMs + paper.dexInclusionMs + paper.maxQuoteAgeMs + tick,
        (q) => q.event_time_ms,
      );
      const execution = paperExecute(
        c,
        { quotes: recent.slice(from, to + 1), latency, latencyWatermarks: latencyWm, quoteWatermarks: watermarks },
        paper,
      );
      if (execution) executions.push(execution);
      else stillPending.push(c);
    }
    pending = stillPending;
    previous = byPair;
    generateS += seconds(tg);

    const tw = performance.now();
    await inFlight;
    insertWaitS += seconds(tw);
    inFlight = Promise.all([
      insertInBatches(quotes, (b) => insertQuotes(store, b)),
      insertInBatches(samples, (b) => insertSpreadSamples(store, b)),
      insertInBatches(dislocations, (b) => insertDislocations(store, b)),
      insertInBatches(lats, (b) => insertLatencySamples(store, b)),
      insertInBatches(books, (b) => insertBookSnapshots(store, b)),
      insertInBatches(executions, (b) => insertPaperExecutions(store, b)),
    ]).then(() => undefined);
    progress(
      Math.round((chunkEnd - plan.startMs) / DAY_MS),
      `${fmtInt(quotes.length)} quotes, ${fmtInt(samples.length)} samples, ${fmtInt(dislocations.length)} revisions, ${fmtInt(executions.length)} executions`,
    );
  }
  const tw = performance.now();
  await inFlight;
  insertWaitS += seconds(tw);
  return { generateS, insertWaitS };
}
