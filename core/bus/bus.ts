/**
 * Bus port. Two adapters honour these semantics (checked by
 * test/contract/bus.contract.test.ts against both):
 *  - topics with a fixed number of partitions; a message's key picks its
 *    partition (kafkajs' murmur2 partitioner in both adapters), so messages
 *    of one key stay in order;
 *  - consumer groups resume from their last committed offset after a restart;
 *  - a batch's offsets are committed only after its handler succeeded
 *    (at-least-once);
 *  - a failing handler is retried with backoff; a retryable failure
 *    (DependencyError: the store is down) is retried until it succeeds or the
 *    consumer stops, never dropped; any other failure is retried
 *    BUS_MAX_ATTEMPTS times, then the batch is split and each message that
 *    still fails goes to `<topic>.dlq` with the reason and its origin in
 *    headers (DLQ_HEADERS);
 *  - a message is dead-lettered once per group: when a replay meets it again
 *    and its dead letter is already in the DLQ, it is not sent again;
 *  - a stopped group can be rewound to an offset or a timestamp (replay);
 *  - a consumer that crashes (Kafka: a CRASH that kafkajs does not restart
 *    itself, e.g. KafkaJSGroupCoordinatorNotFound) is restarted by the bus with
 *    backoff until it is stopped; its status says so (consumer-health.ts).
 */

export interface OutgoingMessage {
  key: string;
  value: string;
  headers?: Record<string, string>;
  /** Event time in ms; defaults to now. Used by replay-from-timestamp. */
  timestamp?: number;
}

/**
 * A delivered message. Adapters may compute fields on read (the Kafka adapter
 * decodes key, value and headers from the record each time): read the fields
 * you need; a spread or JSON copy of the object may miss them.
 */
export interface BusMessage {
  topic: string;
  partition: number;
  /** Offsets are decimal strings (Kafka offsets are int64). */
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string>;
  timestamp: number;
}

export interface BatchContext {
  /** Sends a message to `<topic>.dlq` now (for example a malformed payload); it is committed with the batch. */
  deadLetter(message: BusMessage, reason: string): Promise<void>;
  /** Aborted when the consumer is stopping: long handlers should finish or throw. */
  signal: AbortSignal;
}

export interface ConsumerOptions {
  groupId: string;
  topics: string[];
  /** Where a group without a committed offset starts. Default: earliest. */
  fromBeginning?: boolean;
  handleBatch(messages: BusMessage[], ctx: BatchContext): Promise<void>;
  /** Overrides BUS_MAX_ATTEMPTS / BUS_RETRY_BACKOFF_MS / BUS_BATCH_SIZE for this consumer. */
  maxAttempts?: number;
  retryBackoffMs?: number;
  maxBatchSize?: number;
  /**
   * Kafka: handlers of up to this many partitions of one fetch run at once (default 1); each partition's
   * batches stay in order and are committed on their own. Handlers that await a shared write (the aggregate's
   * table batcher) then share one insert. The memory adapter runs its partitions one at a time.
   */
  partitionsConcurrently?: number;
}

export interface ConsumerStatus {
  groupId: string;
  topics: string[];
  /** From start until stop(): a crashed consumer that the bus is restarting is still running. */
  running: boolean;
  /** Set while a retryable failure is being retried (dependency down). */
  stalledReason?: string;
  lastBatchAt?: number;
  /** When the consumer last joined its group and got its partitions (memory adapter: at start); unset after a crash. */
  joinedAt?: number;
  /** When it last asked for messages since it joined (memory adapter: at start); unset after a crash. */
  lastFetchAt?: number;
  /** The last crash, until the consumer has joined and fetched again (consumer-health.ts reads it). */
  crash?: ConsumerCrash;
  /** Restarts of this consumer after crashes (kafkajs' own and the bus's). */
  restarts: number;
}

export interface ConsumerCrash {
  reason: string;
  at: number;
  /** When the bus restarts it; unset while kafkajs restarts it itself or a restart is under way. */
  nextRestartAt?: number;
}

export interface Consumer {
  readonly status: ConsumerStatus;
  /** Stops fetching, lets the in-flight batch finish and commit, leaves the group. */
  stop(): Promise<void>;
}

export type ReplayFrom =
  | { kind: 'earliest' }
  | { kind: 'latest' }
  | { kind: 'offset'; offset: string; partition?: number }
  | { kind: 'timestamp'; timestamp: number };

export type PartitionOffsets = Record<number, string>;

export interface DeadLetterRecord {
  reason: string;
  /** ISO time the message was dead-lettered. */
  failedAt: string;
  /** Origin: topic, partition and offset of the message that failed, and the group that failed on it. */
  topic: string;
  partition: number;
  offset: string;
  group: string;
  attempts: number;
}

/** What /health and the DLQ tool say about one DLQ. */
export interface DeadLetterSummary {
  /** Dead letters in `<topic>.dlq` (all of them, every process and every run). */
  count: number;
  /** Those dead-lettered in the last `recentWindowMs`. */
  recent: number;
  /** The newest dead letter (by its failed-at time), once the DLQ has been read. */
  last?: DeadLetterRecord;
  /** False while the DLQ is still being read (count is then its size, from offsets). */
  complete: boolean;
}

export interface DeadLetterSummaryOptions {
  /** `recent` counts the dead letters of this window (default 5 minutes). */
  recentWindowMs?: number;
  /** Longest wait for a DLQ to be read to its end (default 1 s); after it, `complete: false` and its size from offsets. */
  waitMs?: number;
}

export interface Bus {
  readonly adapter: 'memory' | 'kafka';
  /** Creates missing topics (and their DLQs) with BUS_PARTITIONS partitions. */
  ensureTopics(topics: string[]): Promise<void>;
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  consume(options: ConsumerOptions): Promise<Consumer>;
  /** Rewinds (or forwards) a group on a topic. The group must have no running consumer. */
  resetOffsets(groupId: string, topic: string, from: ReplayFrom): Promise<void>;
  /** Committed offset per partition (the next offset to read); missing partitions have none. */
  committedOffsets(groupId: string, topic: string): Promise<PartitionOffsets>;
  /** High-water mark per partition (offset the next published message gets). */
  endOffsets(topic: string): Promise<PartitionOffsets>;
  /**
   * The dead letters of these topics, read from their DLQs (keyed by the original topic): how many,
   * how many are recent, the newest one's reason and origin. Covers every process that wrote them.
   */
  deadLetterSummary(topics: string[], options?: DeadLetterSummaryOptions): Promise<Record<string, DeadLetterSummary>>;
  /**
   * Reads a topic from its start up to the end offsets of the moment of the call (per partition in
   * offset order; partitions interleaved), for tools such as the DLQ command. Leaves no consumer
   * group behind and moves no group's offsets. Resolves with the number of messages read.
   */
  readTopic(topic: string, onMessage: (message: BusMessage) => void | Promise<void>): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const dlqTopic = (topic: string) => `${topic}.dlq`;

export const DLQ_HEADERS = {
  reason: 'dlq-reason',
  topic: 'dlq-original-topic',
  partition: 'dlq-original-partition',
  offset: 'dlq-original-offset',
  group: 'dlq-consumer-group',
  failedAt: 'dlq-failed-at',
  attempts: 'dlq-attempts',
} as const;
