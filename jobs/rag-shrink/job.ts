/** rag-shrink as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { ragShrinkSku } from './sku.js';

export const ragShrinkJob = servedBy(ragShrinkSku, {
  load: async () => (await import('./processor.js')).createRagShrinkProcessor as ProcessorFactory,
});
