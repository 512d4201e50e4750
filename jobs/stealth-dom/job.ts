/** stealth-dom as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { stealthDomSku } from './sku.js';

export const stealthDomJob = servedBy(stealthDomSku, {
  load: async () => (await import('./processor.js')).createStealthDomProcessor as ProcessorFactory,
});
