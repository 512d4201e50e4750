/**
 * BullMQ adapter of the queue port (see queue.ts), following BullMQ's
 * production guide. This file checks the options, connects and composes:
 *  - redis-connection.ts: start-up checks that Redis answers within
 *    `connectTimeoutMs` (and warns when maxmemory-policy is not
 *    `noeviction`), else DependencyError naming REDIS_URL: it never hangs;
 *  - bullmq-callers.ts (caller side): one fail-fast connection shared by one
 *    `Queue` and ONE `QueueEvents` per job name settling a jobId -> waiter
 *    map; zero retention (results XDEL'd once read, abandoned jobs removed);
 *  - bullmq-worker.ts (worker side): one `Worker` per name, lockDuration =
 *    stalled check = lockMs, `ctx.attempt` counts starts, capped at
 *    maxAttempts; a result produced after the caller's deadline is never
 *    written (job_timeout instead);
 *  - bullmq-heartbeat.ts: each running worker's heartbeat (a key per job
 *    name with a TTL), read by workerHeartbeats() for the API's readiness;
 *  - bullmq-cancellation.ts: the cancellation of an active job whose caller
 *    was answered (pub/sub from the caller side, BullMQ's cancelJob in the
 *    worker process: one subscription per process, started with its first worker);
 *  - bullmq-job-format.ts: the job envelope and coded errors (not retried;
 *    an uncoded error is retried with a short exponential backoff and
 *    finally reaches the caller as JobError `job_failed`).
 * close(): workers finish in-flight jobs, callers still waiting get their
 * result (or their deadline), then queues, events and connections close.
 */
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { withTimeout } from '../backoff.js';
import { DependencyError, errorMessage } from '../errors.js';
import { BullMqCallers } from './bullmq-callers.js';
import { CancellationSubscriber } from './bullmq-cancellation.js';
import { freshHeartbeats, startHeartbeats } from './bullmq-heartbeat.js';
import type { Envelope, Wrapped } from './bullmq-job-format.js';
import { closeWorkerNow, createBullMqWorker, workerReady, type BullMqWorkerOptions } from './bullmq-worker.js';
import { assertDeadline, assertName, closedError } from './job-rules.js';
import type { JobHandler, JobQueue, ProcessOptions, RunOptions } from './queue.js';
import { connectCallerRedis, describeError } from './redis-connection.js';

/** Connection, worker and retry settings (bullmq-worker.ts says each), plus the caller side's. */
export interface BullMqQueueOptions extends Omit<BullMqWorkerOptions, 'where'> {
  /**
   * Approximate cap of each events stream (BullMQ default 10 000). Results do
   * not depend on it for deletion (they are XDEL'd once read); it bounds the
   * payload-free bookkeeping events and any event whose caller process died.
   * It must stay well above the events produced between two reads of a
   * QueueEvents (about 4 per job), or a caller could miss its result.
   */
  eventsMaxLen?: number;
  /** First retry delay after a crash (exponential). Default 100 ms. */
  retryBackoffMs?: number;
}

const ADAPTER = 'bullmq';

export async function createBullMqQueue(options: BullMqQueueOptions): Promise<JobQueue> {
  for (const key of ['concurrency', 'lockMs', 'maxAttempts', 'connectTimeoutMs'] as const) {
    if (!Number.isInteger(options[key]) || options[key] < 1)
      throw new Error(`bullmq queue: ${key} must be a positive integer, got ${options[key]}`);
  }
  const { client, where } = await connectCallerRedis(options);
  return new BullMqQueue(options, client, where);
}

class BullMqQueue implements JobQueue {
  readonly adapter = ADAPTER;
  private readonly workers = new Map<string, Worker<Envelope, Wrapped>>();
  private cancellations?: CancellationSubscriber;
  private readonly callers: BullMqCallers;
  private closing = false;
  private closed?: Promise<void>;
  private heartbeats?: ReturnType<typeof startHeartbeats>;

