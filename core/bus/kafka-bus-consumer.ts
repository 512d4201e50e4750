/**
 * Consumer side of the Kafka bus: one kafkajs consumer per consume() call
 * (partitions shared out by ordered-round-robin-assigner.ts) with manual
 * commits. Each kafkajs batch is handed to the shared BatchRunner (retry /
 * isolate / dead-letter, as in the memory adapter) in equal chunks of at most
 * batchSize; `offset = last + 1` is committed once per kafkajs batch, earlier
 * before a retry backoff, and always before eachBatch returns (at-least-once).
 * With `partitionsConcurrently` > 1 kafkajs runs the batches of that many
 * partitions of a fetch at once, each with its own runner and commit.
 *
 * Group membership: a member is dropped after sessionTimeoutMs without a
 * heartbeat; heartbeats go every heartbeatIntervalMs, also while a long batch
 * runs. Before joining, a consumer removes members left by a dead process of
 * this machine (kafka-predecessor-eviction.ts), so a process restarted after a
 * SIGKILL resumes at once instead of after the session timeout.
 *
 * Crashes: kafkajs restarts a consumer itself after a retriable crash; after
 * any other (KafkaJSGroupCoordinatorNotFound on a fresh broker, an
 * inconsistent group protocol, ...) it leaves it disconnected for good. This
 * consumer then restarts it with backoff (RESTART_BASE_MS doubling to
 * RESTART_CAP_MS, jittered) until stop(); the backoff starts over once a
 * batch succeeds or an empty fetch completes. `status` tells health the rest
 * (consumer-health.ts): joined (GROUP_JOIN), fetching (FETCH_START), the crash
 * until it has joined and fetched again, and the restart count.
 */
import type { Admin, ConsumerRunConfig, Consumer as KafkaConsumer, EachBatchPayload, Kafka } from 'kafkajs';
import { backoffDelay } from '../backoff.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { BatchRunner, consumerRunnerOptions, type BusRetryDefaults } from './batch-runner.js';
import {
  dlqTopic,
  type BusMessage,
  type Consumer,
  type ConsumerOptions,
  type ConsumerStatus,
  type OutgoingMessage,
} from './bus.js';
import { parseDeadLetter } from './dead-letters.js';
import { equalChunkSize } from './equal-chunks.js';
import { KafkaBusMessage } from './kafka-bus-message.js';
import type { KafkaDeadLetterIndex } from './kafka-dead-letter-index.js';
import { wrapKafkaError } from './kafka-errors.js';
import { evictDeadPredecessors } from './kafka-predecessor-eviction.js';
import { orderedRoundRobinAssigner } from './ordered-round-robin-assigner.js';

const ADAPTER = 'kafka';
/** Defaults of KAFKA_SESSION_TIMEOUT_MS / KAFKA_HEARTBEAT_INTERVAL_MS (core/config.ts says why). */
const DEFAULT_SESSION_TIMEOUT_MS = 10000;
const DEFAULT_HEARTBEAT_INTERVAL_MS = 1000;
/** Restart backoff after a crash kafkajs does not restart itself: 1 s, doubling to 30 s, jittered (core/backoff.ts). */
const RESTART_BASE_MS = 1000;
const RESTART_CAP_MS = 30000;

/** The bus options a consumer reads (a subset of KafkaBusOptions). */
export interface KafkaConsumerSettings extends BusRetryDefaults {
  batchSize: number;
  /** Fetch tuning (PostHog-style batch consumers): bigger fetches make bigger store batches. */
  fetchMaxWaitMs?: number;
  fetchMinBytes?: number;
  fetchMaxBytesPerPartition?: number;
  /** Group session timeout (kafkajs default 30 s): how long a dead member of another machine holds its partitions. */
  sessionTimeoutMs?: number;
  /** Heartbeat interval, also kept during long batches (kafkajs default 3 s). */
  heartbeatIntervalMs?: number;
}

/** What a consumer needs of its bus. */
export interface KafkaConsumerHost {
  readonly options: KafkaConsumerSettings;
  readonly logger: Logger;
  readonly kafka: Kafka;
  readonly admin: Admin;
  /** groupId -> running consumer of this bus; a consumer removes itself when it stops (a crashed one restarts). */
  readonly running: Map<string, KafkaBusConsumer>;
  readonly deadLetters: KafkaDeadLetterIndex;
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
}

