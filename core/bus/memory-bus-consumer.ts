/**
 * Consumer side of the in-process bus (memory-bus.ts): a consumer owns one
 * slot per subscribed topic-partition and loops over them, handing each
 * backlog to the shared BatchRunner in equal batches of at most batchSize and
 * committing `position` into its group once a batch succeeded (at-least-once;
 * a batch is committed before the next one is fetched). Idle, it sleeps until
 * a publish wakes it; it yields between rounds so publishers, timers and I/O
 * run. The topic logs and group records it reads are defined here too.
 */
import { setImmediate as nextTick } from 'node:timers/promises';
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
import type { DeadLetterLedger } from './dead-letters.js';
import { equalChunkSize } from './equal-chunks.js';

const ADAPTER = 'memory';

export interface MemTopic {
  name: string;
  /** One ordered log per partition; a message's offset is its index. */
  logs: BusMessage[][];
  /** Consumers to wake when something is published. */
  subscribers: Set<MemConsumer>;
  publishedMetric: { inc(n?: number): void };
}

export interface MemGroup {
  running?: MemConsumer;
  /** topic -> committed offset (next offset to read) per partition. */
  committed: Map<string, (number | undefined)[]>;
}

/** The bus options a consumer reads (a subset of MemoryBusOptions). */
export interface MemConsumerSettings extends BusRetryDefaults {
  batchSize: number;
  logger: Logger;
}

/** What a consumer needs of its bus. */
export interface MemConsumerHost {
  readonly options: MemConsumerSettings;
  /** Topic by name, created when missing. */
  topic(name: string): MemTopic;
  ledger(dlq: string): DeadLetterLedger;
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
}

/** One subscribed topic-partition of a running consumer. */
interface Slot {
  topic: string;
  partition: number;
  log: BusMessage[];
  /** Next offset to hand out (= committed offset: a batch is committed before the next one is fetched). */
  position: number;
  committed: (number | undefined)[];
  consumed: { inc(n?: number): void };
  seconds: { observe(v: number): void };
}

export class MemConsumer implements Consumer {
  readonly status: ConsumerStatus;
  private readonly abort = new AbortController();
  private readonly slots: Slot[] = [];
  private readonly batchSize: number;
  private readonly runner: BatchRunner;
  private readonly logger: Logger;
  private woken = false;
  private waiting: (() => void) | undefined;
  private loop: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly bus: MemConsumerHost,
    private readonly options: ConsumerOptions,
    private readonly group: MemGroup,
  ) {
    const { groupId, topics } = options;
    this.status = { groupId, topics: [...topics], running: false, restarts: 0 };
    this.batchSize = options.maxBatchSize ?? bus.options.batchSize;
    this.logger = bus.options.logger.child({ component: 'bus', adapter: ADAPTER, group: groupId });
    this.runner = new BatchRunner({
      ...consumerRunnerOptions(ADAPTER, options, bus, {
        status: this.status,
        signal: this.abort.signal,
        logger: this.logger,
      }),
      alreadyDeadLettered: async (message) =>
        bus.ledger(dlqTopic(message.topic)).has(groupId, message.topic, message.partition, message.offset),
    });
    const fromBeginning = options.fromBeginning ?? true;
    for (const name of new Set(topics)) {
      const t = bus.topic(name);
      const committed = committedFor(group, name, t.logs.length);
      t.logs.forEach((log, partition) => {
        this.slots.push({
          topic: name,
          partition,
          log,
          position: committed[partition] ?? (fromBeginning ? 0 : log.length),
          committed,
          consumed: metrics.busConsumed.labels(ADAPTER, name, groupId),
          seconds: metrics.busBatchSeconds.labels(ADAPTER, name, groupId),
        });
      });
    }
  }

  start(): void {
    this.status.running = true;
    // In-process: its partitions are its own from the start, and it reads them as soon as it runs.
    this.status.joinedAt = this.status.lastFetchAt = Date.now();
    for (const name of this.status.topics) this.bus.topic(name).subscribers.add(this);
    this.loop = this.run();
  }

  wake(): void {
    this.woken = true;
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      w();
    }
  }

  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.abort.abort();
      this.wake();
    }
    await this.loop;
  }

  private async run(): Promise<void> {
    const { slots, batchSize } = this;
    try {
      while (!this.stopping) {
        this.woken = false;
        let worked = false;
        for (let s = 0; s < slots.length && !this.stopping; s++) {
          const slot = slots[s]!;
          const { log } = slot;
          if (slot.position >= log.length) continue;
          worked = true;
          const start = slot.position;
          const batch = log.slice(start, start + equalChunkSize(log.length - start, batchSize));
          const t0 = performance.now();
          let done: number;
          try {
            done = await this.runner.run(batch);
          } catch (err) {
            // Only a failed dead-letter publish on a closing bus gets here; keep the offsets uncommitted.
            this.logger.error({ err, topic: slot.topic, partition: slot.partition }, 'bus: batch failed unexpectedly');
            done = 0;
          }
          if (done > 0) {
            slot.position = start + done;
            slot.committed[slot.partition] = slot.position;
            slot.consumed.inc(done);
            slot.seconds.observe((performance.now() - t0) / 1000);
            this.status.lastBatchAt = Date.now();
          }
          if (done < batch.length) break; // stopping
        }
        if (this.stopping) break;
        if (worked) {
          // Let publishers, timers and I/O run between rounds.
          await nextTick();
        } else if (!this.woken) {
          await new Promise<void>((resolve) => {
            this.waiting = resolve;
          });
        }
      }
    } finally {
      for (const name of this.status.topics) this.bus.topic(name).subscribers.delete(this);
      this.status.running = false;
      if (this.group.running === this) delete this.group.running;
    }
  }
}

/** The group's committed offsets of `topic`, one per partition (created empty). */
export function committedFor(group: MemGroup, topic: string, partitions: number): (number | undefined)[] {
  let c = group.committed.get(topic);
  if (!c) {
    c = new Array<number | undefined>(partitions).fill(undefined);
    group.committed.set(topic, c);
  }
  return c;
}
