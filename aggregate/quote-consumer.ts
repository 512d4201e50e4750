/**
 * Quote consumer (group `aggregate.quotes`), the one reader of md.quotes.v1:
 * each QuoteEvent is stored raw in `quotes` and goes through the detector
 * (aggregate/dislocation-detector.ts) into `spread_samples` and
 * `dislocations`; DislocationEvents go onto md.dislocations.v1 and the
 * detector's state into `detector_state`. One group does both so each quote
 * is fetched, decoded and validated once (two groups reading the topic cost
 * twice the CPU for the same messages: bench:pipeline).
 *
 * One batch, in this order, before the bus commits its offsets:
 *  1. validate (malformed quotes are dead-lettered with the reason, once);
 *  2. apply the quotes to copies of their pairs' states;
 *  3. write the raw quotes, spread samples, stale evaluations and dislocation revisions
 *     (idempotent by id);
 *  4. publish the DislocationEvents (ids are deterministic: a duplicate on
 *     the topic is the same event);
 *  5. save the changed states (version = quotes applied), then adopt the copies.
 * A crash anywhere before 5 leaves the saved state at the previous batch:
 * the redelivered batch recomputes the same rows and events. A crash after 5
 * (before the commit) redelivers a batch whose quotes are all "not newer"
 * than the saved state: nothing is written twice.
 *
 * The in-memory states are a cache of `detector_state`. They are dropped and
 * reloaded whenever a batch does not start where the previous batch of its
 * partition ended (first batch, a rebalance, a rewind, a redelivery after a
 * failure), so the state always matches what the store holds.
 */
import type { BatchContext, Bus, BusMessage, Consumer } from '../core/bus/bus.js';
import { DislocationEvent, QuoteEvent } from '../core/events/market.js';
import type { Logger } from '../core/logger.js';
import type { Store } from '../core/store/store.js';
import { loadDetectorStates, saveDetectorStates } from '../core/store/tables/detector-state.js';
import { insertDislocations } from '../core/store/tables/dislocations.js';
import { quoteRow } from '../core/store/tables/quotes.js';
import { spreadSampleRow } from '../core/store/tables/spread-samples.js';
import { staleEvaluationRow } from '../core/store/tables/stale-evaluations.js';
import { TOPICS } from '../core/topics.js';
import {
  applyQuote,
  DEFAULT_MIN_NET_BPS,
  DEFAULT_QUOTE_AGE_LIMITS,
  emptyPairState,
  type DetectorOptions,
  type DislocationRecord,
  type PairState,
  type QuoteAgeLimits,
} from './dislocation-detector.js';
import { validateWith } from './fast-validate.js';
import { parseMessage } from './raw-sinks.js';

export const QUOTES_GROUP = 'aggregate.quotes';

const DISLOCATION_EVENT_KEYS = Object.keys(DislocationEvent.shape) as (keyof DislocationEvent)[];

/**
 * The published event of a revision: its DislocationEvent fields, checked by
 * the schema's compiled validator (aggregate/fast-validate.ts; zod's own
 * parse was a sixth of the publishing cost), so a detector bug never reaches
 * the topic.
 */
export function dislocationEvent(d: DislocationRecord): DislocationEvent {
  const event: Record<string, unknown> = {};
  for (const key of DISLOCATION_EVENT_KEYS) if (d[key] !== undefined) event[key] = d[key];
  const checked = validateWith(event, DislocationEvent, 'dislocation event');
  if (!checked.ok) throw new Error(`detector produced an ${checked.reason}`);
  return checked.event;
}

