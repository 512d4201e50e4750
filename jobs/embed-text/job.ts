/** embed-text as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { embedTextSku } from './sku.js';

export const embedTextJob = servedBy(embedTextSku, {
  load: async () => (await import('./processor.js')).createEmbedTextProcessor as ProcessorFactory,
});
