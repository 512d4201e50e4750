/** image-ocr-shrink as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { imageOcrShrinkSku } from './sku.js';

export const imageOcrShrinkJob = servedBy(imageOcrShrinkSku, {
  load: async () => (await import('./processor.js')).createImageOcrProcessor as ProcessorFactory,
  // One OCR worker pool per process; twice its size in flight keeps it busy while images download.
  concurrency: (config) => config.OCR_WORKERS * 2,
});