export interface QuoteConsumerOptions {
  /** Consumer group, also the scope of the saved detector state. */
  groupId?: string;
  /** CEX_MAX_QUOTE_AGE_MS / DEX_MAX_QUOTE_AGE_MS: a leg older than its kind's maximum is not evaluated (absent: their defaults). */
  maxQuoteAgeMs?: QuoteAgeLimits;
  /** DISLOCATION_MIN_NET_BPS: a direction opens while its best net spread is above this. */
  minNetBps?: number;
  /** DISLOCATION_MIN_LIFE_MS: how long a direction is actionable before it opens (absent: 0, at once). */
  minLifeMs?: number;
  /** DISLOCATION_MIN_PROFIT_USD: the least est_profit_usd of an actionable direction (absent: 0). */
  minProfitUsd?: number;
  /** Publish DislocationEvents to md.dislocations.v1 (default true). */
  publish?: boolean;
  fromBeginning?: boolean;
  maxBatchSize?: number;
  logger?: Logger;
  /**
   * Test seam: runs when the rows (raw quotes and derived) are written (`written`: before the events
   * are published and the state saved) and when the state is saved (`saved`:
   * before the bus commits). Throwing here is a crash mid-batch.
   */
  onStage?(stage: 'written' | 'saved', messages: BusMessage[]): Promise<void> | void;
}

export interface BatchResult {
  quotes: number;
  applied: number;
  samples: number;
  dislocations: number;
}

