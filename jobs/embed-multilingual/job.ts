/** embed-multilingual as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { embedMultilingualSku } from './sku.js';

export const embedMultilingualJob = servedBy(embedMultilingualSku, {
  load: async () => (await import('./processor.js')).createEmbedMultilingualProcessor as ProcessorFactory,
});