export class KafkaBusConsumer implements Consumer {
  readonly status: ConsumerStatus;
  private readonly abort = new AbortController();
  private readonly consumer: KafkaConsumer;
  /** One runner per topic-partition (its retry and dead-letter state is per batch), made on first use. */
  private readonly runners = new Map<string, BatchRunner>();
  private readonly makeRunner: (key: string) => BatchRunner;
  private readonly batchSize: number;
  private readonly logger: Logger;
  private readonly perTopic = new Map<
    string,
    { consumed: { inc(n?: number): void }; seconds: { observe(v: number): void } }
  >();
  private stopped: Promise<void> | undefined;
  /** Pending restart after a crash kafkajs does not restart itself. */
  private restartTimer: NodeJS.Timeout | undefined;
  /** Restarts since the consumer last worked (a batch done or an empty fetch): drives the backoff. */
  private restartAttempt = 0;
  private readonly runConfig: ConsumerRunConfig = {
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: (payload) => this.eachBatch(payload),
  };
  private readonly heartbeatEveryMs: number;
  /** Per topic-partition: commits what its current kafkajs batch has finished and heartbeats; its runner calls it while backing off. */
  private readonly beforeBackoff = new Map<string, () => Promise<void>>();

  constructor(
    private readonly bus: KafkaConsumerHost,
    private readonly options: ConsumerOptions,
  ) {
    const { groupId, topics } = options;
    this.status = { groupId, topics: [...topics], running: false, restarts: 0 };
    this.batchSize = options.maxBatchSize ?? bus.options.batchSize;
    this.logger = bus.logger.child({ group: groupId });
    const sessionTimeout = bus.options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
    this.heartbeatEveryMs = Math.min(
      bus.options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
      Math.floor(sessionTimeout / 3),
    );
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
    // kafkajs hands a fetch's partitions to this many handlers at once (in order within each partition).
    this.runConfig.partitionsConsumedConcurrently = options.partitionsConcurrently ?? 1;
    this.makeRunner = (key) =>
      new BatchRunner({
        ...consumerRunnerOptions(ADAPTER, options, bus, {
          status: this.status,
          signal: this.abort.signal,
          logger: this.logger,
        }),
        heartbeat: () => this.beforeBackoff.get(key)?.() ?? Promise.resolve(),
        alreadyDeadLettered: (message) => bus.deadLetters.alreadyRecorded(dlqTopic(message.topic), message, groupId),
        deadLetterSent: (message, dead) => {
          const record = parseDeadLetter(dead.headers ?? {});
          if (record) bus.deadLetters.sent(dlqTopic(message.topic), record);
        },
      });
    const { CRASH, GROUP_JOIN, FETCH_START, FETCH } = this.consumer.events;
    this.consumer.on(CRASH, (e) => this.crashed(errorMessage(e.payload.error), e.payload.restart));
    this.consumer.on(GROUP_JOIN, () => {
      this.status.joinedAt = Date.now();
    });
    this.consumer.on(FETCH_START, () => {
      if (this.status.joinedAt === undefined) return;
      this.status.lastFetchAt = Date.now();
      // Joined and fetching again: the crash is over (an idle topic may have nothing to consume).
      if (this.status.crash) {
        this.logger.info(
          { restarts: this.status.restarts },
          'bus: crashed consumer rejoined its group and is fetching',
        );
        delete this.status.crash;
      }
    });
    this.consumer.on(FETCH, (e) => {
      if (e.payload.numberOfBatches === 0) this.restartAttempt = 0;
    });
  }

  /** A kafkajs CRASH: kafkajs restarts the consumer itself when `restartedByKafkajs`; otherwise the bus does. */
  private crashed(reason: string, restartedByKafkajs: boolean): void {
    this.status.crash = { reason, at: Date.now() };
    delete this.status.joinedAt;
    delete this.status.lastFetchAt;
    if (this.abort.signal.aborted) return; // stopping: nothing to restart
    metrics.busConsumerCrashes.labels(ADAPTER, this.options.groupId, restartedByKafkajs ? 'kafkajs' : 'bus').inc();
    if (restartedByKafkajs) {
      this.status.restarts++;
      this.logger.error({ err: reason }, 'bus: kafka consumer crashed; kafkajs restarts it');
      return;
    }
    this.scheduleRestart(reason);
  }

