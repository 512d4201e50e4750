/**
 * Kafka adapter of the bus port (kafkajs). Semantics in bus.ts; the retry /
 * isolate / dead-letter logic is the shared BatchRunner, so it behaves like
 * the memory adapter.
 *
 *  - one producer (acks -1, kafkajs' DefaultPartitioner: murmur2, Java
 *    compatible) and one admin client per bus;
 *  - one kafkajs consumer per consume() call (partitions shared out by
 *    ordered-round-robin-assigner.ts), manual commits: each chunk of
 *    at most batchSize messages is handed to the runner and resolved when
 *    done; `offset = last + 1` is committed once per kafkajs batch (earlier
 *    before a retry backoff, and always before eachBatch returns);
 *  - start-up and ping() are bounded by connectTimeoutMs and fail with a
 *    DependencyError naming KAFKA_BROKERS; kafkajs' own retries are bounded
 *    too, so nothing keeps retrying in the background for long;
 *  - group membership: a member is dropped after sessionTimeoutMs without a
 *    heartbeat; heartbeats go every heartbeatIntervalMs, also while a long
 *    batch runs. Before joining, a consumer removes members left by a dead
 *    process of this machine (kafka-predecessor-eviction.ts), so a process
 *    restarted after a SIGKILL resumes at once instead of after the session
 *    timeout; a member of another machine that died is dropped after it.
 */
import {
  Kafka,
  Partitioners,
  logLevel,
  type Admin,
  type Consumer as KafkaConsumer,
  type EachBatchPayload,
  type IHeaders,
  type KafkaMessage,
  type Message,
  type Producer,
} from 'kafkajs';
import { withTimeout } from '../backoff.js';
import { equalChunkSize } from './equal-chunks.js';
import { orderedRoundRobinAssigner } from './ordered-round-robin-assigner.js';
import { evictDeadPredecessors } from './kafka-predecessor-eviction.js';
import { withGroupCoordinator } from './kafka-group-coordinator.js';
import { kafkaLogCreator } from './kafka-log.js';
import { KafkaDeadLetterIndex } from './kafka-dead-letter-index.js';
import { KafkaTopicTail } from './kafka-topic-tail.js';
import { parseDeadLetter } from './dead-letters.js';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { BatchRunner } from './batch-runner.js';
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

/** Most (approximate, UTF-16 length) bytes per producer send: under the broker's default 1 MB batch limit. */
const MAX_SEND_BYTES = 768 * 1024;

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  partitions: number;
  batchSize: number;
  maxAttempts: number;
  retryBackoffMs: number;
  /** Cap of one retry delay (default 30 s). */
  retryMaxBackoffMs?: number;
  connectTimeoutMs: number;
  /** Fetch tuning (PostHog-style batch consumers): bigger fetches make bigger store batches. */
  fetchMaxWaitMs?: number;
  fetchMinBytes?: number;
  fetchMaxBytesPerPartition?: number;
  /** Group session timeout (kafkajs default 30 s): how long a dead member of another machine holds its partitions. */
  sessionTimeoutMs?: number;
  /** Heartbeat interval, also kept during long batches (kafkajs default 3 s). */
  heartbeatIntervalMs?: number;
  logger: Logger;
}

const ADAPTER = 'kafka';
/** Defaults of KAFKA_SESSION_TIMEOUT_MS / KAFKA_HEARTBEAT_INTERVAL_MS (core/config.ts says why). */
const DEFAULT_SESSION_TIMEOUT_MS = 10000;
const DEFAULT_HEARTBEAT_INTERVAL_MS = 1000;

export async function createKafkaBus(options: KafkaBusOptions): Promise<Bus> {
  const { brokers, connectTimeoutMs } = options;
  const logger = options.logger.child({ component: 'bus', adapter: ADAPTER });
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers,
    // One socket attempt never takes the whole start-up budget.
    connectionTimeout: Math.max(500, Math.min(3000, Math.floor(connectTimeoutMs / 3))),
    requestTimeout: 30000,
    // Bounded: ~100+200+400+800+1600 ms (+/- 20%), then the operation fails.
    retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 5 },
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(logger.child({ component: 'kafkajs' })),
  });
  const admin = kafka.admin();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: true });

  try {
    await withTimeout(
      (async () => {
        await admin.connect();
        await admin.describeCluster();
        await producer.connect();
      })(),
      connectTimeoutMs,
      () => new Error(`no answer within ${connectTimeoutMs} ms`),
    );
  } catch (err) {
    // Stop whatever kafkajs is still trying; do not wait long for it.
    await withTimeout(Promise.allSettled([admin.disconnect(), producer.disconnect()]), 2000, () => new Error('disconnect timeout')).catch(() => undefined);
    throw new DependencyError(
      'kafka',
      `cannot reach KAFKA_BROKERS=${brokers.join(',')} within ${connectTimeoutMs} ms: ${errorMessage(err)}`,
      { cause: err },
    );
  }
  logger.debug({ brokers }, 'bus: connected to kafka');
  return new KafkaBus(options, logger, kafka, admin, producer);
}

