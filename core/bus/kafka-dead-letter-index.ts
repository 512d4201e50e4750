/**
 * The Kafka adapter's view of its DLQs (dead-letters.ts): one ledger per
 * `<topic>.dlq`, filled by following the DLQ topic from its start
 * (kafka-topic-tail.ts), so it knows every dead letter ever written, by any
 * process. Used to keep a replay from dead-lettering a message again, and
 * for the dead-letter counts in /health. A DLQ is only followed once
 * something asks about it (the first failing message, the first /health).
 */
import type { Admin, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '../logger.js';
import type { BusMessage } from './bus.js';
import {
  DeadLetterLedger,
  deadLetterKey,
  parseDeadLetter,
  type DeadLetterRecord,
  type DeadLetterSummary,
} from './dead-letters.js';
import { KafkaTopicTail } from './kafka-topic-tail.js';

/** How long a check waits for a DLQ to be read up to its end before answering "not recorded" (fail open: a duplicate, never a loss). */
const CATCH_UP_MS = 10000;
/** A catch-up is good for this long for further checks of the same DLQ (dead letters sent meanwhile are in `pending`). */
const CATCH_UP_REUSE_MS = 250;

export class KafkaDeadLetterIndex {
  private readonly ledgers = new Map<string, DeadLetterLedger>();
  private readonly tails = new Map<string, KafkaTopicTail>();
  private readonly caughtUpAt = new Map<string, number>();
  /** Dead letters this process sent that the tail has not read back yet. */
  private readonly pending = new Set<string>();

  constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly logger: Logger,
    private readonly wrap: (topic: string, partition: number, record: KafkaMessage) => BusMessage,
  ) {}

  private ledger(dlq: string): DeadLetterLedger {
    let l = this.ledgers.get(dlq);
    if (!l) this.ledgers.set(dlq, (l = new DeadLetterLedger()));
    return l;
  }

  /** Starts following the DLQs not followed yet (one consumer for the new ones). */
  watch(dlqs: string[]): void {
    const fresh = [...new Set(dlqs)].filter((t) => !this.tails.has(t));
    if (!fresh.length) return;
    const tail = new KafkaTopicTail({
      kafka: this.kafka,
      admin: this.admin,
      topics: fresh,
      logger: this.logger,
      wrap: this.wrap,
      onMessage: (m) => {
        const record = parseDeadLetter(m.headers);
        if (!record) return;
        this.ledger(m.topic).add(record);
        this.pending.delete(
          `${m.topic}\u0000${deadLetterKey(record.group, record.topic, record.partition, record.offset)}`,
        );
      },
    });
    for (const t of fresh) this.tails.set(t, tail);
    void tail.start().catch(() => undefined);
  }

  /** Whether `<message.topic>.dlq` already holds a dead letter of this message for this group. */
  async alreadyRecorded(dlq: string, message: BusMessage, group: string): Promise<boolean> {
    const key = deadLetterKey(group, message.topic, message.partition, message.offset);
    if (this.pending.has(`${dlq}\u0000${key}`)) return true;
    this.watch([dlq]);
    const at = this.caughtUpAt.get(dlq) ?? 0;
    if (Date.now() - at > CATCH_UP_REUSE_MS) {
      if (!(await this.tails.get(dlq)!.caughtUp(CATCH_UP_MS))) {
        this.logger.warn(
          { dlq },
          'bus: could not read the DLQ to its end in time; dead-lettering without checking for an earlier copy',
        );
        return false;
      }
      this.caughtUpAt.set(dlq, Date.now());
    }
    return (
      this.ledger(dlq).has(group, message.topic, message.partition, message.offset) ||
      this.pending.has(`${dlq}\u0000${key}`)
    );
  }

  /** Records a dead letter this process just sent (until the tail reads it back). */
  sent(dlq: string, record: DeadLetterRecord): void {
    this.pending.add(`${dlq}\u0000${deadLetterKey(record.group, record.topic, record.partition, record.offset)}`);
  }

  /** Per DLQ: its size from offsets (always), and the ledger's view once it has been read to the end. */
  async summary(dlqs: string[], recentWindowMs: number, waitMs: number): Promise<Record<string, DeadLetterSummary>> {
    this.watch(dlqs);
    const out: Record<string, DeadLetterSummary> = {};
    await Promise.all(
      dlqs.map(async (dlq) => {
        const complete = await this.tails.get(dlq)!.caughtUp(waitMs);
        const ledger = this.ledger(dlq);
        let count = ledger.count;
        if (!complete) {
          const bounds = await this.admin.fetchTopicOffsets(dlq);
          count = bounds.reduce((n, b) => n + Number(BigInt(b.high) - BigInt(b.low)), 0);
        }
        out[dlq] = {
          count,
          recent: ledger.since(Date.now() - recentWindowMs),
          ...(ledger.last ? { last: ledger.last } : {}),
          complete,
        };
      }),
    );
    return out;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...new Set(this.tails.values())].map((t) => t.stop()));
    this.tails.clear();
  }
}
