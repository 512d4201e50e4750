/**
 * Queue port benchmark: n round trips (enqueue, process, result back to the
 * caller) of a tiny job with CALLERS callers in flight and the same worker
 * concurrency everywhere, through
 *  - the in-process runner (no baseline: no raw client),
 *  - the BullMQ adapter,
 *  - bare BullMQ doing the same work (Queue.add + Worker + QueueEvents with
 *    job.waitUntilFinished, removeOnComplete/removeOnFail) as the baseline,
 *    measured in the same run, alternating with the adapter; the best of
 *    ROUNDS rounds of each counts.
 * Every BullMQ key under the run's own prefix is deleted afterwards.
 */
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Config } from '../../../core/config.js';
import { createLogger } from '../../../core/logger.js';
import { createBullMqQueue } from '../../../core/queue/bullmq-queue.js';
import { createInProcessQueue } from '../../../core/queue/inprocess-queue.js';
import type { JobQueue } from '../../../core/queue/queue.js';
import type { BenchRow } from '../report.js';

/** Callers with a job in flight at any time. */
const CALLERS = 50;
/** Worker concurrency, the same for every contestant. */
const WORKER_CONCURRENCY = 50;
const ROUNDS = 3;
const DEADLINE_MS = 60_000;

interface Payload {
  i: number;
}

/** Runs n calls with `callers` in flight; returns jobs/s. Throws if any call failed or returned a wrong result. */
async function drive(n: number, call: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  let failures = 0;
  let firstFailure: unknown;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(CALLERS, n) }, async () => {
      while (next < n) {
        const i = next++;
        try {
          const result = (await call(i)) as Payload | undefined;
          if (result?.i !== i) throw new Error(`job ${i} returned ${JSON.stringify(result)}`);
        } catch (err) {
          failures++;
          firstFailure ??= err;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  if (failures) throw new Error(`${failures} of ${n} round trips failed; first: ${String(firstFailure)}`);
  return n / seconds;
}

async function viaPort(queue: JobQueue, name: string, n: number): Promise<number> {
  const call = (i: number) => queue.run<Payload, Payload>(name, { i }, { deadlineMs: DEADLINE_MS });
  await drive(Math.min(500, n), call); // warm-up: connections, scripts, JIT
  return drive(n, call);
}

interface Bare {
  run(n: number): Promise<number>;
  close(): Promise<void>;
}

async function bareBullMq(config: Config, prefix: string): Promise<Bare> {
  const name = 'bare';
  let missingKeyRaces = 0;
  const queue = new Queue<Payload, Payload>(name, { connection: { url: config.REDIS_URL }, prefix });
  const events = new QueueEvents(name, { connection: { url: config.REDIS_URL }, prefix });
  const worker = new Worker<Payload, Payload>(name, async (job) => ({ i: job.data.i }), {
    connection: { url: config.REDIS_URL, maxRetriesPerRequest: null },
    prefix,
    concurrency: WORKER_CONCURRENCY,
  });
  const onError = (err: Error) => console.error(`bare bullmq: ${err.message}`);
  queue.on('error', onError);
  events.on('error', onError);
  worker.on('error', onError);
  queue.setMaxListeners(CALLERS * 2); // waitUntilFinished listens to the queue's 'closing'
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), worker.waitUntilReady()]);
  const call = async (i: number) => {
    const job = await queue.add(name, { i }, { removeOnComplete: true, removeOnFail: true });
    try {
      return await job.waitUntilFinished(events, DEADLINE_MS);
    } catch (err) {
      // Known race of waitUntilFinished with removeOnComplete: the job finished
      // and was removed before its isFinished check ran. The round trip happened.
      if (err instanceof Error && err.message.startsWith('Missing key for job')) {
        missingKeyRaces++;
        return { i };
      }
      throw err;
    }
  };
  await drive(500, call).catch(() => undefined); // warm-up
  return {
    run: (n) => drive(n, call),
    async close() {
      if (missingKeyRaces)
        console.log(
          `bare BullMQ: ${missingKeyRaces} waitUntilFinished calls lost the race with removeOnComplete (counted as done)`,
        );
      await worker.close();
      await events.close();
      await queue.close();
    },
  };
}

export async function benchQueue(config: Config, n: number): Promise<BenchRow[]> {
  const logger = createLogger('silent');
  const workload = `${n} round trips (add+process+result), ${CALLERS} callers in flight, worker concurrency ${WORKER_CONCURRENCY}`;
  const rows: BenchRow[] = [];

  const inprocess = await createInProcessQueue({
    concurrency: WORKER_CONCURRENCY,
    maxAttempts: config.JOB_MAX_ATTEMPTS,
    logger,
  });
  await inprocess.process('bench', async (data: Payload) => ({ i: data.i }));
  rows.push({
    port: 'queue',
    adapter: 'inprocess',
    workload,
    throughput: await viaPort(inprocess, 'bench', n),
    unit: 'jobs/s',
  });
  await inprocess.close();

  const prefix = `bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const bullmq = await createBullMqQueue({
    redisUrl: config.REDIS_URL,
    prefix,
    concurrency: WORKER_CONCURRENCY,
    lockMs: config.JOB_LOCK_MS,
    maxAttempts: config.JOB_MAX_ATTEMPTS,
    connectTimeoutMs: config.STARTUP_TIMEOUT_MS,
    logger,
  });
  let bare: Bare | undefined;
  try {
    await bullmq.process('bench', async (data: Payload) => ({ i: data.i }));
    bare = await bareBullMq(config, prefix);
    let adapterBest = 0;
    let bareBest = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const bareRound = await bare.run(n);
      const adapterRound = await viaPort(bullmq, 'bench', n);
      if (process.env.BENCH_VERBOSE)
        console.log(
          `queue round ${round + 1}: bare ${Math.round(bareRound)} jobs/s, adapter ${Math.round(adapterRound)} jobs/s`,
        );
      bareBest = Math.max(bareBest, bareRound);
      adapterBest = Math.max(adapterBest, adapterRound);
    }
    rows.push({
      port: 'queue',
      adapter: 'bullmq',
      workload,
      throughput: adapterBest,
      unit: 'jobs/s',
      baseline: bareBest,
      baselineName: 'bare BullMQ add + waitUntilFinished',
    });
  } finally {
    await bare?.close();
    await bullmq.close();
    const redis = new Redis(config.REDIS_URL);
    redis.on('error', () => undefined);
    try {
      let cursor = '0';
      do {
        const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = nextCursor;
        if (keys.length) await redis.unlink(...keys);
      } while (cursor !== '0');
    } finally {
      await redis.quit();
    }
  }
  return rows;
}