class KafkaBus implements Bus {
  readonly adapter = ADAPTER;
  /** groupId -> running consumer of this bus. */
  readonly running = new Map<string, KafkaBusConsumer>();
  private readonly publishedMetrics = new Map<string, { inc(n?: number): void }>();
  readonly deadLetters: KafkaDeadLetterIndex;
  private closed = false;

  constructor(
    readonly options: KafkaBusOptions,
    readonly logger: Logger,
    readonly kafka: Kafka,
    readonly admin: Admin,
    private readonly producer: Producer,
  ) {
    this.deadLetters = new KafkaDeadLetterIndex(kafka, admin, logger, (topic, partition, record) => new KafkaBusMessage(topic, partition, record));
  }

  async ensureTopics(topics: string[]): Promise<void> {
    const names = [...new Set(topics.flatMap((t) => [t, dlqTopic(t)]))];
    if (!names.length) return;
    await this.call('ensureTopics', async () => {
      await this.admin.createTopics({
        topics: names.map((topic) => ({ topic, numPartitions: this.options.partitions })),
        waitForLeaders: true,
      });
      // createTopics skips the leader wait when some topics already existed: wait here for all of them.
      const until = Date.now() + 30000;
      for (;;) {
        const { topics: meta } = await this.admin.fetchTopicMetadata({ topics: names });
        if (meta.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
        if (Date.now() > until) throw new Error(`topics ${names.join(', ')} have no leader after 30 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    });
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (!messages.length) return;
    const out = new Array<Message>(messages.length);
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      if (typeof m.key !== 'string' || typeof m.value !== 'string') throw new TypeError(`bus publish to ${topic}: key and value must be strings`);
      out[i] = { key: m.key, value: m.value, headers: m.headers, timestamp: m.timestamp === undefined ? undefined : String(m.timestamp) };
    }
    // kafkajs puts one send's messages for a partition into one record batch, and the
    // broker refuses a batch over message.max.bytes (1 MB by default): send in slices.
    let start = 0;
    let bytes = 0;
    for (let i = 0; i <= out.length; i++) {
      if (i < out.length) {
        const m = messages[i]!;
        const size = m.value.length + m.key.length + 64;
        if (bytes + size <= MAX_SEND_BYTES || i === start) {
          bytes += size;
          continue;
        }
      }
      const slice = out.slice(start, i);
      await this.call(`publish to ${topic}`, () => this.producer.send({ topic, acks: -1, messages: slice }));
      start = i;
      bytes = i < out.length ? messages[i]!.value.length + messages[i]!.key.length + 64 : 0;
    }
    let metric = this.publishedMetrics.get(topic);
    if (!metric) {
      metric = metrics.busPublished.labels(ADAPTER, topic);
      this.publishedMetrics.set(topic, metric);
    }
    metric.inc(messages.length);
  }

  async consume(options: ConsumerOptions): Promise<Consumer> {
    if (this.closed) throw new Error('kafka bus is closed');
    if (!options.topics.length) throw new Error('bus consume: at least one topic');
    if (this.running.has(options.groupId)) {
      throw new Error(`bus consume: consumer group "${options.groupId}" already has a running consumer on this bus; stop it first (one consumer per group)`);
    }
    const consumer = new KafkaBusConsumer(this, options);
    this.running.set(options.groupId, consumer);
    try {
      await consumer.start();
    } catch (err) {
      this.running.delete(options.groupId);
      await consumer.stop().catch(() => undefined);
      throw err;
    }
    return consumer;
  }

  async resetOffsets(groupId: string, topic: string, from: ReplayFrom): Promise<void> {
    if (this.running.has(groupId)) {
      throw new Error(`bus resetOffsets: consumer group "${groupId}" has a running consumer; stop it before rewinding offsets`);
    }
    const partitions = await this.call(`resetOffsets ${groupId}/${topic}`, async () => {
      const bounds = await this.admin.fetchTopicOffsets(topic);
      switch (from.kind) {
        case 'earliest':
          return bounds.map((b) => ({ partition: b.partition, offset: b.low }));
        case 'latest':
          return bounds.map((b) => ({ partition: b.partition, offset: b.high }));
        case 'offset': {
          if (!/^-?\d+$/.test(from.offset)) throw new Error(`bus resetOffsets: offset must be an integer string, got "${from.offset}"`);
          const target = BigInt(from.offset);
          const chosen = from.partition === undefined ? bounds : bounds.filter((b) => b.partition === from.partition);
          if (!chosen.length) throw new Error(`bus resetOffsets: topic ${topic} has no partition ${from.partition}`);
          return chosen.map((b) => ({ partition: b.partition, offset: clamp(target, BigInt(b.low), BigInt(b.high)).toString() }));
        }
        case 'timestamp': {
          const byTime = await this.admin.fetchTopicOffsetsByTimestamp(topic, from.timestamp);
          // kafkajs answers the high-water mark where no message is that recent.
          return byTime.map((b) => ({ partition: b.partition, offset: b.offset }));
        }
      }
    });
    const { groups } = await this.call(`resetOffsets ${groupId}/${topic}`, () => this.admin.describeGroups([groupId]));
    const state = groups.find((g) => g.groupId === groupId)?.state ?? 'Dead';
    if (state !== 'Empty' && state !== 'Dead') {
      throw new Error(`bus resetOffsets: consumer group "${groupId}" has running members elsewhere; stop them before rewinding offsets (The consumer group must have no running instances, current state: ${state})`);
    }
    try {
      // An empty group's offsets are committed directly (generation -1), as Kafka's own tools do.
      await withGroupCoordinator(this.kafka, groupId, (coordinator) =>
        coordinator.offsetCommit({ groupId, groupGenerationId: -1, memberId: '', topics: [{ topic, partitions }] }),
      );
    } catch (err) {
      if (/rebalanc|generation|member/i.test(errorMessage(err))) {
        throw new Error(`bus resetOffsets: consumer group "${groupId}" has running members elsewhere; stop them before rewinding offsets (${errorMessage(err)})`);
      }
      throw wrap(`resetOffsets ${groupId}/${topic}`, err);
    }
  }

  async committedOffsets(groupId: string, topic: string): Promise<PartitionOffsets> {
    const result = await this.call('committedOffsets', () => this.admin.fetchOffsets({ groupId, topics: [topic] }));
    const out: PartitionOffsets = {};
    for (const t of result) {
      if (t.topic !== topic) continue;
      for (const p of t.partitions) if (Number(p.offset) >= 0) out[p.partition] = p.offset;
    }
    return out;
  }

  async endOffsets(topic: string): Promise<PartitionOffsets> {
    const bounds = await this.call('endOffsets', () => this.admin.fetchTopicOffsets(topic));
    const out: PartitionOffsets = {};
    for (const b of bounds) out[b.partition] = b.high;
    return out;
  }

  async deadLetterSummary(topics: string[], options: DeadLetterSummaryOptions = {}): Promise<Record<string, DeadLetterSummary>> {
    const byDlq = await this.call('deadLetterSummary', () => this.deadLetters.summary(topics.map(dlqTopic), options.recentWindowMs ?? 300_000, options.waitMs ?? 1000));
    return Object.fromEntries(topics.map((t) => [t, byDlq[dlqTopic(t)]!]));
  }

  async readTopic(topic: string, onMessage: (message: BusMessage) => void | Promise<void>): Promise<number> {
    let read = 0;
    let ends = new Map<number, bigint>();
    const tail = new KafkaTopicTail({
      kafka: this.kafka,
      admin: this.admin,
      topics: [topic],
      logger: this.logger,
      wrap: (t, partition, record) => new KafkaBusMessage(t, partition, record),
      onMessage: async (m) => {
        if (BigInt(m.offset) >= (ends.get(m.partition) ?? 0n)) return; // arrived after the call
        read++;
        await onMessage(m);
      },
    });
    try {
      const bounds = await this.call(`readTopic ${topic}`, async () => {
        // listTopics, not fetchTopicMetadata: that would create a missing topic (auto-creation).
        if (!(await this.admin.listTopics()).includes(topic)) throw new Error(`topic ${topic} does not exist`);
        return tail.bounds();
      });
      ends = new Map(bounds.map((b) => [b.partition, BigInt(b.high)]));
      if (!bounds.some((b) => BigInt(b.high) > BigInt(b.low))) return 0;
      // A tool's read: as long as it takes, but not forever on a broker that stopped answering.
      if (!(await tail.reached(bounds, 30 * 60_000))) throw new DependencyError('kafka', `reading ${topic} did not reach its end offsets`);
      return read;
    } finally {
      await tail.stop();
    }
  }

  async ping(): Promise<void> {
    const ms = this.options.connectTimeoutMs;
    try {
      await withTimeout(this.admin.describeCluster(), ms, () => new Error(`no answer within ${ms} ms`));
    } catch (err) {
      throw new DependencyError('kafka', `KAFKA_BROKERS=${this.options.brokers.join(',')}: ${errorMessage(err)}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.running.values()].map((c) => c.stop()));
    await this.deadLetters.close();
    await Promise.allSettled([this.producer.disconnect(), this.admin.disconnect()]);
  }

  /** Runs a kafkajs call; broker-side failures become DependencyError (retryable). */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw wrap(what, err);
    }
  }
}

class KafkaBusConsumer implements Consumer {
  readonly status: ConsumerStatus;
  private readonly abort = new AbortController();
  private readonly consumer: KafkaConsumer;
  private readonly runner: BatchRunner;
  private readonly batchSize: number;
  private readonly logger: Logger;
  private readonly perTopic = new Map<string, { consumed: { inc(n?: number): void }; seconds: { observe(v: number): void } }>();
  private stopped: Promise<void> | undefined;
  private readonly heartbeatEveryMs: number;
  /** Commits what the current kafkajs batch has finished and heartbeats; the runner calls it while backing off. */
  private beforeBackoff: (() => Promise<void>) | undefined;

