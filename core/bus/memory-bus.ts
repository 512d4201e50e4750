/**
 * In-process bus with Kafka's semantics (see bus.ts): topics with N
 * partitions, kafkajs' own murmur2 partitioner (same key -> same partition as
 * the Kafka adapter), per-partition ordered logs with integer offsets,
 * consumer groups whose committed offsets survive a consumer restart on the
 * same bus instance, commit after success, retry / dead-letter through the
 * shared BatchRunner, and replay from an offset or a timestamp.
 *
 * Nothing is persisted: the logs live as long as the bus object. Messages
 * handed to handlers are the stored objects themselves (no copy per fetch);
 * handlers must treat them as read-only, as the port's contract implies.
 * Topics, groups, publishing and offsets are here; the consumer loop is in
 * memory-bus-consumer.ts.
 */
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { metrics } from '../metrics.js';
import { DeadLetterLedger, parseDeadLetter } from './dead-letters.js';
import {
  committedFor,
  MemConsumer,
  type MemConsumerSettings,
  type MemGroup,
  type MemTopic,
} from './memory-bus-consumer.js';
import {
  dlqTopic,
  type Bus,
  type BusMessage,
  type Consumer,
  type ConsumerOptions,
  type DeadLetterSummary,
  type DeadLetterSummaryOptions,
  type OutgoingMessage,
  type PartitionOffsets,
  type ReplayFrom,
} from './bus.js';

export interface MemoryBusOptions extends MemConsumerSettings {
  partitions: number;
}

const ADAPTER = 'memory';

export async function createMemoryBus(options: MemoryBusOptions): Promise<Bus> {
  return new MemoryBus(options);
}

class MemoryBus implements Bus {
  readonly adapter = ADAPTER;
  private readonly topics = new Map<string, MemTopic>();
  private readonly groups = new Map<string, MemGroup>();
  private readonly partitionMetadata: PartitionMetadata[];
  private readonly partitioner = Partitioners.DefaultPartitioner();
  /** key -> partition (all topics have the same partition count). Bounded. */
  private readonly keyPartitions = new Map<string, number>();
  /** DLQ topic -> what it holds (kept up to date on publish). */
  readonly deadLetters = new Map<string, DeadLetterLedger>();
  private closed = false;

  constructor(readonly options: MemoryBusOptions) {
    if (!Number.isInteger(options.partitions) || options.partitions < 1)
      throw new Error(`memory bus: partitions must be a positive integer, got ${options.partitions}`);
    this.partitionMetadata = Array.from({ length: options.partitions }, (_, partitionId) => ({
      partitionErrorCode: 0,
      partitionId,
      leader: 0,
      replicas: [0],
      isr: [0],
    }));
  }

