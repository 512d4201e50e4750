/** dex-price-summary as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { dexPriceSummarySku } from './sku.js';

export const dexPriceSummaryJob = servedBy(dexPriceSummarySku, {
  load: async () => (await import('./processor.js')).createDexPriceSummaryProcessor as ProcessorFactory,
});