  constructor(
    private readonly options: BullMqQueueOptions,
    private readonly client: Redis,
    private readonly where: string,
  ) {
    this.callers = new BullMqCallers(
      {
        redisUrl: options.redisUrl,
        prefix: options.prefix,
        connectTimeoutMs: options.connectTimeoutMs,
        logger: options.logger,
        eventsMaxLen: options.eventsMaxLen ?? 2000,
        jobOptions: {
          attempts: options.maxAttempts,
          backoff: { type: 'exponential', delay: options.retryBackoffMs ?? 100 },
          removeOnComplete: true,
          removeOnFail: true,
        },
      },
      client,
      where,
    );
  }

  async process<I, O>(name: string, handler: JobHandler<I, O>, processOptions?: ProcessOptions): Promise<void> {
    if (this.closing) throw closedError();
    assertName(name);
    if (this.workers.has(name)) throw new Error(`bullmq queue: a handler for job ${name} is already registered`);
    const concurrency = processOptions?.concurrency ?? this.options.concurrency;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new Error(`bullmq queue: concurrency must be a positive integer, got ${concurrency}`);
    const workerOptions = { ...this.options, concurrency, where: this.where };
    const worker = createBullMqWorker(name, handler, workerOptions);
    this.workers.set(name, worker);
    try {
      await workerReady(worker, name, workerOptions);
      // Callers cancel active jobs through it (bullmq-cancellation.ts); one subscription per process.
      this.cancellations ??= new CancellationSubscriber(
        this.options.redisUrl,
        this.options.prefix,
        this.options.logger,
      );
      this.cancellations.watch(name, worker);
      await this.cancellations.start(this.options.connectTimeoutMs, this.where);
    } catch (err) {
      this.workers.delete(name);
      await closeWorkerNow(worker);
      throw err;
    }
    this.heartbeats ??= startHeartbeats(
      this.client,
      this.options.prefix,
      `${hostname()}:${process.pid}`,
      () => [...this.workers].filter(([, w]) => w.isRunning() && !w.closing).map(([n]) => n),
      this.options.logger,
    );
    await this.heartbeats.beat();
  }

  async workerHeartbeats(names: readonly string[]): Promise<Set<string>> {
    const { connectTimeoutMs } = this.options;
    try {
      return await withTimeout(
        freshHeartbeats(this.client, this.options.prefix, names),
        connectTimeoutMs,
        () => new Error(`no answer within ${connectTimeoutMs} ms`),
      );
    } catch (err) {
      throw new DependencyError('REDIS_URL', `Redis at ${this.where} did not answer: ${describeError(err)}`, {
        cause: err,
      });
    }
  }

  async run<I, O>(name: string, data: I, options: RunOptions): Promise<O> {
    if (this.closing) throw closedError();
    assertName(name);
    const deadlineMs = options?.deadlineMs;
    assertDeadline(deadlineMs);
    const startedAt = performance.now();
    return this.callers.run<O>(name, data, Date.now() + deadlineMs, deadlineMs, startedAt, options.signal);
  }

  async ping(): Promise<void> {
    try {
      await withTimeout(
        this.client.ping(),
        this.options.connectTimeoutMs,
        () => new Error(`no answer within ${this.options.connectTimeoutMs} ms`),
      );
    } catch (err) {
      throw new DependencyError('REDIS_URL', `Redis at ${this.where} did not answer: ${describeError(err)}`, {
        cause: err,
      });
    }
  }

  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    this.heartbeats?.stop();
    const { logger } = this.options;
    // Workers finish their in-flight jobs (and stop taking new ones).
    await Promise.all(
      [...this.workers.values()].map((w) =>
        w.close().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'worker close failed')),
      ),
    );
    this.workers.clear();
    await this.cancellations?.close();
    // Callers still waiting get their result, or their deadline, whichever comes first.
    await this.callers.close();
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