  constructor(
    private readonly bus: KafkaBus,
    private readonly options: ConsumerOptions,
  ) {
    const { groupId, topics } = options;
    this.status = { groupId, topics: [...topics], running: false };
    this.batchSize = options.maxBatchSize ?? bus.options.batchSize;
    this.logger = bus.logger.child({ group: groupId });
    const sessionTimeout = bus.options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
    this.heartbeatEveryMs = Math.min(bus.options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS, Math.floor(sessionTimeout / 3));
    this.consumer = bus.kafka.consumer({
      groupId,
      sessionTimeout,
      heartbeatInterval: this.heartbeatEveryMs,
      allowAutoTopicCreation: true,
      partitionAssigners: [orderedRoundRobinAssigner],
      // maxWait bounds how long stop() waits for an idle long-poll fetch and the
      // event-to-store latency; minBytes and the per-partition cap let a busy topic
      // arrive in large batches (one store insert per batch is the dominant cost).
      // bench:pipeline at 5,000 quotes/s: 1 MB rather than 256 KB took ClickHouse
      // from 28-31 to 17-25 CPU seconds per 30 s (fewer parts to write and merge)
      // and the p99 from 1.0-2.2 s to 1.0-1.6 s; a slow feed still returns at maxWait.
      maxWaitTimeInMs: bus.options.fetchMaxWaitMs ?? 500,
      minBytes: bus.options.fetchMinBytes ?? 1024 * 1024,
      maxBytesPerPartition: bus.options.fetchMaxBytesPerPartition ?? 8 * 1024 * 1024,
      maxBytes: Math.max(32 * 1024 * 1024, (bus.options.fetchMaxBytesPerPartition ?? 0) * 4),
      retry: { initialRetryTime: 300, maxRetryTime: 10000, retries: 10 },
    });
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
      heartbeat: () => (this.beforeBackoff ? this.beforeBackoff() : Promise.resolve()),
      alreadyDeadLettered: (message) => bus.deadLetters.alreadyRecorded(dlqTopic(message.topic), message, groupId),
      deadLetterSent: (message, dead) => {
        const record = parseDeadLetter(dead.headers ?? {});
        if (record) bus.deadLetters.sent(dlqTopic(message.topic), record);
      },
    });
    const { CRASH, STOP } = this.consumer.events;
    this.consumer.on(CRASH, (e) => {
      this.logger.error({ err: errorMessage(e.payload.error), restart: e.payload.restart }, 'bus: kafka consumer crashed');
      if (!e.payload.restart) {
        this.status.running = false;
        if (this.bus.running.get(groupId) === this) this.bus.running.delete(groupId);
      }
    });
    this.consumer.on(STOP, () => {
      this.status.running = false;
    });
  }

  async start(): Promise<void> {
    const { topics, fromBeginning = true } = this.options;
    try {
      await evictDeadPredecessors(this.bus.kafka, this.bus.admin, this.options.groupId, this.logger);
      await this.consumer.connect();
      await this.consumer.subscribe({ topics: [...new Set(topics)], fromBeginning });
      await this.consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: (payload) => this.eachBatch(payload),
      });
    } catch (err) {
      throw wrap(`consume ${topics.join(',')} as ${this.options.groupId}`, err);
    }
    this.status.running = true;
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.abort.abort();
      try {
        await this.consumer.disconnect();
      } finally {
        this.status.running = false;
        if (this.bus.running.get(this.options.groupId) === this) this.bus.running.delete(this.options.groupId);
      }
    })();
    return this.stopped;
  }

  /**
   * Hands the kafkajs batch to the runner in equal chunks of at most batchSize.
   * Each chunk's offsets are resolved once it is done; the commit (`last + 1`)
   * is sent once per kafkajs batch, and earlier whenever the runner is about
   * to back off (so a stalled chunk never holds finished ones uncommitted) or
   * the consumer stops. One commit per fetch instead of one per chunk keeps
   * the consumer from falling behind the producer (see the bench).
   */
  private async eachBatch({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = batch;
    let m = this.perTopic.get(topic);
    if (!m) {
      m = { consumed: metrics.busConsumed.labels(ADAPTER, topic, this.options.groupId), seconds: metrics.busBatchSeconds.labels(ADAPTER, topic, this.options.groupId) };
      this.perTopic.set(topic, m);
    }
    let pendingOffset: string | undefined;
    let pendingCount = 0;
    const commit = async () => {
      if (pendingOffset === undefined) return;
      const offset = pendingOffset;
      const count = pendingCount;
      pendingOffset = undefined;
      pendingCount = 0;
      // Not consumer.commitOffsets(): kafkajs drops that silently once stop() has begun, and stop()
      // must still commit the in-flight batch. With explicit offsets this commits unconditionally.
      await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset }] }] });
      m.consumed.inc(count);
    };
    this.beforeBackoff = async () => {
      await commit();
      await heartbeat();
    };
    // A slow handler (not only the runner's backoff) must not cost the group membership.
    const keepAlive = setInterval(() => {
      heartbeat().catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'bus: heartbeat during a long batch failed'));
    }, this.heartbeatEveryMs);
    const chunkSize = equalChunkSize(messages.length, this.batchSize);
    try {
      for (let start = 0; start < messages.length; start += chunkSize) {
        if (!isRunning() || isStale() || this.abort.signal.aborted) break;
        const t0 = performance.now();
        const end = Math.min(messages.length, start + chunkSize);
        const chunk = new Array<BusMessage>(end - start);
        for (let i = start; i < end; i++) chunk[i - start] = new KafkaBusMessage(topic, partition, messages[i]!);
        const done = await this.runner.run(chunk);
        if (done > 0) {
          const last = chunk[done - 1]!.offset;
          resolveOffset(last);
          pendingOffset = (BigInt(last) + 1n).toString();
          pendingCount += done;
          m.seconds.observe((performance.now() - t0) / 1000);
          this.status.lastBatchAt = Date.now();
        }
        if (done < chunk.length) break; // stopping: the rest stays uncommitted
      }
      await commit();
    } finally {
      clearInterval(keepAlive);
      this.beforeBackoff = undefined;
    }
  }
}

