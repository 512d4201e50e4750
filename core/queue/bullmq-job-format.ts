/**
 * What a BullMQ job carries in Redis and how failures travel back, shared by
 * the caller and worker sides of the BullMQ adapter:
 *  - a job is an Envelope (the caller's data and deadline) on queue
 *    `jobs.<name>`; its result is Wrapped so that `undefined` survives JSON;
 *  - a coded error (job-rules.ts codedError) becomes an UnrecoverableError whose message is CODED_PREFIX + JSON {code,message,
 *    status,details}, so BullMQ does not retry it; the caller decodes it back
 *    into a JobError (job_timeout into JobTimeoutError). Any other failed
 *    reason reaches the caller as JobError `job_failed`.
 */
import { UnrecoverableError } from 'bullmq';
import { JobError, JobTimeoutError } from './queue.js';

/** What a job carries in Redis: the caller's data and deadline. */
export interface Envelope {
  d: unknown;
  /** Caller's deadline, epoch ms. */
  dl: number;
  /** Caller's deadline as given, ms (for the error message). */
  dm: number;
}

/** The handler's result, wrapped so that `undefined` survives JSON. */
export interface Wrapped {
  v?: unknown;
}

/** Marks a failedReason that carries a coded error as JSON. */
const CODED_PREFIX = 'x402-job-error:';

export function queueName(name: string): string {
  return `jobs.${name}`;
}

export function codedFailure(err: JobError): UnrecoverableError {
  return new UnrecoverableError(
    CODED_PREFIX + JSON.stringify({ code: err.code, message: err.message, status: err.status, details: err.details }),
  );
}

export function decodeFailure(name: string, deadlineMs: number, failedReason: string | undefined): JobError {
  const reason = failedReason ?? 'unknown error';
  if (reason.startsWith(CODED_PREFIX)) {
    try {
      const parsed = JSON.parse(reason.slice(CODED_PREFIX.length)) as {
        code?: unknown;
        message?: unknown;
        status?: unknown;
        details?: unknown;
      };
      if (typeof parsed.code === 'string' && typeof parsed.message === 'string') {
        if (parsed.code === 'job_timeout') return new JobTimeoutError(name, deadlineMs);
        const status = typeof parsed.status === 'number' ? parsed.status : 500;
        const details =
          parsed.details && typeof parsed.details === 'object' ? (parsed.details as Record<string, unknown>) : {};
        return new JobError(parsed.code, parsed.message, status, details);
      }
    } catch {
      // Not ours after all: an uncoded failure.
    }
  }
  return new JobError('job_failed', `job ${name} failed: ${reason}`, 500, { job: name });
}

export function unwrap(returnvalue: unknown): unknown {
  return returnvalue !== null && typeof returnvalue === 'object' && 'v' in returnvalue
    ? (returnvalue as Wrapped).v
    : undefined;
}
