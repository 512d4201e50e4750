/** domain-check as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { domainCheckSku } from './sku.js';

export const domainCheckJob = servedBy(domainCheckSku, {
  load: async () => (await import('./processor.js')).createDomainCheckProcessor as ProcessorFactory,
});
