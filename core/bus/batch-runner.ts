/**
 * Retry / isolate / dead-letter logic shared by both bus adapters, so a
 * failing handler behaves the same on Kafka and in memory (see bus.ts):
 *
 *  - the handler gets the whole batch; on success the adapter commits it;
 *  - a retryable failure (isRetryable: DependencyError) is retried with
 *    capped exponential backoff until it succeeds or the consumer stops;
 *    `status.stalledReason` says why while it is stalled;
 *  - any other failure is retried up to maxAttempts times; then the batch is
 *    split and each message runs alone (same attempts); a message that still
 *    fails goes to `<topic>.dlq` with DLQ_HEADERS and is then considered done;
 *  - `ctx.deadLetter()` sends a message to the DLQ at once (only once per
 *    message per run, even if the handler is retried);
 *  - a message whose dead letter is already in the DLQ (same group, topic,
 *    partition and offset: a replay over it) is not dead-lettered again; it
 *    is done, and counted in bus_dead_letters_already_recorded_total.
 *
 * `run()` returns how many leading messages of the batch are done (handled or
 * dead-lettered): the batch length normally, fewer when the consumer stopped
 * (or the adapter's heartbeat failed) before the rest succeeded. The adapter
 * commits exactly that prefix.
 */
import { backoffDelay, sleep } from '../backoff.js';
import { DependencyError, errorMessage, isRetryable } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import {
  DLQ_HEADERS,
  dlqTopic,
  type BatchContext,
  type BusMessage,
  type ConsumerOptions,
  type ConsumerStatus,
  type OutgoingMessage,
} from './bus.js';

export interface BatchRunnerOptions {
  adapter: 'memory' | 'kafka';
  groupId: string;
  handleBatch(messages: BusMessage[], ctx: BatchContext): Promise<void>;
  maxAttempts: number;
  retryBackoffMs: number;
  /** Upper bound of one backoff delay. */
  retryCapMs?: number;
  /** The consumer's status object; `stalledReason` is set while a retryable failure is retried. */
  status: ConsumerStatus;
  /** Aborted when the consumer stops. */
  signal: AbortSignal;
  logger: Logger;
  /** The bus's own publish, used for dead letters. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  /** Called between attempts and during backoff (Kafka: keeps the group session alive). Its errors propagate. */
  heartbeat?: () => Promise<void>;
  /** Whether the DLQ already holds a dead letter of this message for this group (the adapter's DLQ ledger). */
  alreadyDeadLettered?(message: BusMessage): Promise<boolean>;
  /** Told after each dead letter is published. */
  deadLetterSent?(message: BusMessage, dead: OutgoingMessage): void;
}

/** A bus's retry settings, which a consumer's own options override. */
export interface BusRetryDefaults {
  maxAttempts: number;
  retryBackoffMs: number;
  /** Cap of one retry delay (default 30 s). */
  retryMaxBackoffMs?: number;
}

/**
 * The runner options both adapters derive the same way: the consumer's own
 * retry settings over its bus's defaults, and the bus's publish for dead
 * letters; `own` is the consumer's status, stop signal and logger.
 */
export function consumerRunnerOptions(
  adapter: BatchRunnerOptions['adapter'],
  options: ConsumerOptions,
  bus: { readonly options: BusRetryDefaults; publish(topic: string, messages: OutgoingMessage[]): Promise<void> },
  own: Pick<BatchRunnerOptions, 'status' | 'signal' | 'logger'>,
): Omit<BatchRunnerOptions, 'heartbeat' | 'alreadyDeadLettered' | 'deadLetterSent'> {
  const defaults = bus.options;
  return {
    adapter,
    groupId: options.groupId,
    handleBatch: options.handleBatch,
    maxAttempts: options.maxAttempts ?? defaults.maxAttempts,
    retryBackoffMs: options.retryBackoffMs ?? defaults.retryBackoffMs,
    ...(defaults.retryMaxBackoffMs ? { retryCapMs: defaults.retryMaxBackoffMs } : {}),
    ...own,
    publish: (topic, messages) => bus.publish(topic, messages),
  };
}

