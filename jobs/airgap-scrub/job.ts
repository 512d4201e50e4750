/** airgap-scrub as the worker serves it: its contract (sku.ts) run by its processor, which only the worker role loads. */
import { servedBy } from '../job-sku.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { airgapScrubSku } from './sku.js';

export const airgapScrubJob = servedBy(airgapScrubSku, {
  load: async () => (await import('./processor.js')).createAirgapScrubProcessor as ProcessorFactory,
});
