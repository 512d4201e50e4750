/**
 * The contract between a paid job SKU (api/catalogue) and its processor in the
 * worker role. The API validates the input, enqueues it on the queue port as
 * job `sku.<id>`, awaits the result with the SKU's deadline and settles the
 * payment only on a 200 (api/catalogue/job-sku-route.ts). The worker builds each
 * served processor once (warm resources such as an OCR worker pool live in
 * it) and takes jobs (jobs/role.ts).
 *
 * CPU-bound work (a scrub, a parse, a local summary) runs in the worker's CPU
 * pool (`deps.threads`, core/threads/cpu-pool.ts), never on the event loop:
 * under QUEUE=inprocess that loop is the API's. Only the pure function goes
 * to a thread (`threads.run(task, args, ctx.signal)`); input checks and I/O
 * (fetches, the store, a remote AI provider) stay on the loop. The signal
 * stops the thread's work when the caller has been answered.
 *
 * A processor returns the SKU's 200 body (the catalogue's output schema) or
 * throws a JobError with a stable code and an HTTP status: 4xx for input the
 * validation could not see (a refused URL, a TLD without RDAP), 502 for an
 * upstream failure. Neither is charged. Anything else is a crash: retried up
 * to JOB_MAX_ATTEMPTS, then a 500.
 */
import type { AiProvider } from '../core/ai/ai-provider.js';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { PairsCatalogue } from '../core/markets/pairs.js';
import type { JobHandler } from '../core/queue/queue.js';
import type { Store } from '../core/store/store.js';
import type { CpuPool } from '../core/threads/cpu-pool.js';

/**
 * What a processor may use. The worker role always wires `store` (core/role.ts: the worker has the queue and the
 * store ports) and `ai` (one provider for every processor); both stay optional here so that a test or a bench
 * can build a processor without them, and a processor that needs one says so when it is missing.
 */
export interface ProcessorDeps {
  config: Config;
  logger: Logger;
  pairs: PairsCatalogue;
  store?: Store;
  /** The AI provider port: strict-mode redaction and the AI SKUs use it. */
  ai?: AiProvider;
  /** The worker's CPU pool; absent (a test, a bench of the function): the work runs inline (`inlineCpu`). */
  threads?: CpuPool;
}

export interface SkuProcessor<I = unknown, O = unknown> {
  handle: JobHandler<I, O>;
  /** Releases what the processor holds (worker pools, sockets); called on shutdown. */
  close?(): Promise<void>;
}

export type ProcessorFactory<I = unknown, O = unknown> = (deps: ProcessorDeps) => Promise<SkuProcessor<I, O>>;

/** Queue job name of a SKU's processor. */
export const skuJobName = (skuId: string): string => `sku.${skuId}`;
