/**
 * Kafka adapter of the bus port (kafkajs). Semantics in bus.ts; the retry /
 * isolate / dead-letter logic is the shared BatchRunner, so it behaves like
 * the memory adapter. This file connects and composes the parts:
 *  - kafka-bus-producer.ts: one producer per bus (acks -1, murmur2;
 *    idempotent when topics are replicated, see below);
 *  - kafka-bus-consumer.ts: one kafkajs consumer per consume() call, manual
 *    commits after the handler succeeded, heartbeats during long batches,
 *    eviction of a dead predecessor before joining;
 *  - kafka-bus-admin.ts: one admin client per bus for topics, offsets,
 *    replay, reading a topic, DLQ summaries and ping;
 *  - kafka-errors.ts: which kafkajs failures are a DependencyError.
 *
 * Start-up and ping() are bounded by connectTimeoutMs and fail with a
 * DependencyError naming KAFKA_BROKERS; kafkajs' own retries are bounded too,
 * so nothing keeps retrying in the background for long. One running consumer
 * per group per bus; a group is rewound only while it has none.
 */
import { Kafka, Partitioners, logLevel, type Admin } from 'kafkajs';
import { withTimeout } from '../backoff.js';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import type {
  Bus,
  BusMessage,
  Consumer,
  ConsumerOptions,
  DeadLetterSummary,
  DeadLetterSummaryOptions,
  OutgoingMessage,
  PartitionOffsets,
  ReplayFrom,
} from './bus.js';
import { KafkaBusAdmin } from './kafka-bus-admin.js';
import { KafkaBusConsumer, type KafkaConsumerSettings } from './kafka-bus-consumer.js';
import { KafkaBusMessage } from './kafka-bus-message.js';
import { KafkaBusProducer } from './kafka-bus-producer.js';
import { KafkaDeadLetterIndex } from './kafka-dead-letter-index.js';
import { kafkaCall } from './kafka-errors.js';
import { kafkaLogCreator } from './kafka-log.js';

export interface KafkaBusOptions extends KafkaConsumerSettings {
  brokers: string[];
  clientId: string;
  partitions: number;
  /** Copies of each partition of the topics this bus creates (KAFKA_REPLICATION_FACTOR). Default 1. */
  replicationFactor?: number;
  /** min.insync.replicas of the topics this bus creates (KAFKA_MIN_INSYNC_REPLICAS). Default 1. */
  minInsyncReplicas?: number;
  connectTimeoutMs: number;
  logger: Logger;
}

const ADAPTER = 'kafka';
/** The client's own retry (bounded: start-up, admin calls, the single-node producer). */
const CLIENT_RETRY = { initialRetryTime: 100, maxRetryTime: 2000, retries: 5 };
/** An idempotent producer's: long enough to ride out a leader election (a fenced broker, ~4-10 s), then fail. */
const PRODUCER_RETRY = { initialRetryTime: 100, maxRetryTime: 2000, retries: 10 };

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
    retry: CLIENT_RETRY,
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(logger.child({ component: 'kafkajs' })),
  });
  const admin = kafka.admin();
  // Replicated topics move their leaders when a broker fails: a send the old leader wrote but did not acknowledge is
  // retried, and an idempotent producer (a producer id and sequence numbers per partition) keeps the broker from
  // writing it twice. kafkajs keeps that order only with one request in flight per broker, and would retry an
  // idempotent send forever: its retry stays bounded (PRODUCER_RETRY; a publish still fails with a DependencyError
  // when the cluster stays unreachable, callers republish, and every sink is idempotent by event id). One broker
  // moves no leader: the single-node producer stays as it was.
  const idempotent = (options.replicationFactor ?? 1) > 1;
  const newProducer = () =>
    kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: true,
      ...(idempotent ? { idempotent, maxInFlightRequests: 1, retry: PRODUCER_RETRY } : {}),
    });
  const producer = newProducer();
  // kafka-bus-producer.ts: an idempotent producer whose sequence numbers a new leader refuses is replaced.
  const renew = idempotent
    ? async () => {
        logger.warn('bus: kafka refused the producer sequence numbers after a leader change; new producer id');
        const fresh = newProducer();
        await kafkaCall('new producer', () => fresh.connect());
        return fresh;
      }
    : undefined;

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
    await withTimeout(
      Promise.allSettled([admin.disconnect(), producer.disconnect()]),
      2000,
      () => new Error('disconnect timeout'),
    ).catch(() => undefined);
    throw new DependencyError(
      'kafka',
      `cannot reach KAFKA_BROKERS=${brokers.join(',')} within ${connectTimeoutMs} ms: ${errorMessage(err)}`,
      { cause: err },
    );
  }
  logger.debug({ brokers }, 'bus: connected to kafka');
  // kafka-bus-producer.ts: on a cluster, one partition per send (a kafkajs retry can skip partitions of a moved leader).
  const partitionCount = idempotent
    ? async (topic: string) => {
        const { topics } = await kafkaCall(`partitions of ${topic}`, () =>
          admin.fetchTopicMetadata({ topics: [topic] }),
        );
        const n = topics[0]?.partitions.length ?? 0;
        if (n < 1) throw new DependencyError('kafka', `topic ${topic} has no partitions yet`);
        return n;
      }
    : undefined;
  return new KafkaBus(options, logger, kafka, admin, new KafkaBusProducer(producer, renew, partitionCount));
}

