/**
 * The events of the live stream after a cursor, as served: every revision of
 * the dislocations table (opened, revised, closed) as the dislocations route's
 * item at that revision (rounding included: its servedItem), and every
 * closed 15-minute spread candle as the spread-candles route answers that
 * slice (its candleAnswer, completeness included), in the stream's order
 * (event-id.ts). A candle's event time is its slice's end.
 *
 * One read answers the events in [after, beforeMs), at most `limit`, and says
 * how far it got: `through` is the position the next read starts after (the
 * last event's when the limit cut the read, else the end of the window, so
 * a quiet window is not read again). Work per read: one dislocations query,
 * and, when slice ends fall in the window, one candle query and one
 * completeness read per pair and slice (at most MAX_SLICE_ENDS slices a read;
 * a closed candle is kept briefly and shared by every stream).
 */
import { LRUCache } from 'lru-cache';
import { BASE_SLICE_MS } from '../../../core/store/tables/query-helpers.js';
import { spreadCandles } from '../../../core/store/tables/spread-samples.js';
import { revisionsAfter, type StreamPosition } from '../../../core/store/tables/stream-cursor.js';
import type { Store } from '../../../core/store/store.js';
import type { SkuRuntime } from '../../sku/sku.js';
import { spreadObservations, windowCompleteness } from '../completeness.js';
import { costsOf, legsOf, servedItem, type DislocationsOutput } from '../dislocations/handler.js';
import { candleAnswer, type SpreadCandlesOutput } from '../spread-candles/handler.js';
import { endOfMs, isAfter } from './event-id.js';

/** Slice ends (candle closes) considered per read: a backfill of hours is read an hour at a time. */
const MAX_SLICE_ENDS = 4;

export type DislocationItem = DislocationsOutput['dislocations'][number];

export type StreamEvent =
  | { event: 'dislocation'; position: StreamPosition; data: DislocationItem }
  | { event: 'candle'; position: StreamPosition; data: SpreadCandlesOutput };

export interface EventsRead {
  events: StreamEvent[];
  through: StreamPosition;
}

type Runtime = SkuRuntime;

export async function eventsAfter(
  runtime: Runtime,
  options: { after: StreamPosition; beforeMs: number; limit: number; pair: string | undefined },
): Promise<EventsRead> {
  const { after, limit, pair } = options;
  const ends = sliceEndsAfter(after, options.beforeMs);
  // More slice ends than a read takes: read up to the first one left out.
  const beforeMs = ends.length > MAX_SLICE_ENDS ? ends[MAX_SLICE_ENDS]! : options.beforeMs;
  const considered = ends.slice(0, MAX_SLICE_ENDS);
  const [revisions, candles] = await Promise.all([
    revisionsAfter(runtime.store, { after, beforeMs, limit, pair }),
    closedCandles(runtime, considered, pair),
  ]);
  const dislocations = revisions.map((r): StreamEvent => ({
    event: 'dislocation',
    position: { ms: r.ms, key: r.eventId },
    data: servedItem({
      ...r.state,
      costs: costsOf(r.state),
      legs: legsOf(r.state, poolsOf(runtime, r.state.pair), runtime.config.CEX_EXCHANGE),
    }),
  }));
  const merged = [...dislocations, ...candles.filter((c) => isAfter(c.position, after))].sort(byPosition);
  // A full read of revisions stops at its last one: what lies after it is read next time.
  const cut = revisions.length >= limit ? dislocations[dislocations.length - 1]!.position : undefined;
  const events = (cut ? merged.filter((e) => !isAfter(e.position, cut)) : merged).slice(0, limit);
  const full = cut !== undefined || merged.length > limit;
  const through = full ? events[events.length - 1]!.position : endOfMs(beforeMs - 1);
  return { events, through };
}

const byPosition = (a: StreamEvent, b: StreamEvent) =>
  a.position.ms - b.position.ms || (a.position.key < b.position.key ? -1 : a.position.key > b.position.key ? 1 : 0);

const poolsOf = (runtime: Runtime, pair: string) => runtime.pairs.pairs.find((p) => p.pair === pair)?.dex ?? [];

/** The ends of 15-minute slices at or after `after` (its candles may be after it) and before `beforeMs`. */
function sliceEndsAfter(after: StreamPosition, beforeMs: number): number[] {
  const out: number[] = [];
  for (let end = Math.ceil(after.ms / BASE_SLICE_MS) * BASE_SLICE_MS; end < beforeMs; end += BASE_SLICE_MS) {
    out.push(end);
    if (out.length > MAX_SLICE_ENDS) break;
  }
  return out;
}

const candleCaches = new WeakMap<Store, LRUCache<string, Promise<StreamEvent | null>>>();

/** The closed candles of the slices ending at `ends`, of `pair` or every pair (none for a slice without samples). */
async function closedCandles(
  runtime: Runtime,
  ends: readonly number[],
  pair: string | undefined,
): Promise<StreamEvent[]> {
  if (!ends.length) return [];
  let cache = candleCaches.get(runtime.store);
  if (!cache)
    candleCaches.set(
      runtime.store,
      (cache = new LRUCache<string, Promise<StreamEvent | null>>({ max: 512, ttl: 60_000 })),
    );
  const pairs = pair === undefined ? runtime.pairs.pairs.map((p) => p.pair) : [pair];
  const reads = pairs.flatMap((p) =>
    ends.map((end) => {
      const key = `${p} ${end}`;
      let read = cache.get(key);
      if (!read) {
        read = closedCandle(runtime, p, end);
        cache.set(key, read);
        read.catch(() => cache.delete(key));
      }
      return read;
    }),
  );
  return (await Promise.all(reads)).filter((e): e is StreamEvent => e !== null);
}

async function closedCandle(runtime: Runtime, pair: string, endMs: number): Promise<StreamEvent | null> {
  const window = { fromMs: endMs - BASE_SLICE_MS, toMs: endMs };
  const [candle] = await spreadCandles(runtime.store, pair, window.fromMs, window.toMs, '15m');
  if (!candle) return null;
  const completeness = await windowCompleteness(runtime, window, spreadObservations(pair), pair);
  return {
    event: 'candle',
    position: { ms: endMs, key: `candle:${pair}` },
    data: candleAnswer(candle, completeness, runtime),
  };
}
