/**
 * Jobs off the API's event loop and cancelled at their deadline (issue 23), through the real process wiring
 * (roles/process.ts, ROLE=all, QUEUE=inprocess as `npm start` runs it): fixture job SKUs whose processors spin
 * the CPU in the worker's pool (core/threads/cpu-pool.ts), paid on the dev chain.
 *  - while 2 CPU jobs run, the API keeps answering `/health`;
 *  - a job that outlives its deadline: its caller gets 504 `job_timeout` and is not charged, the job is aborted
 *    (counted on jobs_cancelled_total) and the next job on its concurrency-1 lane is done long before the first
 *    one would have ended.
 * The caller-gone cancellation and the BullMQ path are in test/contract/queue.contract.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { RunningApi } from '../../api/role.js';
import { metrics } from '../../core/metrics.js';
import { inProcessQueueStats } from '../../core/queue/inprocess-queue.js';
import { inlineCpu } from '../../core/threads/cpu-pool.js';
import { defineJobSku, servedBy } from '../../jobs/job-sku.js';
import type { ProcessorFactory } from '../../jobs/sku-processor.js';
import type { RunningProcess } from '../../roles/process.js';
import { eventually, testLogger } from '../helpers/config.js';
import { spinTask } from '../helpers/cpu-tasks.js';
import { startPaidApi } from '../helpers/paid-api.js';
import { payingFetch } from '../helpers/x402-client.js';

const SpinInput = z.strictObject({
  ms: z.number().int().min(1).max(30_000),
  deadline_ms: z.number().int().min(100).max(60_000),
});
type SpinRequest = z.infer<typeof SpinInput>;
const SpinOutput = z.object({ success: z.boolean(), ms: z.number() });
type SpinResponse = z.infer<typeof SpinOutput>;

/** Jobs started per fixture SKU (the processor runs in this process). */
const started = new Map<string, number>();

/** A fixture job SKU spinning the CPU `ms` in the worker's pool, with the caller's deadline from its input. */
function spinJob(id: string, concurrency: number) {
  const sku = defineJobSku({
    id,
    method: 'POST',
    path: `/api/v1/${id}`,
    title: `Fixture ${id}`,
    categories: ['Data'],
    defaultPriceAtomic: '1000',
    free: false,
    input: SpinInput,
    output: SpinOutput,
    exampleInput: { ms: 1, deadline_ms: 1000 },
    example: { success: true, ms: 1 },
    description: 'Spins the CPU in the worker pool (a fixture SKU of the test suite).',
    avgLatencyMs: 5,
    latencyTargetMs: 50,
    deadlineMs: (input) => input.deadline_ms,
  });
  const create: ProcessorFactory<SpinRequest, SpinResponse> = async ({ threads = inlineCpu }) => ({
    handle: async (data, ctx) => {
      started.set(id, (started.get(id) ?? 0) + 1);
      await threads.run(spinTask, [data.ms], ctx.signal);
      return { success: true, ms: data.ms };
    },
  });
  return servedBy(sku, { load: async () => create as ProcessorFactory, concurrency: () => concurrency });
}

const logger = testLogger();
let dataDir: string;
let proc: RunningProcess;
let api: RunningApi;
let url: string;
let payer: PrivateKeyAccount;
let pay: typeof fetch;

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const balance = () => api.payments.settlement.devChain!.balanceOf(payer.address);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'job-cpu-pool-'));
  ({ proc, api, url, payer } = await startPaidApi(
    dataDir,
    { ROLE: 'all', MARKET_SOURCE: 'simulated', STORE: 'duckdb', DUCKDB_PATH: ':memory:', JOB_THREADS: '2' },
    logger,
    { jobSkus: [spinJob('fixture-cpu-pair', 2), spinJob('fixture-cpu-lane', 1)] },
  ));
  const chain = api.payments.settlement;
  pay = payingFetch(payer, { network: chain.network, asset: chain.asset }).fetch;
}, 180_000);

afterAll(async () => {
  await proc?.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('CPU-bound jobs in the worker pool, under the in-process queue', { timeout: 180_000 }, () => {
  it('the API keeps answering /health while 2 CPU jobs run', async () => {
    const before = started.get('fixture-cpu-pair') ?? 0;
    let done = false;
    const calls = Promise.all(
      [0, 1].map(() => pay(`${url}/api/v1/fixture-cpu-pair`, post({ ms: 6000, deadline_ms: 60_000 }))),
    ).finally(() => (done = true));
    // Both jobs are in the pool's threads.
    await eventually(
      async () => [started.get('fixture-cpu-pair') ?? 0, inProcessQueueStats(proc.ctx.queue!).running],
      ([n, running]) => n === before + 2 && running === 2,
      120_000,
      20,
    );
    let answered = 0;
    while (!done && answered < 5) {
      const res = await fetch(`${url}/health`);
      await res.arrayBuffer();
      if (!done) answered++;
    }
    // Had the jobs run on the event loop, no /health would have been answered before they ended.
    expect(answered).toBe(5);
    expect(done).toBe(false);
    for (const res of await calls) expect(res.status).toBe(200);
  });

  it('a job past its deadline: 504 job_timeout, not charged, aborted and counted; the next job runs at once', async () => {
    const id = 'fixture-cpu-lane';
    const cancelled = async () =>
      (await metrics.jobsCancelled.get()).values
        .filter((v) => v.labels.job === `sku.${id}` && v.labels.reason === 'deadline' && v.labels.stage === 'running')
        .reduce((a, v) => a + v.value, 0);
    const cancelledBefore = await cancelled();
    const startedBefore = started.get(id) ?? 0;
    const balanceBefore = await balance();
    const t0 = Date.now();
    // Would run 30 s; its caller waits 5 s. The next call waits behind it on the concurrency-1 lane.
    const slow = pay(`${url}/api/v1/${id}`, post({ ms: 30_000, deadline_ms: 5000 }));
    await eventually(
      async () => started.get(id) ?? 0,
      (n) => n === startedBefore + 1,
      60_000,
      20,
    );
    const next = pay(`${url}/api/v1/${id}`, post({ ms: 50, deadline_ms: 60_000 }));
    const timedOut = await slow;
    expect(timedOut.status).toBe(504);
    expect(await timedOut.json()).toMatchObject({ code: 'job_timeout' });
    expect(timedOut.headers.get('payment-response')).toBeNull();
    const nextRes = await next;
    expect(nextRes.status).toBe(200);
    // Well before the first job would have ended (30 s after it started).
    expect(Date.now() - t0).toBeLessThan(5000 + 10_000);
    expect(await cancelled()).toBe(cancelledBefore + 1);
    // Only the 200 was charged.
    expect(balanceBefore - (await balance())).toBe(1000n);
  });
});