class KafkaBus implements Bus {
  readonly adapter = ADAPTER;
  /** groupId -> running consumer of this bus. */
  readonly running = new Map<string, KafkaBusConsumer>();
  readonly deadLetters: KafkaDeadLetterIndex;
  private readonly adminOps: KafkaBusAdmin;
  private closed = false;

  constructor(
    readonly options: KafkaBusOptions,
    readonly logger: Logger,
    readonly kafka: Kafka,
    readonly admin: Admin,
    private readonly producer: KafkaBusProducer,
  ) {
    this.deadLetters = new KafkaDeadLetterIndex(
      kafka,
      admin,
      logger,
      (topic, partition, record) => new KafkaBusMessage(topic, partition, record),
    );
    this.adminOps = new KafkaBusAdmin(options, kafka, admin, logger, this.deadLetters);
  }

  ensureTopics(topics: string[]): Promise<void> {
    return this.adminOps.ensureTopics(topics);
  }

  publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    return this.producer.publish(topic, messages);
  }

  async consume(options: ConsumerOptions): Promise<Consumer> {
    if (this.closed) throw new Error('kafka bus is closed');
    if (!options.topics.length) throw new Error('bus consume: at least one topic');
    if (this.running.has(options.groupId)) {
      throw new Error(
        `bus consume: consumer group "${options.groupId}" already has a running consumer on this bus; stop it first (one consumer per group)`,
      );
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
      throw new Error(
        `bus resetOffsets: consumer group "${groupId}" has a running consumer; stop it before rewinding offsets`,
      );
    }
    await this.adminOps.resetOffsets(groupId, topic, from);
  }

  committedOffsets(groupId: string, topic: string): Promise<PartitionOffsets> {
    return this.adminOps.committedOffsets(groupId, topic);
  }

  endOffsets(topic: string): Promise<PartitionOffsets> {
    return this.adminOps.endOffsets(topic);
  }

  deadLetterSummary(
    topics: string[],
    options: DeadLetterSummaryOptions = {},
  ): Promise<Record<string, DeadLetterSummary>> {
    return this.adminOps.deadLetterSummary(topics, options);
  }

  readTopic(topic: string, onMessage: (message: BusMessage) => void | Promise<void>): Promise<number> {
    return this.adminOps.readTopic(topic, onMessage);
  }

  ping(): Promise<void> {
    return this.adminOps.ping();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.running.values()].map((c) => c.stop()));
    await this.deadLetters.close();
    await Promise.allSettled([this.producer.disconnect(), this.adminOps.disconnect()]);
  }
}
