/**
 * Rules of the queue port that both adapters apply the same way: which job
 * names and deadlines run() and process() accept (a plain Error otherwise, a
 * programming mistake rather than bad user input), the `queue_closed` error
 * of a closed queue, and which handler failures are deliberate (coded: a
 * JobError, or a non-retryable AppError, which reaches the caller with its
 * code, status and details and is never retried).
 */
import { AppError, isRetryable } from '../errors.js';
import { JobError } from './queue.js';

/** setTimeout's limit (about 24.8 days). */
const MAX_DEADLINE_MS = 2_147_483_647;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function assertName(name: string): void {
  if (typeof name !== 'string' || !NAME_RE.test(name))
    throw new Error(`job name must match ${NAME_RE}, got ${JSON.stringify(name)}`);
}

export function assertDeadline(deadlineMs: unknown): asserts deadlineMs is number {
  if (
    typeof deadlineMs !== 'number' ||
    !Number.isFinite(deadlineMs) ||
    deadlineMs <= 0 ||
    deadlineMs > MAX_DEADLINE_MS
  ) {
    throw new Error(`deadlineMs must be a positive number of ms (at most 2^31-1), got ${String(deadlineMs)}`);
  }
}

export function closedError(): JobError {
  return new JobError('queue_closed', 'job queue is closed', 503);
}

/** A handler's deliberate failure (JobError, or a non-retryable AppError) as the caller sees it. */
export function codedError(err: unknown): JobError | undefined {
  if (err instanceof JobError) return err;
  if (err instanceof AppError && !isRetryable(err)) {
    const coded = new JobError(err.code, err.message, err.status, err.details);
    (coded as { cause?: unknown }).cause = err;
    return coded;
  }
  return undefined;
}
