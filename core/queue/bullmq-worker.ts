/**
 * Worker side of the BullMQ adapter: one `Worker` per job name (its own
 * connections, maxRetriesPerRequest null). lockDuration = lockMs and the
 * stalled check every lockMs, so the job of a worker process that died is
 * picked up again after its lock expires; `ctx.attempt` counts starts (a crash
 * and a dead worker both count), capped at maxAttempts. The handler runs with
 * an AbortSignal that fires at the caller's deadline, or earlier when the
 * caller cancels it (bullmq-cancellation.ts: BullMQ's `worker.cancelJob`
 * aborts the signal BullMQ hands the processor); a handler whose CPU work
 * runs in the pool stops at once, so the worker's slot frees for the next
 * job. Each abort is counted on jobs_cancelled_total (stage running; a job
 * whose caller gave up before it started is skipped: stage waiting). A
 * result produced after the deadline is never written (job_timeout instead). Coded errors are not retried (bullmq-job-format.ts);
 * an uncoded crash is retried by BullMQ while attempts remain.
 */
import { Worker, type Job } from 'bullmq';
import { withTimeout } from '../backoff.js';
import { DependencyError } from '../errors.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import { isCancelReason, type CancelReason } from './bullmq-cancellation.js';
import { codedFailure, queueName, type Envelope, type Wrapped } from './bullmq-job-format.js';
import { codedError } from './job-rules.js';
import { JobCancelledError, JobTimeoutError, type JobHandler } from './queue.js';
import { describeError, reconnectDelay, throttledLog } from './redis-connection.js';

const ADAPTER = 'bullmq';
/** How long a worker's main loop waits before fetching again after a Redis error; a job is taken soon after Redis returns. */
const RUN_RETRY_DELAY_MS = 250;

export interface BullMqWorkerOptions {
  redisUrl: string;
  /** Redis key prefix (QUEUE_PREFIX). */
  prefix: string;
  /** Worker concurrency per job name (default JOB_CONCURRENCY; process() may set its own). */
  concurrency: number;
  /** Job lock (JOB_LOCK_MS): a dead worker's job is retried after it expires. */
  lockMs: number;
  /** Attempts for a job whose handler crashed or whose worker died (JOB_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** How long start-up (and ping) waits for Redis to answer. */
  connectTimeoutMs: number;
  logger: Logger;
  /** The redacted Redis URL, for messages. */
  where: string;
}

/** Creates (and starts) the worker of job `name`; see workerReady. */
export function createBullMqWorker<I, O>(
  name: string,
  handler: JobHandler<I, O>,
  options: BullMqWorkerOptions,
): Worker<Envelope, Wrapped> {
  const { logger, lockMs, maxAttempts, concurrency } = options;

  // Three parameters: BullMQ then hands each job an AbortSignal that `worker.cancelJob` aborts.
  const processor = async (job: Job<Envelope, Wrapped>, _token?: string, cancel?: AbortSignal): Promise<Wrapped> => {
    const { d: data, dl: deadline, dm: deadlineMs } = job.data;
    // The caller gave up: skip the work, report a payload-free timeout.
    if (!(Date.now() < deadline)) {
      metrics.jobsCancelled.inc({ adapter: ADAPTER, job: name, reason: 'deadline', stage: 'waiting' });
      throw codedFailure(new JobTimeoutError(name, deadlineMs));
    }
    const controller = new AbortController();
    const abort = (reason: CancelReason) => {
      if (controller.signal.aborted) return;
      metrics.jobsCancelled.inc({ adapter: ADAPTER, job: name, reason, stage: 'running' });
      controller.abort(reason === 'deadline' ? new JobTimeoutError(name, deadlineMs) : new JobCancelledError(name));
    };
    const abortedFailure = () => {
      const reason: unknown = controller.signal.reason;
      return codedFailure(reason instanceof JobCancelledError ? reason : new JobTimeoutError(name, deadlineMs));
    };
    const timer = setTimeout(() => abort('deadline'), deadline - Date.now());
    const onCancel = () => abort(isCancelReason(cancel?.reason) ? cancel.reason : 'deadline');
    if (cancel?.aborted) onCancel();
    else cancel?.addEventListener('abort', onCancel, { once: true });
    // attemptsStarted counts every start, including one whose worker died.
    const attempt = Math.max(1, job.attemptsStarted || job.attemptsMade + 1);
    let result: O;
    try {
      result = await handler(data as I, { jobId: job.id ?? '', attempt, deadline, signal: controller.signal });
    } catch (err) {
      if (controller.signal.aborted) throw abortedFailure();
      if (!(Date.now() < deadline)) throw codedFailure(new JobTimeoutError(name, deadlineMs));
      const coded = codedError(err);
      if (coded) throw codedFailure(coded);
      const crash = err instanceof Error ? err : new Error(String(err));
      const willRetry = job.attemptsMade + 1 < (job.opts.attempts ?? 1) && attempt < maxAttempts;
      if (willRetry) metrics.queueJobs.inc({ adapter: ADAPTER, name, outcome: 'retried' });
      logger.warn(
        { job: name, jobId: job.id, attempt, err: crash.message, retry: willRetry },
        willRetry ? 'job crashed; retrying' : 'job crashed',
      );
      throw crash;
    } finally {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
    }
    // Cancelled (its caller answered), even if the handler finished: no result for a caller that left.
    if (controller.signal.aborted) throw abortedFailure();
    // A result produced after the deadline has no reader: never write it.
    if (!(Date.now() < deadline)) throw codedFailure(new JobTimeoutError(name, deadlineMs));
    return { v: result };
  };

  const worker = new Worker<Envelope, Wrapped>(queueName(name), processor, {
    connection: {
      url: options.redisUrl,
      maxRetriesPerRequest: null,
      retryStrategy: reconnectDelay,
      connectionName: `${options.prefix}:worker:${name}`,
    },
    // After a lost connection the main loop waits this long before fetching again (BullMQ default 15 s).
    runRetryDelay: RUN_RETRY_DELAY_MS,
    prefix: options.prefix,
    concurrency,
    lockDuration: lockMs,
    stalledInterval: lockMs,
    // A dead worker's job is started again while attempts remain...
    maxStalledCount: Math.max(0, maxAttempts - 1),
    // ...and no job starts more than maxAttempts times, crash or stall.
    maxStartedAttempts: maxAttempts,
    // Safety net for jobs added without the options run() sets.
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
    autorun: true,
  });
  worker.on('error', throttledLog(logger, `BullMQ worker error (job ${name})`));
  return worker;
}

/** Resolves once the worker reaches Redis; else throws a DependencyError naming REDIS_URL (see closeWorkerNow). */
export async function workerReady(
  worker: Worker<Envelope, Wrapped>,
  name: string,
  options: BullMqWorkerOptions,
): Promise<void> {
  try {
    await withTimeout(
      worker.waitUntilReady(),
      options.connectTimeoutMs,
      () => new Error(`no answer within ${options.connectTimeoutMs} ms`),
    );
  } catch (err) {
    throw new DependencyError(
      'REDIS_URL',
      `worker for job ${name} could not reach Redis at ${options.where}: ${describeError(err)}`,
      { cause: err },
    );
  }
}

/** Closes a worker that never became ready, without waiting for jobs or long for Redis. */
export async function closeWorkerNow(worker: Worker<Envelope, Wrapped>): Promise<void> {
  await withTimeout(worker.close(true), 2000, () => new Error('close timed out')).catch(() => undefined);
}
