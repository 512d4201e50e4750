/**
 * The handler of a job SKU: the input was validated (and the payment verified)
 * by the router; the job runs in a worker behind the queue port and the
 * caller waits at most the SKU's deadline. A JobError from the processor keeps
 * its code and status (never settled: the gate settles only a 200); a deadline
 * miss is a 504 `job_timeout`; a queue that cannot be reached is a 503.
 */
import { AppError } from '../../core/errors.js';
import { skuJobName } from '../../jobs/sku-processor.js';
import type { SkuCall } from './sku.js';

/** `deadlineMs`: how long the API waits for the result (a function of the input, e.g. a fetch timeout plus processing). */
export function jobHandler<I, O>(skuId: string, deadlineMs: number | ((input: I) => number)) {
  return async ({ input, runtime }: SkuCall<I>): Promise<O> => {
    if (!runtime.queue) throw new AppError('sku_unavailable', `${skuId} needs the job queue, which this process does not run`, 503);
    const deadline = typeof deadlineMs === 'function' ? deadlineMs(input) : deadlineMs;
    return runtime.queue.run<I, O>(skuJobName(skuId), input, { deadlineMs: deadline });
  };
}
