/**
 * Admin side of the Kafka bus (one kafkajs admin client per bus): topic
 * creation (partitions, replication factor, min.insync.replicas; an existing
 * topic is left as it is) with a wait for leaders, offset queries, rewinding a stopped
 * group (replay: earliest, latest, an offset or a timestamp), reading a topic
 * to its end offsets at the time of the call (operator tools), DLQ summaries
 * and the health ping. Whether this bus still runs a consumer of the group is
 * the bus's check (kafka-bus.ts); here the broker is asked whether members
 * run elsewhere. Broker failures surface as DependencyError.
 */
import type { Admin, Kafka } from 'kafkajs';
import { withTimeout } from '../backoff.js';
import { DependencyError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import {
  dlqTopic,
  type BusMessage,
  type DeadLetterSummary,
  type DeadLetterSummaryOptions,
  type PartitionOffsets,
  type ReplayFrom,
} from './bus.js';
import { KafkaBusMessage } from './kafka-bus-message.js';
import type { KafkaDeadLetterIndex } from './kafka-dead-letter-index.js';
import { kafkaCall, wrapKafkaError } from './kafka-errors.js';
import { withGroupCoordinator } from './kafka-group-coordinator.js';
import { KafkaTopicTail } from './kafka-topic-tail.js';

export interface KafkaAdminSettings {
  brokers: string[];
  partitions: number;
  /** Copies of each partition of a topic created here; unset: 1. */
  replicationFactor?: number;
  /** min.insync.replicas of a topic created here; unset: 1. */
  minInsyncReplicas?: number;
  connectTimeoutMs: number;
}

export class KafkaBusAdmin {
  constructor(
    private readonly settings: KafkaAdminSettings,
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly logger: Logger,
    private readonly deadLetters: KafkaDeadLetterIndex,
  ) {}

  async ensureTopics(topics: string[]): Promise<void> {
    const names = [...new Set(topics.flatMap((t) => [t, dlqTopic(t)]))];
    if (!names.length) return;
    await kafkaCall('ensureTopics', async () => {
      // On a loaded broker, createTopics' own leader wait can read "This server does not host this topic-partition"
      // for a topic created a moment ago and throw it: a retriable answer means "not yet", and the wait below (which
      // covers every topic; createTopics skips its wait when some already existed) reads it the same way.
      await this.admin
        .createTopics({
          topics: names.map((topic) => ({
            topic,
            numPartitions: this.settings.partitions,
            replicationFactor: this.settings.replicationFactor ?? 1,
            configEntries: [{ name: 'min.insync.replicas', value: String(this.settings.minInsyncReplicas ?? 1) }],
          })),
          waitForLeaders: true,
        })
        .catch((err: unknown) => {
          if ((err as { retriable?: boolean }).retriable !== true) throw err;
        });
      const until = Date.now() + 30000;
      for (;;) {
        const ready = await this.admin.fetchTopicMetadata({ topics: names }).then(
          ({ topics: meta }) => meta.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)),
          (err: unknown) => {
            if ((err as { retriable?: boolean }).retriable === true && Date.now() <= until) return false;
            throw err;
          },
        );
        if (ready) return;
        if (Date.now() > until) throw new Error(`topics ${names.join(', ')} have no leader after 30 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    });
  }

  /**
   * A read-only admin query, retried while the broker answers "not yet" (NOT_YET: a leader or coordinator that is
   * moving or not elected) for up to READ_RETRY_MS: right after a topic is created or a leader moves, kafkajs'
   * cached metadata can still name the old leader ("This server is not the leader for that topic-partition"); each
   * retry refreshes the topic's metadata first (the topic exists: an unknown topic is not retried, so the refresh
   * cannot auto-create one). Past the budget, or on any other error, it fails as kafkaCall does.
   */
  private async read<T>(what: string, topic: string, query: () => Promise<T>): Promise<T> {
    const until = Date.now() + READ_RETRY_MS;
    for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
      try {
        return await query();
      } catch (err) {
        if (!NOT_YET.has((err as { type?: string }).type ?? '') || Date.now() + wait > until) {
          throw wrapKafkaError(what, err);
        }
      }
      await new Promise((r) => setTimeout(r, wait));
      await this.admin.fetchTopicMetadata({ topics: [topic] }).catch(() => undefined);
    }
  }

  /** Rewinds `groupId` on `topic`; the group must have no member running anywhere. */
  async resetOffsets(groupId: string, topic: string, from: ReplayFrom): Promise<void> {
    const partitions = await kafkaCall(`resetOffsets ${groupId}/${topic}`, async () => {
      const bounds = await this.admin.fetchTopicOffsets(topic);
      switch (from.kind) {
        case 'earliest':
          return bounds.map((b) => ({ partition: b.partition, offset: b.low }));
        case 'latest':
          return bounds.map((b) => ({ partition: b.partition, offset: b.high }));
        case 'offset': {
          if (!/^-?\d+$/.test(from.offset))
            throw new Error(`bus resetOffsets: offset must be an integer string, got "${from.offset}"`);
          const target = BigInt(from.offset);
          const chosen = from.partition === undefined ? bounds : bounds.filter((b) => b.partition === from.partition);
          if (!chosen.length) throw new Error(`bus resetOffsets: topic ${topic} has no partition ${from.partition}`);
          return chosen.map((b) => ({
            partition: b.partition,
            offset: clamp(target, BigInt(b.low), BigInt(b.high)).toString(),
          }));
        }
        case 'timestamp': {
          const byTime = await this.admin.fetchTopicOffsetsByTimestamp(topic, from.timestamp);
          // kafkajs answers the high-water mark where no message is that recent.
          return byTime.map((b) => ({ partition: b.partition, offset: b.offset }));
        }
      }
    });
    const { groups } = await kafkaCall(`resetOffsets ${groupId}/${topic}`, () => this.admin.describeGroups([groupId]));
    const state = groups.find((g) => g.groupId === groupId)?.state ?? 'Dead';
    if (state !== 'Empty' && state !== 'Dead') {
      throw new Error(
        `bus resetOffsets: consumer group "${groupId}" has running members elsewhere; stop them before rewinding offsets (The consumer group must have no running instances, current state: ${state})`,
      );
    }
    try {
      // An empty group's offsets are committed directly (generation -1), as Kafka's own tools do.
      await withGroupCoordinator(this.kafka, groupId, (coordinator) =>
        coordinator.offsetCommit({ groupId, groupGenerationId: -1, memberId: '', topics: [{ topic, partitions }] }),
      );
    } catch (err) {
      if (/rebalanc|generation|member/i.test(errorMessage(err))) {
        throw new Error(
          `bus resetOffsets: consumer group "${groupId}" has running members elsewhere; stop them before rewinding offsets (${errorMessage(err)})`,
        );
      }
      throw wrapKafkaError(`resetOffsets ${groupId}/${topic}`, err);
    }
  }

  async committedOffsets(groupId: string, topic: string): Promise<PartitionOffsets> {
    const result = await this.read('committedOffsets', topic, () =>
      this.admin.fetchOffsets({ groupId, topics: [topic] }),
    );
    const out: PartitionOffsets = {};
    for (const t of result) {
      if (t.topic !== topic) continue;
      for (const p of t.partitions) if (Number(p.offset) >= 0) out[p.partition] = p.offset;
    }
    return out;
  }

  async endOffsets(topic: string): Promise<PartitionOffsets> {
    const bounds = await this.read('endOffsets', topic, () => this.admin.fetchTopicOffsets(topic));
    const out: PartitionOffsets = {};
    for (const b of bounds) out[b.partition] = b.high;
    return out;
  }

  async deadLetterSummary(
    topics: string[],
    options: DeadLetterSummaryOptions = {},
  ): Promise<Record<string, DeadLetterSummary>> {
    const byDlq = await kafkaCall('deadLetterSummary', () =>
      this.deadLetters.summary(topics.map(dlqTopic), options.recentWindowMs ?? 300_000, options.waitMs ?? 1000),
    );
    return Object.fromEntries(topics.map((t) => [t, byDlq[dlqTopic(t)]!]));
  }

  /** Reads `topic` up to its end offsets at the time of the call; answers how many messages were read. */
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
      const bounds = await kafkaCall(`readTopic ${topic}`, async () => {
        // listTopics, not fetchTopicMetadata: that would create a missing topic (auto-creation).
        if (!(await this.admin.listTopics()).includes(topic)) throw new Error(`topic ${topic} does not exist`);
        return tail.bounds();
      });
      ends = new Map(bounds.map((b) => [b.partition, BigInt(b.high)]));
      if (!bounds.some((b) => BigInt(b.high) > BigInt(b.low))) return 0;
      // A tool's read: as long as it takes, but not forever on a broker that stopped answering.
      if (!(await tail.reached(bounds, 30 * 60_000)))
        throw new DependencyError('kafka', `reading ${topic} did not reach its end offsets`);
      return read;
    } finally {
      await tail.stop();
    }
  }

  async ping(): Promise<void> {
    const ms = this.settings.connectTimeoutMs;
    try {
      await withTimeout(this.admin.describeCluster(), ms, () => new Error(`no answer within ${ms} ms`));
    } catch (err) {
      throw new DependencyError('kafka', `KAFKA_BROKERS=${this.settings.brokers.join(',')}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
  }

  disconnect(): Promise<void> {
    return this.admin.disconnect();
  }
}

/** How long a read-only admin query is retried while a leader or coordinator is not yet in place. */
const READ_RETRY_MS = 10_000;
/** kafkajs error types that mean "not yet": the partition's leader or the group's coordinator is moving. */
const NOT_YET = new Set([
  'NOT_LEADER_FOR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_COORDINATOR',
  'COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
]);

const clamp = (n: bigint, lo: bigint, hi: bigint) => (n < lo ? lo : n > hi ? hi : n);
