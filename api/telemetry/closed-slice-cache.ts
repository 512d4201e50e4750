/**
 * Answers of closed telemetry slices, kept in memory: a slice whose window
 * ended more than `closedAfterMs` ago no longer changes (the pipeline has
 * written everything it will write for it), so a paid read of it is a
 * memory lookup, the pre-flight's store queries included. (The day blocks
 * below, which every windowed telemetry route uses, also wait until the
 * newest stored data is that far past the slice: slice-blocks.ts.)
 *
 * A wrapper around any SKU, transparent to it: it takes part only when the
 * SKU's pre-flight resolves a time window ({fromMs, toMs}) and the request
 * names its window by itself (a `date` parameter: the window then depends on
 * the input alone, not on the newest stored data). Two keys, from the
 * validated input (defaults applied, so GET, its POST alias and an omitted
 * default agree): the whole input, whose hit skips the pre-flight too; and
 * the input without date and time plus the resolved window, whose hit skips
 * the handler of another spelling of the same window (`time=0915` and
 * `time=0920` name one 15-minute slice). Refusals (404 outside coverage, no
 * data) are never cached: coverage grows. Only complete answers are cached:
 * one whose `complete` is false (completeness.ts) is computed every time.
 *
 * A windowed route with a block filler (its `dayBlock`, declared with the
 * route: every windowed telemetry route) is kept by UTC day instead
 * (slice-blocks.ts): a
 * miss computes every closed slice of the day with one grouped query per
 * table, and the day's refusals for slices inside coverage without data (404
 * `no_data_in_window`) are kept with its answers, since a closed slice inside
 * coverage never gains rows.
 *
 * Bounded by total answer size (JSON characters, LRU): one budget for every
 * SKU wrapped with the same options object (the router wraps them all with one).
 *
 * Caveat: rows replayed into a closed slice long after the fact (a backlog
 * replayed from an old Kafka offset) are not seen until the entry is evicted
 * or the API restarts.
 */
import { LRUCache } from 'lru-cache';
import client from 'prom-client';
import { registry } from '../../core/metrics.js';
import type { PricedSku, SkuCall } from '../sku/sku.js';
import { saysIncomplete } from './completeness.js';
import {
  refusalOf,
  SliceBlocks,
  type DayBlockDeclaration,
  type SliceBlockFiller,
  type SliceOutcome,
} from './slice-blocks.js';
import type { WindowParams } from './window.js';

export interface ClosedSliceCacheOptions {
  /** Largest total size of cached answers (JSON characters), over every SKU wrapped with these options; 0 disables the cache. */
  maxBytes: number;
  /** A window is closed once it ended this long ago. */
  closedAfterMs: number;
  /** Day blocks: a window is closed once the newest stored data is also this far past it (default closedAfterMs). */
  dataMarginMs?: number;
  now?: () => number;
}

interface TimeWindowLike {
  fromMs: number;
  toMs: number;
}

interface Entry {
  kind: 'answer';
  window: TimeWindowLike;
  answer: unknown;
  bytes: number;
}

type Cached = { kind: string; bytes: number };

/** What the wrapped pre-flight hands the wrapped handler on a hit. */
class CachedAnswer {
  constructor(readonly answer: unknown) {}
}

const lookups = new client.Counter({
  name: 'telemetry_closed_slice_cache_total',
  help: 'Paid telemetry reads of a window named by its date: answered from the closed-slice cache (hit), computed and cached (stored: alone, or with its whole day), or computed for an open window (open)',
  labelNames: ['route', 'result'] as const,
  registers: [registry],
});

/** One LRU per options object: the router wraps every SKU with the same options, so they share one budget. */
const caches = new WeakMap<ClosedSliceCacheOptions, LRUCache<string, Cached>>();
const live = new Set<WeakRef<LRUCache<string, Cached>>>();

new client.Gauge({
  name: 'telemetry_closed_slice_cache_bytes',
  help: 'Size of what the closed-slice cache holds (JSON characters of answers and day blocks), against TELEMETRY_CACHE_MAX_MB',
  registers: [registry],
  collect() {
    let bytes = 0;
    for (const ref of live) {
      const cache = ref.deref();
      if (cache) bytes += cache.calculatedSize;
      else live.delete(ref);
    }
    this.set(bytes);
  },
});

