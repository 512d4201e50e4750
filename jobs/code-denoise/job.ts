/** code-denoise as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { codeDenoiseSku } from './sku.js';

export const codeDenoiseJob = servedBy(codeDenoiseSku, {
  load: async () => (await import('./processor.js')).createCodeDenoiseProcessor as ProcessorFactory,
});
