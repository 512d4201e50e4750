/**
 * Answers of closed telemetry slices, kept in memory: a slice whose window
 * ended more than `closedAfterMs` ago no longer changes (the pipeline has
 * written everything it will write for it), so a paid read of it is a
 * memory lookup, the pre-flight's store queries included.
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
 * data) are never cached: coverage grows. Bounded by total answer size (LRU).
 *
 * Caveat: rows replayed into a closed slice long after the fact (a backlog
 * replayed from an old Kafka offset) are not seen until the entry is evicted
 * or the API restarts.
 */
import { LRUCache } from 'lru-cache';
import client from 'prom-client';
import { registry } from '../../core/metrics.js';
import type { PricedSku, SkuCall } from '../catalogue/sku.js';

export interface ClosedSliceCacheOptions {
  /** Largest total size of cached answers (JSON bytes); 0 disables the cache. */
  maxBytes: number;
  /** A window is closed once it ended this long ago. */
  closedAfterMs: number;
  now?: () => number;
}

interface TimeWindowLike {
  fromMs: number;
  toMs: number;
}

interface Entry {
  window: TimeWindowLike;
  answer: unknown;
}

/** What the wrapped pre-flight hands the wrapped handler on a hit. */
class CachedAnswer {
  constructor(readonly entry: Entry) {}
}

const lookups = new client.Counter({
  name: 'telemetry_closed_slice_cache_total',
  help: 'Paid telemetry reads of a window named by its date: answered from the closed-slice cache (hit), computed and cached (stored), or computed for an open window (open)',
  labelNames: ['route', 'result'] as const,
  registers: [registry],
});

/** The SKU with its closed slices cached; the SKU itself when there is nothing to cache. */
export function withClosedSliceCache(sku: PricedSku, options: ClosedSliceCacheOptions): PricedSku {
  const preflight = sku.preflight?.bind(sku);
  if (!preflight || options.maxBytes <= 0) return sku;
  const handler = sku.handler.bind(sku);
  const now = options.now ?? Date.now;
  const cache = new LRUCache<string, Entry>({ maxSize: options.maxBytes, sizeCalculation: (e) => Math.max(1, JSON.stringify(e.answer).length) }); // an answer under both keys counts twice: the bound is conservative

  return {
    ...sku,
    preflight: async (call: SkuCall<unknown>) => {
      const key = keyOf(sku, call.input);
      const hit = key === undefined ? undefined : cache.get(key);
      return hit ? new CachedAnswer(hit) : preflight(call);
    },
    handler: async (call: SkuCall<unknown>, prepared: unknown) => {
      if (prepared instanceof CachedAnswer) {
        lookups.inc({ route: sku.id, result: 'hit' });
        return prepared.entry.answer;
      }
      const key = keyOf(sku, call.input);
      if (key === undefined || !isWindow(prepared)) return handler(call, prepared);
      const byWindow = windowKeyOf(sku, call.input, prepared);
      const known = cache.get(byWindow);
      if (known) {
        cache.set(key, known);
        lookups.inc({ route: sku.id, result: 'hit' });
        return known.answer;
      }
      const answer = await handler(call, prepared);
      const closed = prepared.toMs + options.closedAfterMs <= now();
      if (closed) {
        const entry = { window: { fromMs: prepared.fromMs, toMs: prepared.toMs }, answer };
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

/** The key of a resolved window: the input without its date and time, plus the window. */
function windowKeyOf(sku: PricedSku, input: unknown, window: TimeWindowLike): string {
  const rest = { ...(input as Record<string, unknown>), date: undefined, time: undefined };
  return `${sku.id} ${window.fromMs}-${window.toMs} ${canonical(rest)}`;
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
