/**
 * In-process job runner with the queue port's semantics (see queue.ts), the
 * embedded default when QUEUE=inprocess:
 *  - one lane per job name: a handler and a concurrency limit; jobs beyond
 *    the limit wait in FIFO order; jobs for a name without a handler yet wait
 *    (until their deadline) for `process()` to register one;
 *  - the caller's deadline: a job that has not started by then is withdrawn;
 *    a running one sees `ctx.signal` abort (its slot stays taken until the
 *    handler returns, so the concurrency limit is honest: a handler whose CPU
 *    work runs in the pool returns at once, its thread terminated); either
 *    way the caller gets JobTimeoutError; a caller that is gone
 *    (`RunOptions.signal`) cancels its job the same way (JobCancelledError);
 *    both are counted on jobs_cancelled_total;
 *  - a coded error (JobError, or any non-retryable AppError) reaches the
 *    caller with its code/status/details and is not retried; an uncoded one
 *    (a crash) is retried after a short backoff up to `maxAttempts`, then the
 *    caller gets JobError `job_failed`;
 *  - data and results cross the boundary as JSON (a copy), exactly as they do
 *    through Redis, so a handler behaves the same under both adapters;
 *  - zero retention: a job's record is dropped as soon as it settles and its
 *    handler has returned (`inProcessQueueStats` exposes the counts).
 * Name, deadline and coded-error rules are the port's (job-rules.ts). The
 * runner stays one file (a little over 300 lines): lanes, deadlines, retries
 * and settling all act on the same job records and states.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { backoffDelay } from '../backoff.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { assertDeadline, assertName, closedError, codedError } from './job-rules.js';
import {
  JobCancelledError,
  JobError,
  JobTimeoutError,
  type JobContext,
  type JobHandler,
  type JobQueue,
  type ProcessOptions,
  type RunOptions,
} from './queue.js';

export interface InProcessQueueOptions {
  /** Default concurrency per job name (JOB_CONCURRENCY). */
  concurrency: number;
  /** Attempts for a job whose handler crashed (JOB_MAX_ATTEMPTS). */
  maxAttempts: number;
  logger: Logger;
  /** First retry delay after a crash; doubles per attempt (jittered), capped at 2 s. Default 50 ms. */
  retryBackoffMs?: number;
}

/** Live records held by an in-process queue; all zero once every job has settled and every handler returned. */
export interface InProcessQueueStats {
  /** Jobs whose caller still waits (queued, waiting for a handler, retrying or running). */
  pending: number;
  /** Jobs queued behind a concurrency limit or waiting for a handler. */
  queued: number;
  /** Handlers currently executing (including ones whose caller already timed out). */
  running: number;
}

const ADAPTER = 'inprocess';

export async function createInProcessQueue(options: InProcessQueueOptions): Promise<JobQueue> {
  const queue = new InProcessQueue(options);
  statsOf.set(queue, () => queue.stats());
  return queue;
}

const statsOf = new WeakMap<JobQueue, () => InProcessQueueStats>();

/** Debug accessor for tests and /health: counts of live job records in an in-process queue. */
export function inProcessQueueStats(queue: JobQueue): InProcessQueueStats {
  const stats = statsOf.get(queue);
  if (!stats) throw new Error('inProcessQueueStats: not an in-process queue');
  return stats();
}

type JobState = 'queued' | 'active' | 'retrying' | 'settled';

interface Job {
  id: string;
  name: string;
  /** JSON copy of the caller's data; dropped when the job settles. */
  data: unknown;
  deadline: number;
  deadlineMs: number;
  startedAt: number;
  attempt: number;
  state: JobState;
  controller?: AbortController;
  deadlineTimer?: NodeJS.Timeout;
  retryTimer?: NodeJS.Timeout;
  /** The caller's signal and the listener that cancels the job when it aborts. */
  callerSignal?: AbortSignal;
  onCallerGone?: () => void;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface Lane {
  name: string;
  handler: JobHandler<unknown, unknown>;
  concurrency: number;
  active: number;
  queue: Job[];
}

class InProcessQueue implements JobQueue {
  readonly adapter = ADAPTER;
  private readonly lanes = new Map<string, Lane>();
  /** Jobs for names that have no handler yet, FIFO per name. */
  private readonly orphans = new Map<string, Job[]>();
  /** Unsettled jobs by id. */
  private readonly pending = new Map<string, Job>();
  /** Jobs whose handler is executing (may outlive the caller's wait). */
  private readonly running = new Set<Job>();
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private readonly retryBackoffMs: number;