  private scheduleRestart(reason: string): void {
    if (this.abort.signal.aborted || this.restartTimer) return;
    const attempt = ++this.restartAttempt;
    const delayMs = backoffDelay(attempt, RESTART_BASE_MS, RESTART_CAP_MS);
    this.status.crash = { ...(this.status.crash ?? { reason, at: Date.now() }), nextRestartAt: Date.now() + delayMs };
    this.logger.error(
      { err: reason, attempt, delay_ms: delayMs },
      'bus: kafka consumer crashed and kafkajs will not restart it; restarting it after a backoff',
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.restart();
    }, delayMs);
  }

  /** Reconnects and runs again; a failed join crashes again (CRASH event, next backoff), a failed connect too. */
  private async restart(): Promise<void> {
    if (this.abort.signal.aborted) return;
    this.status.restarts++;
    metrics.busConsumerRestarts.labels(ADAPTER, this.options.groupId).inc();
    if (this.status.crash) delete this.status.crash.nextRestartAt;
    this.logger.warn({ attempt: this.restartAttempt }, 'bus: restarting the crashed kafka consumer');
    try {
      await this.consumer.connect(); // kafkajs disconnected it when it crashed
      await this.consumer.run(this.runConfig);
    } catch (err) {
      this.status.crash = { reason: errorMessage(err), at: Date.now() };
      this.scheduleRestart(errorMessage(err));
      return;
    }
    // stop() ran while the restart was joining: leave the group again.
    if (this.abort.signal.aborted) await this.consumer.disconnect().catch(() => undefined);
  }

  async start(): Promise<void> {
    const { topics, fromBeginning = true } = this.options;
    try {
      await evictDeadPredecessors(this.bus.kafka, this.bus.admin, this.options.groupId, this.logger);
      await this.consumer.connect();
      await this.consumer.subscribe({ topics: [...new Set(topics)], fromBeginning });
      // A join that crashes does not throw here: CRASH comes first and the restart is scheduled.
      await this.consumer.run(this.runConfig);
    } catch (err) {
      throw wrapKafkaError(`consume ${topics.join(',')} as ${this.options.groupId}`, err);
    }
    this.status.running = true;
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.abort.abort();
      clearTimeout(this.restartTimer);
      this.restartTimer = undefined;
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
  private async eachBatch({
    batch,
    resolveOffset,
    heartbeat,
    commitOffsetsIfNecessary,
    isRunning,
    isStale,
  }: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = batch;
    let m = this.perTopic.get(topic);
    if (!m) {
      m = {
        consumed: metrics.busConsumed.labels(ADAPTER, topic, this.options.groupId),
        seconds: metrics.busBatchSeconds.labels(ADAPTER, topic, this.options.groupId),
      };
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
    const key = `${topic}/${partition}`;
    let runner = this.runners.get(key);
    if (!runner) this.runners.set(key, (runner = this.makeRunner(key)));
    this.beforeBackoff.set(key, async () => {
      await commit();
      await heartbeat();
    });
    // A slow handler (not only the runner's backoff) must not cost the group membership.
    const keepAlive = setInterval(() => {
      heartbeat().catch((err: unknown) =>
        this.logger.warn({ err: errorMessage(err) }, 'bus: heartbeat during a long batch failed'),
      );
    }, this.heartbeatEveryMs);
    const chunkSize = equalChunkSize(messages.length, this.batchSize);
    try {
      for (let start = 0; start < messages.length; start += chunkSize) {
        if (!isRunning() || isStale() || this.abort.signal.aborted) break;
        const t0 = performance.now();
        const end = Math.min(messages.length, start + chunkSize);
        const chunk = new Array<BusMessage>(end - start);
        for (let i = start; i < end; i++) chunk[i - start] = new KafkaBusMessage(topic, partition, messages[i]!);
        const done = await runner.run(chunk);
        if (done > 0) {
          const last = chunk[done - 1]!.offset;
          resolveOffset(last);
          pendingOffset = (BigInt(last) + 1n).toString();
          pendingCount += done;
          m.seconds.observe((performance.now() - t0) / 1000);
          this.status.lastBatchAt = Date.now();
          this.restartAttempt = 0;
        }
        if (done < chunk.length) break; // stopping: the rest stays uncommitted
      }
      await commit();
    } finally {
      clearInterval(keepAlive);
      this.beforeBackoff.delete(key);
    }
  }
}