/** The consumer's batch logic, usable without a bus (tests, tooling). */
export class QuoteProcessor {
  readonly scope: string;
  private readonly detector: DetectorOptions;
  private readonly states = new Map<string, PairState>();
  /** `<topic>/<partition>` -> offset the next batch must start at for the cache to be valid. */
  private readonly expected = new Map<string, bigint>();
  /** pair -> `<topic>/<partition>` it was last seen on. */
  private readonly pairPartition = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly bus: Bus | undefined,
    private readonly options: QuoteConsumerOptions = {},
  ) {
    this.scope = options.groupId ?? QUOTES_GROUP;
    this.detector = {
      maxQuoteAgeMs: options.maxQuoteAgeMs ?? DEFAULT_QUOTE_AGE_LIMITS,
      minNetBps: options.minNetBps ?? DEFAULT_MIN_NET_BPS,
      minLifeMs: options.minLifeMs ?? 0,
      minProfitUsd: options.minProfitUsd ?? 0,
    };
  }

  async handleBatch(messages: BusMessage[], ctx: BatchContext): Promise<BatchResult> {
    const result: BatchResult = { quotes: 0, applied: 0, samples: 0, dislocations: 0 };
    if (!messages.length) return result;
    const tp = `${messages[0]!.topic}/${messages[0]!.partition}`;
    if (this.expected.get(tp) !== BigInt(messages[0]!.offset)) {
      this.options.logger?.debug(
        { partition: tp, offset: messages[0]!.offset, expected: this.expected.get(tp)?.toString() },
        'dislocations: batch does not continue the last one; reloading the detector state',
      );
      this.invalidate(tp);
    }

    // Copies of the pairs' states: the cache only changes once the batch is durable. Quotes are keyed by
    // pair, so the keys name the states this batch needs before any message is parsed.
    const keys = new Set<string>();
    for (const message of messages) keys.add(message.key);
    const working = await this.workingCopies([...keys]);
    const seen = new Set<string>();
    const dirty = new Set<string>();
    const dislocations: DislocationRecord[] = [];
    // Each quote becomes its rows at once (the ClickHouse adapter encodes them as they are added): a 40k
    // batch's parsed objects die young instead of living, promoted to the old generation, until the insert
    // (bench:pipeline: garbage collection was a quarter of the aggregate's CPU).
    const [quoteRows, sampleRows, staleRows] = await Promise.all([
      this.store.beginInsert('quotes'),
      this.store.beginInsert('spread_samples'),
      this.store.beginInsert('stale_evaluations'),
    ]);
    const apply = (state: PairState, q: QuoteEvent) => {
      const out = applyQuote(state, q, this.detector);
      if (!out.applied) return;
      result.applied += 1;
      dirty.add(q.pair);
      for (const sample of out.samples) sampleRows.add(spreadSampleRow(sample));
      result.samples += out.samples.length;
      for (const stale of out.stale) staleRows.add(staleEvaluationRow(stale));
      for (const d of out.dislocations) dislocations.push(d);
    };
    /** Quotes of pairs no key named (a producer keying by something else), in order, applied after the loop. */
    const unkeyed: QuoteEvent[] = [];
    for (const message of messages) {
      const parsed = parseMessage(message, QuoteEvent, 'quote');
      if (!parsed.ok) {
        await ctx.deadLetter(message, parsed.reason);
        continue;
      }
      const q = parsed.event;
      result.quotes += 1;
      seen.add(q.pair);
      quoteRows.add(quoteRow(q));
      const state = working.get(q.pair);
      if (state) apply(state, q);
      else unkeyed.push(q);
    }
    if (unkeyed.length) {
      // Every quote of such a pair is here (its state was not in `working` for any of them): order kept.
      for (const [pair, state] of await this.workingCopies([...new Set(unkeyed.map((q) => q.pair))]))
        working.set(pair, state);
      for (const q of unkeyed) apply(working.get(q.pair)!, q);
    }
    result.dislocations = dislocations.length;

    await Promise.all([
      quoteRows.send(),
      sampleRows.send(),
      staleRows.send(),
      insertDislocations(this.store, dislocations),
    ]);
    await this.options.onStage?.('written', messages);
    if (this.bus && this.options.publish !== false && dislocations.length) {
      await this.bus.publish(
        TOPICS.dislocations,
        // Record time = now, not event time: a backfill of old quotes must not publish records that
        // Kafka's time-based retention deletes at once.
        dislocations.map((d) => ({ key: d.pair, value: JSON.stringify(dislocationEvent(d)) })),
      );
    }
    const savedAt = Date.now();
    await saveDetectorStates(
      this.store,
      [...dirty].map((pair) => {
        const state = working.get(pair)!;
        return { scope: this.scope, pair, version: state.applied, saved_at_ms: savedAt, state: JSON.stringify(state) };
      }),
    );
    await this.options.onStage?.('saved', messages);

    for (const pair of seen) {
      this.states.set(pair, working.get(pair)!);
      this.pairPartition.set(pair, tp);
    }
    this.expected.set(tp, BigInt(messages[messages.length - 1]!.offset) + 1n);
    return result;
  }

  /** Copies of the states of these pairs (loaded from the store when not cached), to change while a batch runs. */
  private async workingCopies(pairs: string[]): Promise<Map<string, PairState>> {
    await this.load(pairs.filter((p) => !this.states.has(p)));
    return new Map(pairs.map((p) => [p, structuredClone(this.states.get(p) ?? emptyPairState(p))]));
  }

  /** Forgets the cached states of the pairs last seen on this partition. */
  private invalidate(tp: string): void {
    for (const [pair, where] of this.pairPartition) {
      if (where !== tp) continue;
      this.states.delete(pair);
      this.pairPartition.delete(pair);
    }
    this.expected.delete(tp);
  }

  private async load(pairs: string[]): Promise<void> {
    if (!pairs.length) return;
    const saved = await loadDetectorStates(this.store, this.scope, pairs);
    for (const pair of pairs) {
      const row = saved.get(pair);
      this.states.set(pair, row ? (JSON.parse(row.state) as PairState) : emptyPairState(pair));
    }
  }
}

export async function startQuoteConsumer(
  bus: Bus,
  store: Store,
  options: QuoteConsumerOptions = {},
): Promise<Consumer> {
  const processor = new QuoteProcessor(store, bus, options);
  return bus.consume({
    groupId: processor.scope,
    topics: [TOPICS.quotes],
    fromBeginning: options.fromBeginning ?? true,
    ...(options.maxBatchSize ? { maxBatchSize: options.maxBatchSize } : {}),
    handleBatch: async (messages, ctx) => {
      await processor.handleBatch(messages, ctx);
    },
  });
}
