/** The worker role: job processors (utility and AI SKUs) behind the queue port. */
import { createAiProvider } from '../core/ai/create-ai-provider.js';
import { loadPairs } from '../core/markets/pairs.js';
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import { SKU_PROCESSORS } from './registry.js';
import { skuJobName, type SkuProcessor } from './sku-processor.js';
import { SYSTEM_PING, systemPing } from './system-ping.js';

export async function startWorker(ctx: RoleContext): Promise<RunningRole> {
  const queue = need(ctx.queue, 'queue', 'worker');
  const { config, logger } = ctx;
  await queue.process(SYSTEM_PING, systemPing(ctx.instanceId), { concurrency: 2 });
  const pairs = loadPairs(config.PAIRS_FILE);
  const built: { id: string; processor: SkuProcessor }[] = [];
  // One AI provider (AI_PROVIDER) for every processor: the AI SKUs and airgap-scrub's strict mode.
  const ai = Object.keys(SKU_PROCESSORS).length ? await createAiProvider(config, logger.child({ component: 'ai' })) : undefined;
  for (const [id, registered] of Object.entries(SKU_PROCESSORS)) {
    const t0 = performance.now();
    const create = await registered.load();
    const processor = await create({ config, logger: logger.child({ sku: id }), pairs, ...(ctx.store ? { store: ctx.store } : {}), ...(ai ? { ai } : {}) });
    built.push({ id, processor });
    await queue.process(skuJobName(id), processor.handle, { concurrency: registered.concurrency?.(config) ?? config.JOB_CONCURRENCY });
    logger.debug({ sku: id, ms: Math.round(performance.now() - t0) }, 'worker: processor ready');
  }
  return {
    name: 'worker',
    // Closing the queue port (by the process, after every role stopped) lets in-flight jobs finish;
    // the processors' own resources are released after that.
    stop: async () => {},
    close: async () => {
      for (const { id, processor } of built) await processor.close?.().catch((err: unknown) => logger.warn({ sku: id, err }, 'worker: processor close failed'));
      await ai?.close?.().catch((err: unknown) => logger.warn({ err }, 'worker: AI provider close failed'));
    },
  };
}
