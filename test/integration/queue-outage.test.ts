/**
 * Issue 23, item 4: queue outages answered at once. The real process wiring
 * (startProcess, ROLE=all: the api role and the worker role on BullMQ, x402
 * on the dev chain) on a PRIVATE redis-server this test starts on a free port
 * (test/helpers/private-redis.ts; the shared Redis is never stopped), with a
 * fixture job SKU whose processor sleeps for as long as its input says:
 *  - ready: /readyz's `jobs` family is ready only with a fresh worker heartbeat;
 *  - Redis stopped while a paid job is in flight: the caller gets 503
 *    `queue_unavailable` within seconds (the deadline is 60 s), and nothing is
 *    settled (the payer's balance does not move);
 *  - while Redis is away: /readyz reports `jobs` not ready (queue_unavailable),
 *    a job route answers 503 `queue_unavailable` before any challenge, /health
 *    is `degraded` (200), the telemetry family stays ready;
 *  - Redis started again (empty, as a lost Redis comes back): readiness
 *    returns (worker heartbeat), and the first paid job after it succeeds and
 *    is settled for exactly its price.
 * The times from stop to 503 and from start to the first 200 are printed;
 * the assertions are generous ceilings (a loaded CI machine), not figures.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PrivateKeyAccount } from 'viem/accounts';
import { JOB_SKUS } from '../../api/catalogue/sku-list.js';
import type { RunningApi } from '../../api/role.js';
import type { ReadinessReport } from '../../core/readiness.js';
import { defineJobSku, servedBy } from '../../jobs/job-sku.js';
import type { ProcessorFactory } from '../../jobs/sku-processor.js';
import type { RunningProcess } from '../../roles/process.js';
import { eventually, testLogger, uniqueName } from '../helpers/config.js';
import { startPaidApi } from '../helpers/paid-api.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
import { payingFetch } from '../helpers/x402-client.js';

// ------------------------------------------------- a fixture job SKU that takes as long as asked

const SleepInput = z.strictObject({ ms: z.number().int().min(0).max(30_000) });
const SleepOutput = z.object({ success: z.boolean(), slept_ms: z.number() });
const sleepSku = defineJobSku({
  id: 'fixture-sleep',
  method: 'POST',
  path: '/api/v1/fixture-sleep',
  title: 'Fixture sleep',
  categories: ['Data'],
  defaultPriceAtomic: '1500',
  free: false,
  input: SleepInput,
  output: SleepOutput,
  exampleInput: { ms: 1 },
  example: { success: true, slept_ms: 1 },
  description: 'Sleeps for the given milliseconds (a fixture SKU of the test suite).',
  avgLatencyMs: 5,
  latencyTargetMs: 50,
  deadlineMs: 60_000,
});
const createSleepProcessor: ProcessorFactory<z.infer<typeof SleepInput>, z.infer<typeof SleepOutput>> = async () => ({
  handle: async ({ ms }) => {
    await new Promise((r) => setTimeout(r, ms));
    return { success: true, slept_ms: ms };
  },
});
const sleepJob = servedBy(sleepSku, { load: async () => createSleepProcessor as ProcessorFactory });

// ------------------------------------------------- the gateway on a private Redis

let redis: PrivateRedis;
let dataDir: string;
let proc: RunningProcess;
let api: RunningApi;
let url: string;
let payer: PrivateKeyAccount;
const PRICE = 1500n;

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const json = async (path: string) => {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const readyz = async () =>
  (await json('/readyz')) as { status: number; body: ReadinessReport & Record<string, unknown> };
const balance = () => api.payments.settlement.devChain!.balanceOf(payer.address);
const pay = () => {
  const chain = api.payments.settlement;
  return payingFetch(payer, { network: chain.network, asset: chain.asset });
};

beforeAll(async () => {
  redis = await startPrivateRedis();
  dataDir = await mkdtemp(join(tmpdir(), 'queue-outage-'));
  ({ proc, api, url, payer } = await startPaidApi(
    dataDir,
    {
      ROLE: 'all',
      QUEUE: 'bullmq',
      REDIS_URL: redis.url,
      QUEUE_PREFIX: uniqueName('outage'),
      STORE: 'duckdb',
      DUCKDB_PATH: ':memory:',
      MARKET_SOURCE: 'simulated',
      READINESS_REFRESH_MS: '250',
    },
    testLogger(),
    { jobSkus: [...JOB_SKUS, sleepJob] },
  ));
}, 240_000);

afterAll(async () => {
  await redis?.start().catch(() => undefined); // a drain with Redis up is quick
  await proc?.shutdown('test done');
  await redis?.dispose();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 120_000);

describe('Redis stopped mid-job and started again (private redis-server, BullMQ api + worker)', () => {
  it('is ready with a worker heartbeat, and a paid job succeeds', async () => {
    const ready = await eventually(readyz, (r) => r.body.families?.jobs?.ready === true, 60_000, 100);
    expect(ready.status).toBe(200);
    const health = await json('/health');
    expect((health.body.components as Record<string, { status: string }>).workers).toMatchObject({ status: 'ok' });
    const before = await balance();
    const res = await pay().fetch(`${url}/api/v1/fixture-sleep`, post({ ms: 10 }));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(before - (await balance())).toBe(PRICE);
  }, 120_000);

  it('a paid job in flight when Redis stops gets 503 queue_unavailable at once and is not charged', async () => {
    const before = await balance();
    const { fetch: paying, sent } = pay();
    const t0 = Date.now();
    const call = paying(`${url}/api/v1/fixture-sleep`, post({ ms: 20_000 }));
    // The job is in flight once the payment was sent and the worker holds it.
    await eventually(
      async () => sent.length,
      (n) => n === 1,
      30_000,
      20,
    );
    await new Promise((r) => setTimeout(r, 500));
    const stoppedAt = Date.now();
    await redis.stop();
    const res = await call;
    const answeredMs = Date.now() - stoppedAt;
    const body = (await res.json()) as Record<string, unknown>;
    console.log(`[queue-outage] Redis stop -> 503: ${answeredMs} ms (call started ${stoppedAt - t0} ms before)`);
    expect(res.status, JSON.stringify(body)).toBe(503);
    expect(body).toMatchObject({ code: 'queue_unavailable' });
    expect(answeredMs).toBeLessThan(5000); // the deadline is 60 s: a ceiling, not a figure
    expect(res.headers.get('payment-response')).toBeNull();
    expect(await balance()).toBe(before);
  }, 120_000);

  it('while Redis is away: jobs not ready, a job route 503 before any challenge, health degraded', async () => {
    const notReady = await eventually(readyz, (r) => r.body.families?.jobs?.ready === false, 30_000, 100);
    expect(notReady.status).toBe(200); // telemetry (the store) still serves
    expect(notReady.body.families.jobs).toMatchObject({ ready: false, code: 'queue_unavailable' });
    expect(notReady.body.families.telemetry).toMatchObject({ ready: true });
    expect((await json('/readyz?family=jobs')).status).toBe(503);

    const t0 = Date.now();
    const unpaid = await fetch(`${url}/api/v1/fixture-sleep`, post({ ms: 1 }));
    expect(unpaid.status).toBe(503);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(unpaid.headers.get('payment-required')).toBeNull();
    expect(await unpaid.json()).toMatchObject({ code: 'queue_unavailable', family: 'jobs' });

    const health = await json('/health');
    expect(health.status, JSON.stringify(health.body)).toBe(200);
    expect(health.body.status).toBe('degraded');
    expect((await json('/livez')).status).toBe(200);
  }, 60_000);

  it('after Redis starts again, readiness returns and the first paid job succeeds and is settled', async () => {
    await redis.start();
    const startedAt = Date.now();
    await eventually(readyz, (r) => r.body.families?.jobs?.ready === true, 30_000, 50);
    const readyMs = Date.now() - startedAt;
    const before = await balance();
    const res = await pay().fetch(`${url}/api/v1/fixture-sleep`, post({ ms: 10 }));
    const body = await res.json();
    const firstOkMs = Date.now() - startedAt;
    console.log(`[queue-outage] Redis start -> jobs ready: ${readyMs} ms; -> first paid job 200: ${firstOkMs} ms`);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({ success: true, slept_ms: 10 });
    expect(before - (await balance())).toBe(PRICE);
    expect(firstOkMs).toBeLessThan(20_000); // before the fix the worker took no job for 12-16 s
  }, 120_000);
});