  constructor(private readonly options: InProcessQueueOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new Error(`in-process queue: concurrency must be a positive integer, got ${options.concurrency}`);
    if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1)
      throw new Error(`in-process queue: maxAttempts must be a positive integer, got ${options.maxAttempts}`);
    this.retryBackoffMs = options.retryBackoffMs ?? 50;
  }

  stats(): InProcessQueueStats {
    let queued = 0;
    for (const lane of this.lanes.values()) queued += lane.queue.length;
    for (const jobs of this.orphans.values()) queued += jobs.length;
    return { pending: this.pending.size, queued, running: this.running.size };
  }

  async process<I, O>(name: string, handler: JobHandler<I, O>, options?: ProcessOptions): Promise<void> {
    if (this.closed) throw closedError();
    assertName(name);
    if (this.lanes.has(name)) throw new Error(`in-process queue: a handler for job ${name} is already registered`);
    const concurrency = options?.concurrency ?? this.options.concurrency;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new Error(`in-process queue: concurrency must be a positive integer, got ${concurrency}`);
    const lane: Lane = { name, handler: handler as JobHandler<unknown, unknown>, concurrency, active: 0, queue: [] };
    this.lanes.set(name, lane);
    const waiting = this.orphans.get(name);
    if (waiting) {
      this.orphans.delete(name);
      for (const job of waiting) lane.queue.push(job);
    }
    this.pump(lane);
  }

  run<I, O>(name: string, data: I, options: RunOptions): Promise<O> {
    if (this.closed) return Promise.reject(closedError());
    try {
      assertName(name);
      assertDeadline(options?.deadlineMs);
    } catch (err) {
      return Promise.reject(err);
    }
    let copy: unknown;
    try {
      copy = jsonCopy(data);
    } catch (err) {
      return Promise.reject(
        new JobError('job_invalid_data', `job ${name}: data is not JSON-serialisable: ${errorMessage(err)}`, 500, {
          job: name,
        }),
      );
    }
    const { deadlineMs, signal } = options;
    if (signal?.aborted) return Promise.reject(new JobCancelledError(name));
    return new Promise<O>((resolve, reject) => {
      const job: Job = {
        id: randomUUID(),
        name,
        data: copy,
        deadline: Date.now() + deadlineMs,
        deadlineMs,
        startedAt: performance.now(),
        attempt: 0,
        state: 'queued',
        resolve: resolve as (value: unknown) => void,
        reject,
      };
      job.deadlineTimer = setTimeout(() => this.cancel(job, 'deadline'), deadlineMs);
      if (signal) {
        job.callerSignal = signal;
        job.onCallerGone = () => this.cancel(job, 'caller_gone');
        signal.addEventListener('abort', job.onCallerGone, { once: true });
      }
      this.pending.set(job.id, job);
      this.enqueue(job);
    });
  }

  async ping(): Promise<void> {
    if (this.closed) throw closedError();
  }