/**
 * A delivered Kafka record. Key, value and headers are decoded from the
 * record's buffers on each read rather than up front: handlers read a value
 * once, and decoded up front a 40k-message batch's strings (~30 MB) lived
 * until the batch was done, long enough for the young generation to copy
 * them twice and promote them (bench:pipeline).
 */
class KafkaBusMessage implements BusMessage {
  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly record: KafkaMessage,
  ) {}

  get offset(): string {
    return this.record.offset;
  }

  get key(): string {
    return this.record.key ? this.record.key.toString('utf8') : '';
  }

  get value(): string {
    return this.record.value ? this.record.value.toString('utf8') : '';
  }

  get headers(): Record<string, string> {
    return this.record.headers ? decodeHeaders(this.record.headers) : {};
  }

  get timestamp(): number {
    return Number(this.record.timestamp);
  }
}

function decodeHeaders(headers: IHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    let v = headers[name];
    if (Array.isArray(v)) v = v[v.length - 1]; // repeated header: the last one wins
    if (v !== undefined) out[name] = typeof v === 'string' ? v : v.toString('utf8');
  }
  return out;
}

const clamp = (n: bigint, lo: bigint, hi: bigint) => (n < lo ? lo : n > hi ? hi : n);

/** kafkajs failures that mean "the broker is unreachable or busy", i.e. worth retrying later. */
const DEPENDENCY_ERRORS = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound',
  'KafkaJSLockTimeout',
  'KafkaJSTimeout',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSStaleTopicMetadataAssignment',
]);

function wrap(what: string, err: unknown): Error {
  if (err instanceof DependencyError) return err;
  const e = err as { name?: string; retriable?: boolean };
  if ((e?.name && DEPENDENCY_ERRORS.has(e.name)) || e?.retriable === true) {
    return new DependencyError('kafka', `${what}: ${errorMessage(err)}`, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}
