/**
 * Raw market-data sinks (consumer group `aggregate.raw`): BookEvents and
 * LatencyEvents into `book_snapshots` and `latency_samples` (QuoteEvents are
 * stored raw by the quote consumer, aggregate/quote-consumer.ts, which reads
 * them for the detector anyway). Each message is validated with its zod schema (through
 * its compiled equivalent, aggregate/fast-validate.ts); a malformed one is
 * dead-lettered with the reason. The bus commits a batch
 * only after handleBatch resolved, i.e. after the store acknowledged the
 * insert; a replay re-inserts rows with the same ids, which the tables
 * collapse (docs/metrics.md, "Idempotence").
 */
import type { z } from 'zod';
import type { BatchContext, Bus, BusMessage, Consumer } from '../core/bus/bus.js';
import { BookEvent, LatencyEvent } from '../core/events/market.js';
import type { Store } from '../core/store/store.js';
import { insertBookSnapshots } from '../core/store/tables/book-snapshots.js';
import { insertLatencySamples } from '../core/store/tables/latency-samples.js';
import { TOPICS } from '../core/topics.js';
import { parseJson, type ParseResult } from './fast-validate.js';

export const RAW_GROUP = 'aggregate.raw';

interface Sink<T> {
  label: string;
  schema: z.ZodType<T>;
  insert(store: Store, events: T[]): Promise<void>;
}

const SINKS: Record<string, Sink<never>> = {
  [TOPICS.books]: {
    label: 'book snapshot',
    schema: BookEvent,
    insert: insertBookSnapshots,
  } satisfies Sink<BookEvent> as unknown as Sink<never>,
  [TOPICS.latency]: {
    label: 'latency sample',
    schema: LatencyEvent,
    insert: insertLatencySamples,
  } satisfies Sink<LatencyEvent> as unknown as Sink<never>,
};

export const RAW_TOPICS = Object.keys(SINKS);

/** Parses a message with a schema: the event, or the reason it is malformed (fast path: aggregate/fast-validate.ts). */
export function parseMessage<T>(message: BusMessage, schema: z.ZodType<T>, label: string): ParseResult<T> {
  return parseJson(message.value, schema, label);
}

/** One batch (one topic-partition): validate, dead-letter the malformed, insert the rest. */
export async function handleRawBatch(store: Store, messages: BusMessage[], ctx: BatchContext): Promise<void> {
  const byTopic = new Map<string, unknown[]>();
  for (const message of messages) {
    const sink = SINKS[message.topic];
    if (!sink) {
      await ctx.deadLetter(message, `no raw sink for topic ${message.topic}`);
      continue;
    }
    const parsed = parseMessage(message, sink.schema as z.ZodType<unknown>, sink.label);
    if (!parsed.ok) {
      await ctx.deadLetter(message, parsed.reason);
      continue;
    }
    let list = byTopic.get(message.topic);
    if (!list) byTopic.set(message.topic, (list = []));
    list.push(parsed.event);
  }
  for (const [topic, events] of byTopic) await SINKS[topic]!.insert(store, events as never[]);
}

export interface RawSinkOptions {
  groupId?: string;
  /** Where a new group starts. Default: the beginning (the sinks are idempotent). */
  fromBeginning?: boolean;
  maxBatchSize?: number;
  /** Test seam: runs after the batch is stored, before it is committed. Throwing here is a crash mid-batch. */
  afterWrite?(messages: BusMessage[]): Promise<void> | void;
}

export async function startRawSinks(bus: Bus, store: Store, options: RawSinkOptions = {}): Promise<Consumer> {
  return bus.consume({
    groupId: options.groupId ?? RAW_GROUP,
    topics: RAW_TOPICS,
    fromBeginning: options.fromBeginning ?? true,
    ...(options.maxBatchSize ? { maxBatchSize: options.maxBatchSize } : {}),
    handleBatch: async (messages, ctx) => {
      await handleRawBatch(store, messages, ctx);
      await options.afterWrite?.(messages);
    },
  });
}
