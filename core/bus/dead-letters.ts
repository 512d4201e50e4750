/**
 * What a DLQ holds, read back from its messages' DLQ_HEADERS: one record per
 * dead letter, a ledger per DLQ topic (how many, which origins, the newest),
 * shared by both bus adapters. The ledger is what keeps a replay from
 * dead-lettering a message twice: a message whose (group, topic, partition,
 * offset) already has a dead letter is not sent to the DLQ again.
 */
import { DLQ_HEADERS, type DeadLetterRecord, type DeadLetterSummary } from './bus.js';

export type { DeadLetterRecord, DeadLetterSummary };

/** The identity of a dead letter: its origin, per consumer group. */
export const deadLetterKey = (group: string, topic: string, partition: number | string, offset: string) =>
  `${group}\u0000${topic}\u0000${partition}\u0000${offset}`;

/** The record in a dead letter's headers, or undefined when they are not DLQ headers. */
export function parseDeadLetter(headers: Record<string, string>): DeadLetterRecord | undefined {
  const topic = headers[DLQ_HEADERS.topic];
  const partition = headers[DLQ_HEADERS.partition];
  const offset = headers[DLQ_HEADERS.offset];
  if (topic === undefined || partition === undefined || offset === undefined || !/^\d+$/.test(partition))
    return undefined;
  return {
    reason: headers[DLQ_HEADERS.reason] ?? '',
    failedAt: headers[DLQ_HEADERS.failedAt] ?? '',
    topic,
    partition: Number(partition),
    offset,
    group: headers[DLQ_HEADERS.group] ?? '',
    attempts: Number(headers[DLQ_HEADERS.attempts] ?? 0),
  };
}

/** Recent dead-letter times kept per DLQ (enough to count a burst; older ones only count in `count`). */
const RECENT_KEPT = 1000;

/** Everything known about one DLQ topic's dead letters. Memory: one short string per dead letter. */
export class DeadLetterLedger {
  private readonly keys = new Set<string>();
  private readonly recentTimes: number[] = [];
  count = 0;
  last: DeadLetterRecord | undefined;

  /** Records a dead letter read from (or just written to) the DLQ. */
  add(record: DeadLetterRecord): void {
    const key = deadLetterKey(record.group, record.topic, record.partition, record.offset);
    this.count++;
    this.keys.add(key);
    const at = Date.parse(record.failedAt);
    if (Number.isFinite(at)) {
      this.recentTimes.push(at);
      if (this.recentTimes.length > RECENT_KEPT) this.recentTimes.splice(0, this.recentTimes.length - RECENT_KEPT);
    }
    if (!this.last || record.failedAt >= this.last.failedAt) this.last = record;
  }

  has(group: string, topic: string, partition: number, offset: string): boolean {
    return this.keys.has(deadLetterKey(group, topic, partition, offset));
  }

  /** Dead letters whose failed-at time is at or after `sinceMs`. */
  since(sinceMs: number): number {
    let n = 0;
    for (const t of this.recentTimes) if (t >= sinceMs) n++;
    return n;
  }
}
