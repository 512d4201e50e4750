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
 */
import { setImmediate as nextTick } from 'node:timers/promises';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { BatchRunner } from './batch-runner.js';
import { equalChunkSize } from './equal-chunks.js';
import { DeadLetterLedger, parseDeadLetter } from './dead-letters.js';
import {
  dlqTopic,
  type Bus,
  type BusMessage,
  type Consumer,
  type ConsumerOptions,
  type ConsumerStatus,
  type DeadLetterSummary,
  type DeadLetterSummaryOptions,
  type OutgoingMessage,
  type PartitionOffsets,
  type ReplayFrom,
} from './bus.js';

export interface MemoryBusOptions {
  partitions: number;
  batchSize: number;
  maxAttempts: number;
  retryBackoffMs: number;
  /** Cap of one retry delay (default 30 s). */
  retryMaxBackoffMs?: number;
  logger: Logger;
}

const ADAPTER = 'memory';

interface MemTopic {
  name: string;
  /** One ordered log per partition; a message's offset is its index. */
  logs: BusMessage[][];
  /** Consumers to wake when something is published. */
  subscribers: Set<MemConsumer>;
  publishedMetric: { inc(n?: number): void };
}

interface MemGroup {
  running?: MemConsumer;
  /** topic -> committed offset (next offset to read) per partition. */
  committed: Map<string, (number | undefined)[]>;
}

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
    if (!Number.isInteger(options.partitions) || options.partitions < 1) throw new Error(`memory bus: partitions must be a positive integer, got ${options.partitions}`);
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
      if (typeof m.key !== 'string' || typeof m.value !== 'string') throw new TypeError(`bus publish to ${topic}: key and value must be strings`);
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

  async deadLetterSummary(topics: string[], options: DeadLetterSummaryOptions = {}): Promise<Record<string, DeadLetterSummary>> {
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
      throw new Error(`bus consume: consumer group "${options.groupId}" already has a running consumer on this bus; stop it first (one consumer per group)`);
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
      throw new Error(`bus resetOffsets: consumer group "${groupId}" has a running consumer; stop it before rewinding offsets`);
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

/** One subscribed topic-partition of a running consumer. */
interface Slot {
  topic: string;
  partition: number;
  log: BusMessage[];
  /** Next offset to hand out (= committed offset: a batch is committed before the next one is fetched). */
  position: number;
  committed: (number | undefined)[];
  consumed: { inc(n?: number): void };
  seconds: { observe(v: number): void };
}

class MemConsumer implements Consumer {
  readonly status: ConsumerStatus;
  private readonly abort = new AbortController();
  private readonly slots: Slot[] = [];
  private readonly batchSize: number;
  private readonly runner: BatchRunner;
  private readonly logger: Logger;
  private woken = false;
  private waiting: (() => void) | undefined;
  private loop: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly bus: MemoryBus,
    private readonly options: ConsumerOptions,
    private readonly group: MemGroup,
  ) {
    const { groupId, topics } = options;
    this.status = { groupId, topics: [...topics], running: false };
    this.batchSize = options.maxBatchSize ?? bus.options.batchSize;
    this.logger = bus.options.logger.child({ component: 'bus', adapter: ADAPTER, group: groupId });
    this.runner = new BatchRunner({
      adapter: ADAPTER,
      groupId,
      handleBatch: options.handleBatch,
      maxAttempts: options.maxAttempts ?? bus.options.maxAttempts,
      retryBackoffMs: options.retryBackoffMs ?? bus.options.retryBackoffMs,
      ...(bus.options.retryMaxBackoffMs ? { retryCapMs: bus.options.retryMaxBackoffMs } : {}),
      status: this.status,
      signal: this.abort.signal,
      logger: this.logger,
      publish: (topic, messages) => bus.publish(topic, messages),
      alreadyDeadLettered: async (message) => bus.ledger(dlqTopic(message.topic)).has(groupId, message.topic, message.partition, message.offset),
    });
    const fromBeginning = options.fromBeginning ?? true;
    for (const name of new Set(topics)) {
      const t = bus.topic(name);
      const committed = committedFor(group, name, t.logs.length);
      t.logs.forEach((log, partition) => {
        this.slots.push({
          topic: name,
          partition,
          log,
          position: committed[partition] ?? (fromBeginning ? 0 : log.length),
          committed,
          consumed: metrics.busConsumed.labels(ADAPTER, name, groupId),
          seconds: metrics.busBatchSeconds.labels(ADAPTER, name, groupId),
        });
      });
    }
  }

  start(): void {
    this.status.running = true;
    for (const name of this.status.topics) this.bus.topic(name).subscribers.add(this);
    this.loop = this.run();
  }

  wake(): void {
    this.woken = true;
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      w();
    }
  }

  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.abort.abort();
      this.wake();
    }
    await this.loop;
  }

  private async run(): Promise<void> {
    const { slots, batchSize } = this;
    try {
      while (!this.stopping) {
        this.woken = false;
        let worked = false;
        for (let s = 0; s < slots.length && !this.stopping; s++) {
          const slot = slots[s]!;
          const { log } = slot;
          if (slot.position >= log.length) continue;
          worked = true;
          const start = slot.position;
          const batch = log.slice(start, start + equalChunkSize(log.length - start, batchSize));
          const t0 = performance.now();
          let done: number;
          try {
            done = await this.runner.run(batch);
          } catch (err) {
            // Only a failed dead-letter publish on a closing bus gets here; keep the offsets uncommitted.
            this.logger.error({ err, topic: slot.topic, partition: slot.partition }, 'bus: batch failed unexpectedly');
            done = 0;
          }
          if (done > 0) {
            slot.position = start + done;
            slot.committed[slot.partition] = slot.position;
            slot.consumed.inc(done);
            slot.seconds.observe((performance.now() - t0) / 1000);
            this.status.lastBatchAt = Date.now();
          }
          if (done < batch.length) break; // stopping
        }
        if (this.stopping) break;
        if (worked) {
          // Let publishers, timers and I/O run between rounds.
          await nextTick();
        } else if (!this.woken) {
          await new Promise<void>((resolve) => {
            this.waiting = resolve;
          });
        }
      }
    } finally {
      for (const name of this.status.topics) this.bus.topic(name).subscribers.delete(this);
      this.status.running = false;
      if (this.group.running === this) delete this.group.running;
    }
  }
}

function committedFor(group: MemGroup, topic: string, partitions: number): (number | undefined)[] {
  let c = group.committed.get(topic);
  if (!c) {
    c = new Array<number | undefined>(partitions).fill(undefined);
    group.committed.set(topic, c);
  }
  return c;
}

function parseOffset(offset: string): number {
  if (!/^-?\d+$/.test(offset)) throw new Error(`bus resetOffsets: offset must be an integer string, got "${offset}"`);
  return Number(offset);
}

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));
