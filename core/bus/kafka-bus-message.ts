/**
 * A delivered Kafka record as the bus port's BusMessage. Key, value and
 * headers are decoded from the record's buffers on each read rather than up
 * front: handlers read a value once, and decoded up front a 40k-message
 * batch's strings (~30 MB) lived until the batch was done, long enough for
 * the young generation to copy them twice and promote them (bench:pipeline).
 * A repeated header decodes to its last value.
 */
import type { IHeaders, KafkaMessage } from 'kafkajs';
import type { BusMessage } from './bus.js';

export class KafkaBusMessage implements BusMessage {
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
