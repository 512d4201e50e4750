/**
 * Reads Kafka topics from their start and keeps following them, for the
 * bus's own bookkeeping (the DLQ ledgers) and tools (reading a DLQ). It is a
 * kafkajs consumer of a throwaway group that never commits: kafkajs has no
 * group-less (assign) consumer, and a group without committed offsets is
 * removed by the broker as soon as its member leaves or expires, so nothing
 * is left behind. `caughtUp()` waits until every partition was read up to
 * the end offsets of that moment.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { sleep, withTimeout } from '../backoff.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import type { BusMessage } from './bus.js';
import { SELF } from './kafka-member-identity.js';

export interface TailOptions {
  kafka: Kafka;
  admin: Admin;
  topics: string[];
  logger: Logger;
  /** Gets every message, in offset order per partition. */
  onMessage(message: BusMessage): void | Promise<void>;
  /** Wrap a raw record the way the bus delivers it. */
  wrap(topic: string, partition: number, record: KafkaMessage): BusMessage;
}

export interface PartitionBound {
  topic: string;
  partition: number;
  low: string;
  high: string;
}

export class KafkaTopicTail {
  private readonly consumer: Consumer;
  /** `topic\0partition` -> next offset to read. */
  private readonly positions = new Map<string, bigint>();
  private started: Promise<void> | undefined;
  private failed: unknown;

  constructor(private readonly o: TailOptions) {
    this.consumer = o.kafka.consumer({
      groupId: `x402.tail.${SELF.host}.${SELF.pid}.${randomUUID()}`,
      // Short long-polls: stop() waits for the one in flight.
      maxWaitTimeInMs: 1000,
      sessionTimeout: 10000,
      heartbeatInterval: 1000,
      allowAutoTopicCreation: false,
    });
  }

  readonly topics = () => this.o.topics;

  /** Joins and starts reading (once; after a failure, the next call tries again). */
  start(): Promise<void> {
    this.started ??= (async () => {
      this.failed = undefined;
      try {
        await this.consumer.connect();
        await this.consumer.subscribe({ topics: this.o.topics, fromBeginning: true });
        await this.consumer.run({
          autoCommit: false,
          eachBatch: async ({ batch, heartbeat }) => {
            for (const record of batch.messages) {
              await this.o.onMessage(this.o.wrap(batch.topic, batch.partition, record));
              this.positions.set(`${batch.topic}\u0000${batch.partition}`, BigInt(record.offset) + 1n);
            }
            // Control records (transactions) are not delivered: the batch's last offset covers them.
            const last = BigInt(batch.lastOffset());
            const key = `${batch.topic}\u0000${batch.partition}`;
            if ((this.positions.get(key) ?? -1n) < last + 1n) this.positions.set(key, last + 1n);
            await heartbeat();
          },
        });
      } catch (err) {
        this.failed = err;
        this.started = undefined;
        await this.consumer.disconnect().catch(() => undefined);
        this.o.logger.warn({ err: errorMessage(err), topics: this.o.topics }, 'bus: could not read topics');
        throw err;
      }
    })();
    return this.started;
  }

  /** The topics' partitions with their low and high offsets now. */
  async bounds(): Promise<PartitionBound[]> {
    return (
      await Promise.all(
        this.o.topics.map(async (topic) =>
          (await this.o.admin.fetchTopicOffsets(topic)).map((b) => ({
            topic,
            partition: b.partition,
            low: b.low,
            high: b.high,
          })),
        ),
      )
    ).flat();
  }

  /** Every partition read up to the end offsets of now, within `timeoutMs`: true, else false. */
  async caughtUp(timeoutMs: number): Promise<boolean> {
    try {
      return await this.reached(await this.bounds(), timeoutMs);
    } catch (err) {
      this.o.logger.warn(
        { err: errorMessage(err), topics: this.o.topics },
        'bus: could not check how far topics were read',
      );
      return false;
    }
  }

  /** Every partition read up to its `high` offset within `timeoutMs`: true, else false. */
  async reached(targets: PartitionBound[], timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    await withTimeout(this.start(), timeoutMs, () => new Error('not joined yet')).catch(() => undefined);
    for (;;) {
      if (this.failed) return false;
      const behind = targets.some(
        (t) =>
          BigInt(t.high) > BigInt(t.low) &&
          (this.positions.get(`${t.topic}\u0000${t.partition}`) ?? BigInt(t.low)) < BigInt(t.high),
      );
      if (!behind) return true;
      if (Date.now() >= until) return false;
      await sleep(25);
    }
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    await this.started.catch(() => undefined);
    await this.consumer.disconnect().catch(() => undefined);
  }
}
