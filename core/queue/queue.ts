/**
 * Queue port: run a named job somewhere else and await its result with a
 * deadline. Two adapters (BullMQ on Redis, in-process runner) honour these
 * semantics (test/contract/queue.contract.test.ts):
 *  - `run()` resolves with the handler's result, or rejects with a JobError
 *    carrying the handler's `code` (a coded error is not retried);
 *  - a deadline miss rejects with JobTimeoutError (`job_timeout`) and the job
 *    is withdrawn if it has not started; the handler sees `ctx.signal` abort;
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
