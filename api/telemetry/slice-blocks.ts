/**
 * Day blocks of closed telemetry slices: the miss path of the closed-slice
 * cache (closed-slice-cache.ts). A paid read of a closed slice that is not in
 * memory computes the outcome of EVERY closed slice of its UTC day (same pair,
 * same other parameters) with one grouped query per table, and keeps the day
 * as one entry. Analysts scan consecutive slices, and a closed slice never
 * changes, so the next reads of that day are memory lookups; the store sees
 * one query per day instead of one (or three) per slice.
 *
 * A block filler (one per windowed route, declared with it: the route's
 * `dayBlock`, api/telemetry/telemetry-sku.ts) computes
 * what the route's pre-flight and handler would answer for each slice: the
 * 200 body, or the pre-flight's refusal for a slice inside coverage without
 * the rows the route needs (404 `no_data_in_window`, never charged), built by
 * the same formatting code as the single-slice path. Only slices that are
 * closed and inside the stored coverage take part. Closed means ended
 * TELEMETRY_CACHE_CLOSED_AFTER_MS ago on the wall clock AND
 * TELEMETRY_CACHE_DATA_MARGIN_MS (an hour) before the newest stored data: a
 * slice the pipeline may still be writing (a backfill at start-up, a backlog
 * replayed after an ingest outage, while the consumers of different tables
 * lag one another) is answered from the store, uncached, until the data has
 * moved well past it. Any other window (open, outside coverage, no `date`)
 * takes the route's ordinary path. A block filled while part of its day was
 * still open is filled again when a later slice of it is asked once closed.
 *
 * Concurrent misses of one block share one fill (single flight). A fill that
 * fails (store unavailable) leaves nothing behind: the request takes the
 * ordinary path, which reports the failure its own way.
 *
 * Caveat (as for every cached answer): rows replayed into a closed slice long
 * after the fact are not seen until the block is evicted or the API restarts.
 */
import type { LRUCache } from 'lru-cache';
import { AppError } from '../../core/errors.js';
import { JsonText } from '../sku/json-text.js';
import type { SkuCall } from '../sku/sku.js';
import { closedThrough, saysIncomplete } from './completeness.js';
import {
  coverageSpan,
  intersects,
  resolveWindow,
  type CoverageSpan,
  type TimeWindow,
  type WindowParams,
} from './window.js';

const DAY_MS = 86_400_000;

/** What one slice answers: the 200 body (served from a block: its JsonText), or the refusal of its pre-flight (an AppError carrying `charged`). */
export type SliceOutcome = { answer: unknown } | { refusal: AppError };

export interface SliceBlockFiller<I = never> {
  /** Length of the window the input names: the 15-minute slice, or its candle bucket. */
  sliceMs(input: I): number;
  /** The pair whose coverage bounds the window (undefined: the coverage of every pair). */
  coveragePair(input: I): string | undefined;
  /**
   * The outcome of each slice (consecutive windows of sliceMs, closed, inside
   * coverage, one UTC day) keyed by its start: what pre-flight and handler
   * answer for it, computed with grouped queries over the whole range.
   */
  fill(call: SkuCall<I>, slices: readonly TimeWindow[]): Promise<Map<number, SliceOutcome>>;
  /**
   * Other inputs whose day blocks are cheap once this one is filled (spread
   * candles: the other intervals, rolled up from the same 15-minute read):
   * filled right after it, so a first read of a day answers them all.
   */
  siblings?(input: I): I[];
}

/** What a SKU declares of its day blocks (every telemetry SKU must: api/telemetry/telemetry-sku.ts). */
export interface DayBlockDeclaration {
  /** Its filler, or null: its slices are cached one at a time (or not at all, without a `date`). */
  dayBlock: SliceBlockFiller<never> | null;
}

/** A kept outcome: the answer as its JSON text (a third of the memory of the object, and exactly what is sent), or the refusal. */
type KeptOutcome = { json: string } | { refusal: AppError };

/** One filled day: the outcome of each slice that was closed and inside coverage, and how far the day was closed. */
export interface SliceBlock {
  kind: 'block';
  outcomes: Map<number, KeptOutcome>;
  /** Slices ending after this were still open when the block was filled. */
  closedThroughMs: number;
  bytes: number;
}

export interface SliceBlocksOptions {
  /** A slice is closed once it ended this long ago on the wall clock... */
  closedAfterMs: number;
  /** ...and the newest stored data is this far past its end. */
  dataMarginMs: number;
  now: () => number;
}

/** What `serve` hands back: the outcome, and whether the request waited for a fill. */
export interface ServedSlice {
  outcome: SliceOutcome;
  filled: boolean;
}

/** The day blocks of one SKU, kept in a byte-bounded LRU shared with other SKUs. */
export class SliceBlocks<I extends WindowParams> {
  private readonly fills = new Map<string, Promise<SliceBlock | undefined>>();

  constructor(
    private readonly skuId: string,
    private readonly filler: SliceBlockFiller<I>,
    private readonly cache: LRUCache<string, { kind: string; bytes: number }>,
    private readonly options: SliceBlocksOptions,
    /** The input without its date and time, as a key. */
    private readonly restKeyOf: (input: I) => string,
  ) {}

