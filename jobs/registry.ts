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
  'domain-check': { load: async () => (await import('./domain-check/processor.js')).createDomainCheckProcessor as ProcessorFactory },
  'dex-price-summary': { load: async () => (await import('./dex-price-summary/processor.js')).createDexPriceSummaryProcessor as ProcessorFactory },
  'airgap-scrub': { load: async () => (await import('./airgap-scrub/processor.js')).createAirgapScrubProcessor as ProcessorFactory },
  'rag-shrink': { load: async () => (await import('./rag-shrink/processor.js')).createRagShrinkProcessor as ProcessorFactory },
  'code-denoise': { load: async () => (await import('./code-denoise/processor.js')).createCodeDenoiseProcessor as ProcessorFactory },
  'stealth-dom': { load: async () => (await import('./stealth-dom/processor.js')).createStealthDomProcessor as ProcessorFactory },
  'image-ocr-shrink': { load: async () => (await import('./image-ocr/processor.js')).createImageOcrProcessor as ProcessorFactory, concurrency: (c) => c.OCR_WORKERS * 2 },
  'embed-text': { load: async () => (await import('./embed-text/processor.js')).createEmbedTextProcessor as ProcessorFactory },
  'embed-multilingual': { load: async () => (await import('./embed-multilingual/processor.js')).createEmbedMultilingualProcessor as ProcessorFactory },
  'summarize': { load: async () => (await import('./summarize/processor.js')).createSummarizeProcessor as ProcessorFactory },
  'x-sentiment': { load: async () => (await import('./x-sentiment/processor.js')).createXSentimentProcessor as ProcessorFactory },
};

export const isServedJobSku = (skuId: string): boolean => Object.hasOwn(SKU_PROCESSORS, skuId);