type Outcome =
  { ok: true } | { ok: false; stopped: true } | { ok: false; stopped: false; error: unknown; invocations: number };

const OK: Outcome = { ok: true };
const STOPPED: Outcome = { ok: false, stopped: true };
/** Longest sleep between two heartbeats while backing off. */
const HEARTBEAT_SLICE_MS = 1000;

export class BatchRunner {
  private readonly cap: number;
  private readonly ctx: BatchContext;
  /** Messages already dead-lettered in the current run() (dedup across retries). */
  private deadLettered = new Set<string>();
  /** Handler invocations that included the message being dead-lettered explicitly. */
  private currentInvocations = 0;

  constructor(private readonly o: BatchRunnerOptions) {
    this.cap = o.retryCapMs ?? 30000;
    this.ctx = {
      deadLetter: (message, reason) => this.explicitDeadLetter(message, reason),
      signal: o.signal,
    };
  }

  /** Runs one batch (messages of one topic-partition, in offset order). Returns how many leading messages are done. */
  async run(batch: BusMessage[]): Promise<number> {
    if (batch.length === 0) return 0;
    if (this.deadLettered.size) this.deadLettered = new Set();
    const first = await this.attempt(batch);
    if (first.ok) return batch.length;
    if (first.stopped) return 0;

    if (batch.length === 1) {
      return (await this.deadLetter(batch[0]!, errorMessage(first.error), first.invocations)) ? 1 : 0;
    }

    this.o.logger.warn(
      {
        topic: batch[0]!.topic,
        partition: batch[0]!.partition,
        group: this.o.groupId,
        size: batch.length,
        err: errorMessage(first.error),
      },
      'bus: batch keeps failing; running its messages one by one',
    );
    for (let i = 0; i < batch.length; i++) {
      const message = batch[i]!;
      const alone = await this.attempt([message], first.invocations);
      if (alone.ok) continue;
      if (alone.stopped) return i;
      if (!(await this.deadLetter(message, errorMessage(alone.error), alone.invocations))) return i;
    }
    return batch.length;
  }

  /** Runs the handler until it succeeds, fails maxAttempts times with a non-retryable error, or the consumer stops. */
  private async attempt(messages: BusMessage[], priorInvocations = 0): Promise<Outcome> {
    const { o } = this;
    let failures = 0;
    let consecutive = 0;
    let invocations = priorInvocations;
    for (;;) {
      if (o.signal.aborted) return this.unstall(STOPPED);
      invocations++;
      this.currentInvocations = invocations;
      try {
        await o.handleBatch(messages, this.ctx);
        return this.unstall(OK);
      } catch (err) {
        if (o.signal.aborted) return this.unstall(STOPPED);
        consecutive++;
        const retryable = isRetryable(err);
        const topic = messages[0]!.topic;
        if (retryable) {
          if (o.status.stalledReason === undefined) {
            o.logger.warn(
              { topic, group: o.groupId, err: errorMessage(err) },
              'bus: handler hit a retryable failure; retrying until it succeeds',
            );
          }
          o.status.stalledReason = errorMessage(err);
        } else {
          failures++;
          if (failures >= o.maxAttempts) return this.unstall({ ok: false, stopped: false, error: err, invocations });
        }
        metrics.busHandlerRetries.labels(o.adapter, topic, o.groupId, String(retryable)).inc();
        await this.pause(backoffDelay(consecutive, o.retryBackoffMs, this.cap));
      }
    }
  }

  private unstall(outcome: Outcome): Outcome {
    if (this.o.status.stalledReason !== undefined) delete this.o.status.stalledReason;
    return outcome;
  }

  /** Sleeps `ms` (cut short when the consumer stops), heartbeating at least every HEARTBEAT_SLICE_MS. */
  private async pause(ms: number): Promise<void> {
    const { signal, heartbeat } = this.o;
    const until = Date.now() + ms;
    for (;;) {
      if (signal.aborted) return;
      if (heartbeat) await heartbeat();
      const left = until - Date.now();
      if (left <= 0) return;
      await sleep(Math.min(left, HEARTBEAT_SLICE_MS), signal);
    }
  }

