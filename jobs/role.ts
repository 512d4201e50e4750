/**
 * The worker role: job processors (utility and AI SKUs) behind the queue port.
 * It serves the processors of the job SKUs it is given (the catalogue's list,
 * handed over by the process wiring in roles/): one per SKU, built once.
 */
import { createAiProvider } from '../core/ai/create-ai-provider.js';
import { loadPairs } from '../core/markets/pairs.js';
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import type { JobSku } from './job-sku.js';
import { skuJobName, type SkuProcessor } from './sku-processor.js';
import { SYSTEM_PING, systemPing } from './system-ping.js';

export async function startWorker(ctx: RoleContext, jobSkus: readonly JobSku[]): Promise<RunningRole> {
  const queue = need(ctx.queue, 'queue', 'worker');
  const { config, logger } = ctx;
  await queue.process(SYSTEM_PING, systemPing(ctx.instanceId), { concurrency: 2 });
  const pairs = loadPairs(config.PAIRS_FILE);
  const built: { id: string; processor: SkuProcessor }[] = [];
  // One AI provider (AI_PROVIDER) for every processor: the AI SKUs and airgap-scrub's strict mode.
  const served = jobSkus.flatMap((sku) => (sku.processor ? [{ id: sku.id, registered: sku.processor }] : []));
  const ai = served.length ? await createAiProvider(config, logger.child({ component: 'ai' })) : undefined;
  for (const { id, registered } of served) {
    const t0 = performance.now();
    const create = await registered.load();
    const processor = await create({
      config,
      logger: logger.child({ sku: id }),
      pairs,
      ...(ctx.store ? { store: ctx.store } : {}),
      ...(ai ? { ai } : {}),
    });
    built.push({ id, processor });
    await queue.process(skuJobName(id), processor.handle, {
      concurrency: registered.concurrency?.(config) ?? config.JOB_CONCURRENCY,
    });
    logger.debug({ sku: id, ms: Math.round(performance.now() - t0) }, 'worker: processor ready');
  }
  return {
    name: 'worker',
    // Closing the queue port (by the process, after every role stopped) lets in-flight jobs finish;
    // the processors' own resources are released after that.
    stop: async () => {},
    close: async () => {
      for (const { id, processor } of built)
        await processor
          .close?.()
          .catch((err: unknown) => logger.warn({ sku: id, err }, 'worker: processor close failed'));
      await ai?.close?.().catch((err: unknown) => logger.warn({ err }, 'worker: AI provider close failed'));
    },
  };
}
