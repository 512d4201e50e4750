/**
 * A job SKU (jobs/job-sku.ts) as a catalogue entry: its contract as it is,
 * available when a processor serves it, its pre-flight given the runtime's
 * configuration, and a handler that runs the job through the queue port.
 *
 * The handler: the input was validated (and the payment verified) by the
 * router; the job runs in a worker behind the queue port and the caller waits
 * at most the SKU's deadline. A JobError from the processor keeps its code and
 * status (never settled: the gate settles only a 200); a deadline miss is a
 * 504 `job_timeout`; a queue that cannot be reached is a 503.
 */
import { AppError } from '../../core/errors.js';
import type { JobSku } from '../../jobs/job-sku.js';
import { skuJobName } from '../../jobs/sku-processor.js';
import type { Sku, SkuCall } from '../sku/sku.js';

export function jobSkuEntry(sku: JobSku): Sku {
  const { deadlineMs, preflight, processor, ...contract } = sku;
  return {
    ...contract,
    available: processor !== undefined,
    ...(preflight
      ? {
          preflight: async ({ input, runtime }: SkuCall<unknown>) =>
            preflight(input, { config: runtime.config, ...(runtime.log ? { log: runtime.log } : {}) }),
        }
      : {}),
    handler: async ({ input, runtime }: SkuCall<unknown>): Promise<unknown> => {
      if (!runtime.queue)
        throw new AppError('sku_unavailable', `${sku.id} needs the job queue, which this process does not run`, 503);
      const deadline = typeof deadlineMs === 'function' ? deadlineMs(input) : deadlineMs;
      return runtime.queue.run(skuJobName(sku.id), input, { deadlineMs: deadline });
    },
  };
}
