/**
 * Queue port: run a named job somewhere else and await its result with a
 * deadline. Two adapters (BullMQ on Redis, in-process runner) honour these
 * semantics (test/contract/queue.contract.test.ts):
 *  - `run()` resolves with the handler's result, or rejects with a JobError
 *    carrying the handler's `code` (a coded error is not retried);
 *  - a deadline miss rejects with JobTimeoutError (`job_timeout`) and the job
 *    is withdrawn if it has not started; the handler sees `ctx.signal` abort;
 *  - cancellation: once the caller has its answer (deadline passed) or is gone
 *    (`RunOptions.signal` aborted: JobError `job_cancelled`), the job is
 *    cancelled within 1 s: withdrawn if waiting, else `ctx.signal` aborts in
 *    the worker (BullMQ: the caller publishes the cancellation, the worker
 *    aborts; the worker's own deadline timer is the fallback). A handler that
 *    runs its CPU work in the pool (core/threads/cpu-pool.ts) stops at once
 *    (its thread is terminated) and frees its slot, so the next job starts.
 *    Each is counted on `jobs_cancelled_total{adapter,job,reason,stage}`
 *    (reason deadline|caller_gone; stage waiting|running). A cancelled job
 *    never produces a result for its caller (never a 200, never charged);
 *  - a handler that crashes (an uncoded error, or a worker process that
 *    dies) is retried up to JOB_MAX_ATTEMPTS times;
 *  - nothing of a finished job lingers: job data and result are deleted
 *    when the caller has the result (zero retention, needed by PII SKUs).
 */
import { AppError } from '../errors.js';

export interface JobContext {
  jobId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Epoch ms after which the caller no longer waits. */
  deadline: number;
  signal: AbortSignal;
}

export type JobHandler<I = unknown, O = unknown> = (data: I, ctx: JobContext) => Promise<O>;

export interface RunOptions {
  /** Caller's deadline in ms from now. */
  deadlineMs: number;
  /** Aborts when the caller is gone (e.g. its HTTP client disconnected): the job is cancelled. */
  signal?: AbortSignal;
}

export interface ProcessOptions {
  concurrency?: number;
}

export interface JobQueue {
  readonly adapter: 'inprocess' | 'bullmq';
  /** Worker side: registers the handler for `name` and starts taking jobs. */
  process<I, O>(name: string, handler: JobHandler<I, O>, options?: ProcessOptions): Promise<void>;
  /** Caller side: enqueue and await the result. */
  run<I, O>(name: string, data: I, options: RunOptions): Promise<O>;
  ping(): Promise<void>;
  /**
   * Which of `names` a worker able to take a job serves right now (a fresh heartbeat, see
   * bullmq-queue.ts). Absent when workers run in this process (in-process queue): nothing to watch.
   */
  workerHeartbeats?(names: readonly string[]): Promise<Set<string>>;
  /** Stops taking jobs, lets in-flight ones finish (or requeues them), closes connections. */
  close(): Promise<void>;
}

/** A handler's deliberate failure, with a stable code; propagated to the caller as is. */
export class JobError extends AppError {
  constructor(code: string, message: string, status = 500, details: Record<string, unknown> = {}) {
    super(code, message, status, details);
    this.name = 'JobError';
  }
}

export class JobTimeoutError extends JobError {
  constructor(name: string, deadlineMs: number) {
    super('job_timeout', `job ${name} produced no result within ${deadlineMs} ms`, 504, {
      job: name,
      deadline_ms: deadlineMs,
    });
    this.name = 'JobTimeoutError';
  }
}

/** The caller went away (RunOptions.signal aborted) before the job produced its result. */
export class JobCancelledError extends JobError {
  constructor(name: string) {
    super('job_cancelled', `job ${name} was cancelled: its caller is gone`, 499, { job: name });
    this.name = 'JobCancelledError';
  }
}

/**
 * The queue cannot take or answer a job now (Redis unreachable, or the connection lost while the job was in
 * flight): 503 at once rather than a 504 at the deadline; the caller's work was not done, so nothing is charged.
 */
export class QueueUnavailableError extends AppError {
  readonly retryable = true;
  constructor(message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super('queue_unavailable', message, 503, { dependency: 'queue', retry_after_seconds: 2, ...details });
    this.name = 'QueueUnavailableError';
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}
