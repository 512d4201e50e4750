/**
 * A job SKU: a public contract (core/sku-contract.ts) whose calls run as jobs
 * in the worker role. Each lives in one folder, `jobs/<id>/`:
 *
 *  - `sku.ts`: the whole contract (route, price, schemas, examples, texts,
 *    latency), how long the API waits for a result, and the checks it runs
 *    before the 402 challenge (`preflight`, given the configuration only);
 *  - `processor.ts`: the worker side (jobs/sku-processor.ts);
 *  - `job.ts`: the contract served by its processor, the entry the
 *    catalogue's list (api/catalogue/sku-list.ts) names; the processor is
 *    loaded lazily, so the API process never loads its dependencies;
 *  - `README.md`: the SKU's documentation page.
 *
 * A contract without a processor is declared (schemas, price, docs) but
 * answers 503 `sku_unavailable` before any challenge.
 */
import type { Config } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { SkuContract } from '../core/sku-contract.js';
import type { ProcessorFactory } from './sku-processor.js';

/** What a job SKU's pre-flight may read: the configuration (it runs in the API process, before any challenge). */
export interface JobPreflightContext {
  config: Config;
  log?: Logger;
}

/** Methods (not function properties) so a concrete job SKU is assignable to the erased `JobSku`. */
export interface JobSkuContract<I = unknown, O = unknown> extends SkuContract<I, O> {
  /** How long the API waits for the result: a constant, or a function of the input (e.g. a fetch timeout plus processing). */
  deadlineMs: number | ((input: I) => number);
  /** Refuses (throws an AppError, never charged) what the schema cannot see without the configuration. Runs before the 402 challenge. */
  preflight?(input: I, ctx: JobPreflightContext): Promise<void>;
}

/** How the worker role runs a SKU's jobs. */
export interface JobProcessorEntry {
  /** Imports the processor module (only the worker role calls it). */
  load(): Promise<ProcessorFactory>;
  /** Concurrent jobs of this SKU per worker; default JOB_CONCURRENCY. */
  concurrency?(config: Config): number;
}

export interface JobSkuDefinition<I = unknown, O = unknown> extends JobSkuContract<I, O> {
  /** Absent: declared but not served. */
  processor?: JobProcessorEntry;
}

/** A job SKU with its types erased, as the catalogue's list holds it. */
export type JobSku = JobSkuDefinition<unknown, unknown>;

/** Checks a contract against its own input and output types (sku.ts). */
export function defineJobSku<I, O>(sku: JobSkuContract<I, O>): JobSkuContract<I, O> {
  return sku;
}

/** A contract served by a processor (job.ts), erased for the catalogue's list. */
export function servedBy<I, O>(sku: JobSkuContract<I, O>, processor: JobProcessorEntry): JobSku {
  return { ...sku, processor } as unknown as JobSku;
}