  /** The outcome of the slice `call` names, from its day block (filled now if needed); undefined: take the ordinary path. */
  async serve(call: SkuCall<I>): Promise<ServedSlice | undefined> {
    const input = call.input;
    if (input.date === undefined) return undefined;
    const sliceMs = this.filler.sliceMs(input);
    // With a date the window depends on the input alone (the span is not consulted).
    const window = resolveWindow(input, { earliestMs: 0, latestMs: 0 }, sliceMs);
    const closedEnd = this.options.now() - this.options.closedAfterMs;
    if (window.toMs > closedEnd) return undefined;
    const blockMs = Math.max(DAY_MS, sliceMs);
    const blockStart = Math.floor(window.fromMs / blockMs) * blockMs;
    const key = this.keyOf(blockStart, input);

    let block = this.cache.get(key) as SliceBlock | undefined;
    let filled = false;
    if (!block || (!block.outcomes.has(window.fromMs) && window.toMs > block.closedThroughMs)) {
      // Closed on the wall clock; in the stored data too? (the coverage span is cached for seconds)
      const span = await coverageSpan(call.runtime.store, this.filler.coveragePair(input));
      if (!span || window.toMs > this.closedEnd(span)) return undefined;
      block = await this.fillOnce(key, call, blockStart, blockMs, sliceMs);
      filled = true;
    }
    const kept = block?.outcomes.get(window.fromMs);
    if (!kept) return undefined;
    // The kept text is what is sent (JsonText): no parse and no re-serialization per read.
    return { outcome: 'json' in kept ? { answer: new JsonText(kept.json) } : kept, filled };
  }

  /** The end of the newest closed slice: ended closedAfterMs ago on the wall clock, and dataMarginMs before the newest stored data. */
  private closedEnd(span: CoverageSpan): number {
    return closedThrough(this.options.now(), span.latestMs, this.options);
  }

  private keyOf(blockStart: number, input: I): string {
    return `${this.skuId} block ${blockStart} ${this.restKeyOf(input)}`;
  }

  private fillOnce(
    key: string,
    call: SkuCall<I>,
    blockStart: number,
    blockMs: number,
    sliceMs: number,
    siblings = true,
  ): Promise<SliceBlock | undefined> {
    const running = this.fills.get(key);
    if (running) return running;
    const fill = this.fill(key, call, blockStart, blockMs, sliceMs)
      .then((block) => {
        // In the background: the first reader of the day does not wait for them.
        if (block && siblings && this.filler.siblings) this.fillSiblings(call, blockStart);
        return block;
      })
      .catch((err: unknown) => {
        call.runtime.log?.warn(
          { sku: this.skuId, err: err instanceof Error ? err.message : String(err) },
          'closed-slice block fill failed; answering the slice on its own',
        );
        return undefined;
      })
      .finally(() => this.fills.delete(key));
    this.fills.set(key, fill);
    return fill;
  }

  /** The sibling inputs' blocks of the same day that are not kept yet (a failure leaves them to their own first read). */
  private fillSiblings(call: SkuCall<I>, dayStart: number): void {
    for (const input of this.filler.siblings!(call.input)) {
      const sliceMs = this.filler.sliceMs(input);
      const blockMs = Math.max(DAY_MS, sliceMs);
      const blockStart = Math.floor(dayStart / blockMs) * blockMs;
      const key = this.keyOf(blockStart, input);
      if (!this.cache.has(key)) void this.fillOnce(key, { ...call, input }, blockStart, blockMs, sliceMs, false);
    }
  }

  private async fill(
    key: string,
    call: SkuCall<I>,
    blockStart: number,
    blockMs: number,
    sliceMs: number,
  ): Promise<SliceBlock | undefined> {
    const span = await coverageSpan(call.runtime.store, this.filler.coveragePair(call.input));
    if (!span) return undefined;
    const closedEnd = this.closedEnd(span);
    const slices: TimeWindow[] = [];
    let closedThroughMs = blockStart;
    for (let from = blockStart; from < blockStart + blockMs; from += sliceMs) {
      const slice = { fromMs: from, toMs: from + sliceMs };
      if (slice.toMs > closedEnd) break;
      closedThroughMs = slice.toMs;
      if (intersects(slice, span)) slices.push(slice);
    }
    if (!slices.length) return undefined;
    const computed = await this.filler.fill(call, slices);
    const outcomes = new Map<number, KeptOutcome>();
    let bytes = key.length;
    for (const { fromMs } of slices) {
      const outcome = computed.get(fromMs);
      if (!outcome) continue; // a filler that says nothing of a slice leaves it to the ordinary path
      if ('answer' in outcome && saysIncomplete(outcome.answer)) continue; // only final answers are kept
      const kept = 'answer' in outcome ? { json: JSON.stringify(outcome.answer) } : outcome;
      outcomes.set(fromMs, kept);
      bytes += 64 + ('json' in kept ? kept.json.length : 256);
    }
    const block: SliceBlock = { kind: 'block', outcomes, closedThroughMs, bytes };
    this.cache.set(key, block);
    return block;
  }
}

/** A fresh copy of a cached refusal to throw (the router reads code, message, status and details). */
export function refusalOf(outcome: { refusal: AppError }): AppError {
  const r = outcome.refusal;
  return new AppError(r.code, r.message, r.status, r.details);
}
