/** summarize as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { summarizeSku } from './sku.js';

export const summarizeJob = servedBy(summarizeSku, {
  load: async () => (await import('./processor.js')).createSummarizeProcessor as ProcessorFactory,
});