  /**
   * Stops taking jobs (run/process reject), lets queued and running jobs
   * finish (each is bounded by its caller's deadline; a running handler is
   * awaited even past it), and rejects jobs that wait for a handler that can
   * no longer be registered.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const jobs of this.orphans.values()) {
      for (const job of jobs) this.settle(job, closedError(), 'failed');
    }
    this.orphans.clear();
    if (this.pending.size === 0 && this.running.size === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private enqueue(job: Job): void {
    job.state = 'queued';
    const lane = this.lanes.get(job.name);
    if (lane) {
      lane.queue.push(job);
      this.pump(lane);
      return;
    }
    if (this.closed) {
      this.settle(job, closedError(), 'failed');
      return;
    }
    let waiting = this.orphans.get(job.name);
    if (!waiting) this.orphans.set(job.name, (waiting = []));
    waiting.push(job);
  }

  private pump(lane: Lane): void {
    while (lane.active < lane.concurrency && lane.queue.length > 0) {
      const job = lane.queue.shift()!;
      if (job.state !== 'queued') continue;
      this.start(lane, job);
    }
  }

  private start(lane: Lane, job: Job): void {
    lane.active++;
    this.running.add(job);
    job.state = 'active';
    job.attempt++;
    const controller = new AbortController();
    job.controller = controller;
    const ctx: JobContext = { jobId: job.id, attempt: job.attempt, deadline: job.deadline, signal: controller.signal };
    const data = job.data;
    let outcome: Promise<unknown>;
    try {
      outcome = Promise.resolve(lane.handler(data, ctx));
    } catch (err) {
      outcome = Promise.reject(err);
    }
    outcome
      .then(
        (result) => {
          // The result crosses the boundary as JSON, as through Redis; a result
          // that cannot be serialised is a crash like any other.
          const copy = jsonCopy(result);
          if (job.state === 'active') this.settle(job, undefined, 'completed', copy);
        },
        (err: unknown) => {
          if (job.state !== 'active') {
            this.options.logger.debug(
              { job: job.name, jobId: job.id, err: errorMessage(err) },
              'job failed after its caller gave up',
            );
            return;
          }
          this.onHandlerError(job, err);
        },
      )
      .catch((err: unknown) => {
        if (job.state === 'active') this.onHandlerError(job, err);
      })
      .finally(() => {
        lane.active--;
        this.running.delete(job);
        job.controller = undefined;
        this.pump(lane);
        this.checkIdle();
      });
  }

  private onHandlerError(job: Job, err: unknown): void {
    const coded = codedError(err);
    if (coded) {
      this.settle(job, coded, 'failed');
      return;
    }
    const reason = errorMessage(err);
    if (job.attempt < this.options.maxAttempts && Date.now() < job.deadline) {
      metrics.queueJobs.inc({ adapter: ADAPTER, name: job.name, outcome: 'retried' });
      this.options.logger.warn(
        { job: job.name, jobId: job.id, attempt: job.attempt, err: reason },
        'job crashed; retrying',
      );
      job.state = 'retrying';
      job.retryTimer = setTimeout(
        () => {
          job.retryTimer = undefined;
          if (job.state === 'retrying') this.enqueue(job);
        },
        backoffDelay(job.attempt, this.retryBackoffMs, 2000),
      );
      return;
    }
    this.options.logger.error({ job: job.name, jobId: job.id, attempt: job.attempt, err: reason }, 'job failed');
    this.settle(
      job,
      new JobError('job_failed', `job ${job.name} failed: ${reason}`, 500, { job: job.name, attempts: job.attempt }),
      'failed',
    );
  }

  /** The caller has its answer (deadline) or is gone: withdraw the job, or abort its handler. */
  private cancel(job: Job, reason: 'deadline' | 'caller_gone'): void {
    if (reason === 'deadline') job.deadlineTimer = undefined;
    if (job.state === 'settled') return;
    const error =
      reason === 'deadline' ? new JobTimeoutError(job.name, job.deadlineMs) : new JobCancelledError(job.name);
    metrics.jobsCancelled.inc({
      adapter: ADAPTER,
      job: job.name,
      reason,
      stage: job.state === 'active' ? 'running' : 'waiting',
    });
    if (job.state === 'queued') {
      // Withdraw: it must never start.
      const lane = this.lanes.get(job.name);
      const list = lane ? lane.queue : this.orphans.get(job.name);
      if (list) {
        const i = list.indexOf(job);
        if (i >= 0) list.splice(i, 1);
        if (!lane && list.length === 0) this.orphans.delete(job.name);
      }
    } else if (job.state === 'active') {
      job.controller?.abort(error);
    }
    this.settle(job, error, reason === 'deadline' ? 'timeout' : 'cancelled');
  }

  private settle(
    job: Job,
    err: Error | undefined,
    outcome: 'completed' | 'failed' | 'timeout' | 'cancelled',
    result?: unknown,
  ): void {
    if (job.state === 'settled') return;
    job.state = 'settled';
    if (job.onCallerGone) job.callerSignal?.removeEventListener('abort', job.onCallerGone);
    job.callerSignal = job.onCallerGone = undefined;
    if (job.deadlineTimer) clearTimeout(job.deadlineTimer);
    if (job.retryTimer) clearTimeout(job.retryTimer);
    job.deadlineTimer = job.retryTimer = undefined;
    job.data = undefined;
    this.pending.delete(job.id);
    metrics.queueJobs.inc({ adapter: ADAPTER, name: job.name, outcome });
    metrics.queueJobSeconds.observe({ adapter: ADAPTER, name: job.name }, (performance.now() - job.startedAt) / 1000);
    if (err) job.reject(err);
    else job.resolve(result);
    this.checkIdle();
  }

  private checkIdle(): void {
    if (!this.closed || this.pending.size > 0 || this.running.size > 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function jsonCopy(value: unknown): unknown {
  if (value === undefined) return undefined;
  const json = JSON.stringify(value);
  return json === undefined ? undefined : JSON.parse(json);
}