function cacheOf(options: ClosedSliceCacheOptions): LRUCache<string, Cached> {
  let cache = caches.get(options);
  if (!cache) {
    caches.set(
      options,
      (cache = new LRUCache<string, Cached>({
        maxSize: options.maxBytes,
        sizeCalculation: (e) => Math.max(1, e.bytes),
      })),
    );
    live.add(new WeakRef(cache));
  }
  return cache;
}

/**
 * The SKU with its closed slices cached; the SKU itself when there is nothing
 * to cache. A telemetry SKU brings its day-block filler (`dayBlock`); any
 * other SKU has none.
 */
export function withClosedSliceCache(
  sku: PricedSku & Partial<DayBlockDeclaration>,
  options: ClosedSliceCacheOptions,
): PricedSku {
  const preflight = sku.preflight?.bind(sku);
  if (!preflight || options.maxBytes <= 0) return sku;
  const handler = sku.handler.bind(sku);
  const now = options.now ?? Date.now;
  const cache = cacheOf(options);
  const filler = (sku.dayBlock ?? undefined) as SliceBlockFiller<WindowParams> | undefined;
  const blocks = filler
    ? new SliceBlocks<WindowParams>(
        sku.id,
        filler,
        cache,
        { closedAfterMs: options.closedAfterMs, dataMarginMs: options.dataMarginMs ?? options.closedAfterMs, now },
        restKeyOf,
      )
    : undefined;

  const served = (outcome: SliceOutcome, filled: boolean): CachedAnswer => {
    lookups.inc({ route: sku.id, result: filled ? 'stored' : 'hit' });
    if ('refusal' in outcome) throw refusalOf(outcome); // the pre-flight's refusal: 404 before any challenge, never charged
    return new CachedAnswer(outcome.answer);
  };

  return {
    ...sku,
    preflight: async (call: SkuCall<unknown>) => {
      const key = keyOf(sku, call.input);
      if (key === undefined) return preflight(call);
      if (blocks) {
        const slice = await blocks.serve(call as SkuCall<WindowParams>);
        return slice ? served(slice.outcome, slice.filled) : preflight(call);
      }
      const hit = cache.get(key) as Entry | undefined;
      return hit ? new CachedAnswer(hit.answer) : preflight(call);
    },
    handler: async (call: SkuCall<unknown>, prepared: unknown) => {
      if (prepared instanceof CachedAnswer) {
        if (!blocks) lookups.inc({ route: sku.id, result: 'hit' });
        return prepared.answer;
      }
      const key = keyOf(sku, call.input);
      if (key === undefined || !isWindow(prepared) || blocks) {
        const answer = await handler(call, prepared);
        if (key !== undefined && isWindow(prepared)) lookups.inc({ route: sku.id, result: 'open' });
        return answer;
      }
      const byWindow = windowKeyOf(sku, call.input, prepared);
      const known = cache.get(byWindow) as Entry | undefined;
      if (known) {
        cache.set(key, known);
        lookups.inc({ route: sku.id, result: 'hit' });
        return known.answer;
      }
      const answer = await handler(call, prepared);
      // An answer that says it is not final (completeness.ts) is never kept, whatever the wall clock says.
      const closed = prepared.toMs + options.closedAfterMs <= now() && !saysIncomplete(answer);
      if (closed) {
        const entry: Entry = {
          kind: 'answer',
          window: { fromMs: prepared.fromMs, toMs: prepared.toMs },
          answer,
          bytes: JSON.stringify(answer).length,
        };
        cache.set(byWindow, entry);
        cache.set(key, entry);
      }
      lookups.inc({ route: sku.id, result: closed ? 'stored' : 'open' });
      return answer;
    },
  };
}

/** The cache key, when the input names its window by itself (a date). */
function keyOf(sku: PricedSku, input: unknown): string | undefined {
  if (!input || typeof input !== 'object' || (input as Record<string, unknown>).date === undefined) return undefined;
  return `${sku.id} ${canonical(input)}`;
}

/** The input without its date and time. */
function restKeyOf(input: unknown): string {
  return canonical({ ...(input as Record<string, unknown>), date: undefined, time: undefined });
}

/** The key of a resolved window: the input without its date and time, plus the window. */
function windowKeyOf(sku: PricedSku, input: unknown, window: TimeWindowLike): string {
  return `${sku.id} ${window.fromMs}-${window.toMs} ${restKeyOf(input)}`;
}

function isWindow(value: unknown): value is TimeWindowLike {
  const w = value as TimeWindowLike | undefined;
  return !!w && typeof w.fromMs === 'number' && typeof w.toMs === 'number' && w.toMs > w.fromMs;
}

/** JSON with sorted keys. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