  async ensureTopics(topics: string[]): Promise<void> {
    this.assertOpen();
    for (const topic of topics) {
      this.topic(topic);
      this.topic(dlqTopic(topic));
    }
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    this.assertOpen();
    const t = this.topic(topic);
    const now = Date.now();
    const { logs } = t;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      if (typeof m.key !== 'string' || typeof m.value !== 'string')
        throw new TypeError(`bus publish to ${topic}: key and value must be strings`);
      const partition = this.partitionFor(topic, m.key);
      const log = logs[partition]!;
      log.push({
        topic,
        partition,
        offset: String(log.length),
        key: m.key,
        value: m.value,
        headers: m.headers ? { ...m.headers } : {},
        timestamp: m.timestamp ?? now,
      });
    }
    t.publishedMetric.inc(messages.length);
    if (topic.endsWith('.dlq')) {
      for (const m of messages) {
        const record = m.headers && parseDeadLetter(m.headers);
        if (record) this.ledger(topic).add(record);
      }
    }
    for (const consumer of t.subscribers) consumer.wake();
  }

  ledger(dlq: string): DeadLetterLedger {
    let l = this.deadLetters.get(dlq);
    if (!l) this.deadLetters.set(dlq, (l = new DeadLetterLedger()));
    return l;
  }

  async deadLetterSummary(
    topics: string[],
    options: DeadLetterSummaryOptions = {},
  ): Promise<Record<string, DeadLetterSummary>> {
    const since = Date.now() - (options.recentWindowMs ?? 300_000);
    return Object.fromEntries(
      topics.map((topic) => {
        const l = this.ledger(dlqTopic(topic));
        return [topic, { count: l.count, recent: l.since(since), ...(l.last ? { last: l.last } : {}), complete: true }];
      }),
    );
  }

  async readTopic(topic: string, onMessage: (message: BusMessage) => void | Promise<void>): Promise<number> {
    this.assertOpen();
    const t = this.topics.get(topic);
    if (!t) throw new Error(`topic ${topic} does not exist`);
    let read = 0;
    const ends = t.logs.map((log) => log.length);
    for (let p = 0; p < ends.length; p++) {
      for (let i = 0; i < ends[p]!; i++) {
        read++;
        await onMessage(t.logs[p]![i]!);
      }
    }
    return read;
  }

  async consume(options: ConsumerOptions): Promise<Consumer> {
    this.assertOpen();
    if (!options.topics.length) throw new Error('bus consume: at least one topic');
    const group = this.group(options.groupId);
    if (group.running) {
      throw new Error(
        `bus consume: consumer group "${options.groupId}" already has a running consumer on this bus; stop it first (one consumer per group)`,
      );
    }
    const consumer = new MemConsumer(this, options, group);
    group.running = consumer;
    consumer.start();
    return consumer;
  }

  async resetOffsets(groupId: string, topic: string, from: ReplayFrom): Promise<void> {
    this.assertOpen();
    const group = this.group(groupId);
    if (group.running) {
      throw new Error(
        `bus resetOffsets: consumer group "${groupId}" has a running consumer; stop it before rewinding offsets`,
      );
    }
    const t = this.topic(topic);
    if (from.kind === 'offset') {
      parseOffset(from.offset);
      if (from.partition !== undefined && !(from.partition >= 0 && from.partition < t.logs.length)) {
        throw new Error(`bus resetOffsets: topic ${topic} has no partition ${from.partition}`);
      }
    }
    const committed = committedFor(group, topic, t.logs.length);
    t.logs.forEach((log, partition) => {
      switch (from.kind) {
        case 'earliest':
          committed[partition] = 0;
          break;
        case 'latest':
          committed[partition] = log.length;
          break;
        case 'offset': {
          if (from.partition !== undefined && from.partition !== partition) return;
          committed[partition] = clamp(parseOffset(from.offset), 0, log.length);
          break;
        }
        case 'timestamp': {
          let i = 0;
          while (i < log.length && log[i]!.timestamp < from.timestamp) i++;
          committed[partition] = i;
          break;
        }
      }
    });
  }

  async committedOffsets(groupId: string, topic: string): Promise<PartitionOffsets> {
    const out: PartitionOffsets = {};
    const committed = this.groups.get(groupId)?.committed.get(topic);
    committed?.forEach((offset, partition) => {
      if (offset !== undefined) out[partition] = String(offset);
    });
    return out;
  }

  async endOffsets(topic: string): Promise<PartitionOffsets> {
    const out: PartitionOffsets = {};
    this.topics.get(topic)?.logs.forEach((log, partition) => {
      out[partition] = String(log.length);
    });
    return out;
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const running = [...this.groups.values()].flatMap((g) => (g.running ? [g.running] : []));
    await Promise.all(running.map((c) => c.stop()));
    this.closed = true;
  }

  /** Topic by name, created with `options.partitions` partitions when missing (Kafka auto-creates too). */
  topic(name: string): MemTopic {
    let t = this.topics.get(name);
    if (!t) {
      if (!name) throw new Error('bus: empty topic name');
      t = {
        name,
        logs: Array.from({ length: this.options.partitions }, () => []),
        subscribers: new Set(),
        publishedMetric: metrics.busPublished.labels(ADAPTER, name),
      };
      this.topics.set(name, t);
    }
    return t;
  }

  private group(groupId: string): MemGroup {
    if (!groupId) throw new Error('bus: empty consumer group id');
    let g = this.groups.get(groupId);
    if (!g) {
      g = { committed: new Map() };
      this.groups.set(groupId, g);
    }
    return g;
  }

  private partitionFor(topic: string, key: string): number {
    let p = this.keyPartitions.get(key);
    if (p === undefined) {
      p = this.partitioner({ topic, partitionMetadata: this.partitionMetadata, message: { key, value: null } });
      if (this.keyPartitions.size >= 100_000) this.keyPartitions.clear();
      this.keyPartitions.set(key, p);
    }
    return p;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('memory bus is closed');
  }
}

function parseOffset(offset: string): number {
  if (!/^-?\d+$/.test(offset)) throw new Error(`bus resetOffsets: offset must be an integer string, got "${offset}"`);
  return Number(offset);
}

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));
