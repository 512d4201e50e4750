/**
 * Producer side of the Kafka bus: one kafkajs producer per bus (acks -1,
 * kafkajs' DefaultPartitioner: murmur2, Java compatible, so a key keeps its
 * partition). A publish is validated whole before anything is sent, then sent
 * in slices under the broker's batch limit, in order; it resolves once every
 * slice is acknowledged by all in-sync replicas. Broker failures surface as
 * DependencyError (kafka-errors.ts).
 *
 * An idempotent producer (replicated topics, kafka-bus.ts) numbers its sends
 * per partition. After a leader moves, the new leader can answer
 * OUT_OF_ORDER_SEQUENCE_NUMBER, and kafkajs 2.2.4 keeps resending the same
 * numbers: every later send fails the same way (seen on the replicated
 * topology, test/replicated). Then the producer is replaced by a new one (a
 * new producer id, numbering from 0) and the slice sent once more: a slice
 * the old leader had written may be written twice, as any retried publish
 * may; every sink is idempotent by event id.
 *
 * On a cluster (partitionCount given) each send carries one partition: when a
 * send spans several leaders and one of them fails, kafkajs 2.2.4 retries
 * only the brokers that have not answered yet, found again from the fresh
 * metadata, so partitions that moved to a broker that had already answered
 * are never sent, and the send still resolves (acknowledged ids missing from
 * the topic after a leader was killed, test/replicated). Partitions are the
 * kafkajs DefaultPartitioner's (murmur2 of the key), computed here from the
 * topic's partition count, read once per topic; the sends of one slice run
 * in parallel.
 */
import { Partitioners, type Message, type PartitionMetadata, type Producer } from 'kafkajs';
import { metrics } from '../metrics.js';
import type { OutgoingMessage } from './bus.js';
import { kafkaCall } from './kafka-errors.js';

/** Most (approximate, UTF-16 length) bytes per producer send: under the broker's default 1 MB batch limit. */
const MAX_SEND_BYTES = 768 * 1024;
const ADAPTER = 'kafka';
/** Broker answers after which an idempotent producer's id and sequence numbers are of no further use. */
const STALE_PRODUCER = new Set(['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH']);

/** Whether kafkajs' error, or one it wraps (retries exceeded, one per broker), is one of these broker answers. */
function answeredWith(err: unknown, types: Set<string>, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as { type?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown };
  if (typeof e.type === 'string' && types.has(e.type)) return true;
  const inner = [e.cause, e.originalError, ...(Array.isArray(e.errors) ? e.errors : [])];
  return inner.some((x) => answeredWith(x, types, depth + 1));
}

export class KafkaBusProducer {
  private readonly publishedMetrics = new Map<string, { inc(n?: number): void }>();
  private renewing: Promise<void> | undefined;
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private readonly partitionMetadata = new Map<string, Promise<PartitionMetadata[]>>();

  /**
   * `renew`: a new connected producer, for an idempotent one whose sequence numbers went stale; `partitionCount`:
   * a topic's partitions, given on a cluster, where each send carries one partition (see above).
   */
  constructor(
    private producer: Producer,
    private readonly renew?: () => Promise<Producer>,
    private readonly partitionCount?: (topic: string) => Promise<number>,
  ) {}

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (!messages.length) return;
    const out = new Array<Message>(messages.length);
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      if (typeof m.key !== 'string' || typeof m.value !== 'string')
        throw new TypeError(`bus publish to ${topic}: key and value must be strings`);
      out[i] = {
        key: m.key,
        value: m.value,
        headers: m.headers,
        timestamp: m.timestamp === undefined ? undefined : String(m.timestamp),
      };
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
      await kafkaCall(`publish to ${topic}`, () => this.send(topic, slice));
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

  private async send(topic: string, messages: Message[]): Promise<void> {
    if (!this.partitionCount) return this.sendOne(topic, messages);
    let partitions = this.partitionMetadata.get(topic);
    if (!partitions) {
      partitions = this.partitionCount(topic).then((n) =>
        Array.from({ length: n }, (_, partitionId) => ({ partitionId, leader: 0 }) as PartitionMetadata),
      );
      this.partitionMetadata.set(topic, partitions);
      partitions.catch(() => this.partitionMetadata.delete(topic));
    }
    const partitionMetadata = await partitions;
    const byPartition = new Map<number, Message[]>();
    for (const message of messages) {
      const partition = this.partitioner({ topic, partitionMetadata, message });
      let group = byPartition.get(partition);
      if (!group) byPartition.set(partition, (group = []));
      group.push({ ...message, partition });
    }
    await Promise.all([...byPartition.values()].map((group) => this.sendOne(topic, group)));
  }

  private async sendOne(topic: string, messages: Message[]): Promise<void> {
    const producer = this.producer;
    try {
      await producer.send({ topic, acks: -1, messages });
    } catch (err) {
      if (!this.renew || !answeredWith(err, STALE_PRODUCER)) throw err;
      await this.replace(producer);
      await this.producer.send({ topic, acks: -1, messages });
    }
  }

  /** Replaces `stale` (once, however many sends failed with it) by a new producer. */
  private async replace(stale: Producer): Promise<void> {
    if (this.producer === stale && !this.renewing) {
      this.renewing = (async () => {
        this.producer = await this.renew!();
        await stale.disconnect().catch(() => undefined);
      })().finally(() => {
        this.renewing = undefined;
      });
    }
    await this.renewing;
  }

  async disconnect(): Promise<void> {
    await this.renewing?.catch(() => undefined);
    await this.producer.disconnect();
  }
}
