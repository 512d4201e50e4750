/**
 * Cancellation of BullMQ jobs whose caller has been answered (queue.ts): the
 * caller side withdraws a waiting job itself (Queue.remove); a job already
 * active is in a worker, maybe in another process, so the caller publishes
 * `{ n: name, id: jobId, r: reason }` on the Redis channel
 * `<prefix>:jobs:cancel`, and every worker process subscribes (one
 * connection per process) and hands it to BullMQ's own cancellation,
 * `worker.cancelJob(id, reason)`, which aborts the processor's signal
 * (bullmq-worker.ts). Pub/sub delivers at most once: a worker that misses the
 * message still aborts at the deadline the job carries (its own timer).
 */
import { Redis } from 'ioredis';
import type { Worker } from 'bullmq';
import { withTimeout } from '../backoff.js';
import { DependencyError } from '../errors.js';
import type { Logger } from '../logger.js';
import { describeError, reconnectDelay, throttledLog } from './redis-connection.js';

/** Why a job was cancelled (jobs_cancelled_total's `reason`). */
export type CancelReason = 'deadline' | 'caller_gone';

interface CancelMessage {
  n: string;
  id: string;
  r: CancelReason;
}

export function cancellationChannel(prefix: string): string {
  return `${prefix}:jobs:cancel`;
}

/** Caller side: asks the worker running job `jobId` of `name` to abort it. */
export async function publishCancellation(
  client: Redis,
  prefix: string,
  name: string,
  jobId: string,
  reason: CancelReason,
): Promise<void> {
  const message: CancelMessage = { n: name, id: jobId, r: reason };
  await client.publish(cancellationChannel(prefix), JSON.stringify(message));
}

export function isCancelReason(value: unknown): value is CancelReason {
  return value === 'deadline' || value === 'caller_gone';
}

/** Worker side: one subscription per process, dispatching to the worker of each job name. */
export class CancellationSubscriber {
  private readonly workers = new Map<string, Worker>();
  private readonly subscriber: Redis;
  private ready?: Promise<void>;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {
    this.subscriber = new Redis(redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: null,
      retryStrategy: reconnectDelay,
      connectionName: `${prefix}:cancel`,
    });
    this.subscriber.on('error', throttledLog(logger, 'Redis connection error (job cancellations)'));
    this.subscriber.on('message', (_channel: string, raw: string) => this.onMessage(raw));
  }

  /** Subscribes once (ioredis subscribes again after a reconnect); else a DependencyError naming REDIS_URL. */
  start(connectTimeoutMs: number, where: string): Promise<void> {
    this.ready ??= withTimeout(
      (async () => {
        if (this.subscriber.status === 'wait') await this.subscriber.connect();
        await this.subscriber.subscribe(cancellationChannel(this.prefix));
      })(),
      connectTimeoutMs,
      () => new Error(`no answer within ${connectTimeoutMs} ms`),
    ).catch((err: unknown) => {
      this.ready = undefined;
      throw new DependencyError(
        'REDIS_URL',
        `job cancellations could not subscribe on Redis at ${where}: ${describeError(err)}`,
        { cause: err },
      );
    });
    return this.ready;
  }

  watch(name: string, worker: Worker): void {
    this.workers.set(name, worker);
  }

  async close(): Promise<void> {
    this.workers.clear();
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }

  private onMessage(raw: string): void {
    let message: CancelMessage;
    try {
      message = JSON.parse(raw) as CancelMessage;
    } catch {
      return;
    }
    const worker = typeof message?.n === 'string' ? this.workers.get(message.n) : undefined;
    if (!worker || typeof message.id !== 'string' || !isCancelReason(message.r)) return;
    // False when this process does not run the job: another worker process does.
    if (worker.cancelJob(message.id, message.r))
      this.logger.debug({ job: message.n, jobId: message.id, reason: message.r }, 'job cancelled by its caller');
  }
}
