/**
 * The worker role: job processors (utility and AI SKUs) behind the queue port.
 * It serves the processors of the job SKUs it is given (the catalogue's list,
 * handed over by the process wiring in roles/): one per SKU, built once.
 *
 * One CPU pool (core/threads/cpu-pool.ts, JOB_THREADS threads: one per core
 * by default, one fewer under ROLE=all, where the API shares the cores) does
 * every processor's CPU work and the local AI provider's
 * (core/threads/threaded-local-ai.ts): jobs compute off the event loop, which
 * under QUEUE=inprocess is the API's. Its threads start once every processor
 * has registered its warm-up; jobs are taken once they are warm; they stop
 * after the processors closed.
 */
import { createAiProvider } from '../core/ai/create-ai-provider.js';
import { loadPairs } from '../core/markets/pairs.js';
import type { RoleContext, RunningRole } from '../core/role.js';
import { need } from '../core/role.js';
import type { AiProvider } from '../core/ai/ai-provider.js';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import { createCpuPool, type CpuPool } from '../core/threads/cpu-pool.js';
import type { JobSku } from './job-sku.js';
import { skuJobName, type SkuProcessor } from './sku-processor.js';
import { SYSTEM_PING, systemPing } from './system-ping.js';

export async function startWorker(ctx: RoleContext, jobSkus: readonly JobSku[]): Promise<RunningRole> {
  const queue = need(ctx.queue, 'queue', 'worker');
  const { config, logger } = ctx;
  await queue.process(SYSTEM_PING, systemPing(ctx.instanceId), { concurrency: 2 });
  const pairs = loadPairs(config.PAIRS_FILE);
  const built: { id: string; processor: SkuProcessor; concurrency: number }[] = [];
  // One AI provider (AI_PROVIDER) for every processor: the AI SKUs and airgap-scrub's strict mode.
  const served = jobSkus.flatMap((sku) => (sku.processor ? [{ id: sku.id, registered: sku.processor }] : []));
  const threads = createCpuPool({
    threads: config.JOB_THREADS,
    sharesCoresWithApi: config.ROLE === 'all',
    logger: logger.child({ component: 'cpu-pool' }),
  });
  let ai: AiProvider | undefined;
  /** Releases the processors, the AI provider and the threads; `force` when start-up was interrupted. */
  const release = async (force: boolean) => {
    for (const { id, processor } of built)
      await processor
        .close?.()
        .catch((err: unknown) => logger.warn({ sku: id, err }, 'worker: processor close failed'));
    await ai?.close?.().catch((err: unknown) => logger.warn({ err }, 'worker: AI provider close failed'));
    await threads.close({ force }).catch((err: unknown) => logger.warn({ err }, 'worker: CPU pool close failed'));
  };
  try {
    ai = served.length ? await aiProvider(config, logger, threads) : undefined;
    for (const { id, registered } of served) {
      ctx.abort?.throwIfAborted();
      const t0 = performance.now();
      const create = await registered.load();
      const processor = await create({
        config,
        logger: logger.child({ sku: id }),
        pairs,
        ...(ctx.store ? { store: ctx.store } : {}),
        ...(ai ? { ai } : {}),
        threads,
      });
      built.push({ id, processor, concurrency: registered.concurrency?.(config) ?? config.JOB_CONCURRENCY });
      logger.debug({ sku: id, ms: Math.round(performance.now() - t0) }, 'worker: processor built');
    }
    if (served.length) {
      // Threads start now and run every warm-up the processors registered; no job is taken before they are warm.
      // A shutdown signal meanwhile ends the warm-up at once (a loaded machine takes seconds per thread).
      const t0 = performance.now();
      await threads.ready(ctx.abort);
      logger.info({ threads: threads.threads, ms: Math.round(performance.now() - t0) }, 'worker: CPU pool warm');
    }
  } catch (err) {
    await release(true);
    throw err;
  }
  for (const { id, processor, concurrency } of built)
    await queue.process(skuJobName(id), processor.handle, { concurrency });
  return {
    name: 'worker',
    // Closing the queue port (by the process, after every role stopped) lets in-flight jobs finish;
    // the processors' own resources are released after that.
    stop: async () => {},
    close: () => release(false),
  };
}

/** The configured AI provider; the local one runs in the CPU pool's threads (its work is CPU). */
async function aiProvider(config: Config, logger: Logger, threads: CpuPool): Promise<AiProvider> {
  if (config.AI_PROVIDER !== 'local') return createAiProvider(config, logger.child({ component: 'ai' }));
  const { threadedLocalAi } = await import('../core/threads/threaded-local-ai.js');
  return threadedLocalAi(threads, config.AI_LOCAL_VOCABULARY);
}