  private async explicitDeadLetter(message: BusMessage, reason: string): Promise<void> {
    const id = `${message.topic}\u0000${message.partition}\u0000${message.offset}`;
    if (this.deadLettered.has(id)) return;
    const out = dlqMessage(message, reason, this.o.groupId, this.currentInvocations);
    try {
      if (await this.recordedBefore(message)) {
        this.deadLettered.add(id);
        return;
      }
      await this.o.publish(dlqTopic(message.topic), [out]);
    } catch (err) {
      // The handler sees a retryable failure: the batch is retried, never committed without its dead letter.
      throw isRetryable(err)
        ? err
        : new DependencyError('bus', `dead-lettering failed: ${errorMessage(err)}`, { cause: err });
    }
    this.deadLettered.add(id);
    this.o.deadLetterSent?.(message, out);
    metrics.busDeadLettered.labels(this.o.adapter, message.topic, this.o.groupId).inc();
  }

  /** True (and counted) when the DLQ already holds this message's dead letter: a replay over it. */
  private async recordedBefore(message: BusMessage): Promise<boolean> {
    if (!this.o.alreadyDeadLettered || !(await this.o.alreadyDeadLettered(message))) return false;
    metrics.busDeadLettersAlreadyRecorded.labels(this.o.adapter, message.topic, this.o.groupId).inc();
    this.o.logger.info(
      { topic: message.topic, partition: message.partition, offset: message.offset, group: this.o.groupId },
      'bus: message fails again; its dead letter is already in the DLQ (not repeated)',
    );
    return true;
  }

  /** Dead-letters a message the handler could not process; retries the publish until it works or the consumer stops. */
  private async deadLetter(message: BusMessage, reason: string, attempts: number): Promise<boolean> {
    const { o } = this;
    const id = `${message.topic}\u0000${message.partition}\u0000${message.offset}`;
    if (this.deadLettered.has(id)) return true;
    for (let failures = 1; ; failures++) {
      if (o.signal.aborted) return false;
      try {
        if (await this.recordedBefore(message)) {
          this.deadLettered.add(id);
          return true;
        }
        break;
      } catch (err) {
        o.status.stalledReason = `checking the DLQ failed: ${errorMessage(err)}`;
        await this.pause(backoffDelay(failures, o.retryBackoffMs, this.cap));
      }
    }
    o.logger.error(
      {
        topic: message.topic,
        partition: message.partition,
        offset: message.offset,
        group: o.groupId,
        attempts,
        reason,
      },
      'bus: message dead-lettered',
    );
    const out = dlqMessage(message, reason, o.groupId, attempts);
    for (let failures = 1; ; failures++) {
      if (o.signal.aborted) return false;
      try {
        await o.publish(dlqTopic(message.topic), [out]);
        this.deadLettered.add(id);
        o.deadLetterSent?.(message, out);
        metrics.busDeadLettered.labels(o.adapter, message.topic, o.groupId).inc();
        return this.unstall(OK).ok;
      } catch (err) {
        o.status.stalledReason = `dead-lettering failed: ${errorMessage(err)}`;
        await this.pause(backoffDelay(failures, o.retryBackoffMs, this.cap));
      }
    }
  }
}

/** The dead letter: key, value and headers of the original, plus DLQ_HEADERS. */
export function dlqMessage(message: BusMessage, reason: string, groupId: string, attempts: number): OutgoingMessage {
  return {
    key: message.key,
    value: message.value,
    headers: {
      ...message.headers,
      [DLQ_HEADERS.reason]: reason,
      [DLQ_HEADERS.topic]: message.topic,
      [DLQ_HEADERS.partition]: String(message.partition),
      [DLQ_HEADERS.offset]: message.offset,
      [DLQ_HEADERS.group]: groupId,
      [DLQ_HEADERS.failedAt]: new Date().toISOString(),
      [DLQ_HEADERS.attempts]: String(attempts),
    },
  };
}
