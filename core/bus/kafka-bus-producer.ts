/**
 * Producer side of the Kafka bus: one kafkajs producer per bus (acks -1,
 * kafkajs' DefaultPartitioner: murmur2, Java compatible, so a key keeps its
 * partition). A publish is validated whole before anything is sent, then sent
 * in slices under the broker's batch limit, in order; it resolves once every
 * slice is acknowledged by all in-sync replicas. Broker failures surface as
 * DependencyError (kafka-errors.ts).
 */
import type { Message, Producer } from 'kafkajs';
import { metrics } from '../metrics.js';
import type { OutgoingMessage } from './bus.js';
import { kafkaCall } from './kafka-errors.js';

/** Most (approximate, UTF-16 length) bytes per producer send: under the broker's default 1 MB batch limit. */
const MAX_SEND_BYTES = 768 * 1024;
const ADAPTER = 'kafka';

export class KafkaBusProducer {
  private readonly publishedMetrics = new Map<string, { inc(n?: number): void }>();

  constructor(private readonly producer: Producer) {}

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
      await kafkaCall(`publish to ${topic}`, () => this.producer.send({ topic, acks: -1, messages: slice }));
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

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}
