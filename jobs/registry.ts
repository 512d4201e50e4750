/**
 * Which SKUs are served by a processor in the worker role. The catalogue marks
 * exactly these job SKUs available (the others answer 503 `sku_unavailable`
 * before any challenge). Processors are imported only by the worker role, so
 * the API process never loads their dependencies (OCR, NLP models).
 */
import type { Config } from '../core/config.js';
import type { ProcessorFactory } from './sku-processor.js';

export interface RegisteredProcessor {
  load(): Promise<ProcessorFactory>;
  /** Concurrent jobs of this SKU per worker; default JOB_CONCURRENCY. */
  concurrency?(config: Config): number;
}

export const SKU_PROCESSORS: Readonly<Record<string, RegisteredProcessor>> = {
  // one line per served SKU, e.g.:
  // 'stealth-dom': { load: async () => (await import('./stealth-dom/processor.js')).createStealthDomProcessor as ProcessorFactory },
};

export const isServedJobSku = (skuId: string): boolean => Object.hasOwn(SKU_PROCESSORS, skuId);
