/** x-sentiment as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { xSentimentSku } from './sku.js';

export const xSentimentJob = servedBy(xSentimentSku, {
  load: async () => (await import('./processor.js')).createXSentimentProcessor as ProcessorFactory,
});
