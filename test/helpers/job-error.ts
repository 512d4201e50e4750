/** The JobError a job (or a processor, or a fetch) must fail with: asserted, then returned for the code and details. */
import { expect } from 'vitest';
import { JobError } from '../../core/queue/queue.js';

export async function jobErrorOf(promise: Promise<unknown>, message?: string): Promise<JobError> {
  const err = await promise.then(
    (out) => new Error(`expected a failure, got ${JSON.stringify(out)}`),
    (e: unknown) => e,
  );
  expect(err, message).toBeInstanceOf(JobError);
  return err as JobError;
}
