/**
 * Phase L of `npm run bench:utility` (issue 23, item 2): does the API keep answering while the heaviest jobs run?
 * The app as `npm start` runs it (ROLE=all, QUEUE=inprocess: the worker's jobs share the API's process; x402 on
 * the dev chain with settlement excluded, the simulated market on DuckDB in memory). Sequential requests
 * alternate `GET /health` and a paid telemetry read (each with its own signature, signed before the phase):
 * first with no job running (the baseline), then while BENCH_LOOP_JOBS (4) maximum-size airgap-scrub jobs
 * (200,000 characters of the PII corpus each, paid) run at once. Prints p50/p99 of both requests in both
 * phases and their ratio, the jobs' statuses and times (a job past its 10 s deadline answers 504 and is
 * cancelled: jobs_cancelled_total), and the CPU pool's size. Before issue 23 the jobs ran on the API's loop:
 * a small request waited for them (4.8 s instead of 0.38 s in the issue).
 *
 * Knobs: BENCH_LOOP_JOBS (4), BENCH_LOOP_SAMPLES (40: baseline requests of each kind; the loaded phase takes
 * as many as fit while the jobs run, at most 4x that).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { metrics } from '../../core/metrics.js';
import { poolSize } from '../../core/threads/cpu-pool.js';
import { MAX_TEXT } from '../../jobs/text-size-limits.js';
import { testConfig } from '../helpers/config.js';
import { benchLogger, envNum, PAID_API_ROLE, startPaidApi } from './bench-app.js';
import { challengeOf, payerClient, quantile, signPayment, type RequestVariant } from './x402-load.js';

const PII_CORPUS = fileURLToPath(new URL('./utility-corpus/pii/', import.meta.url));
/** Paid telemetry reads tried in turn: the first one the simulated market answers 200 is measured. */
const TELEMETRY_READS: RequestVariant[] = [
  { method: 'GET', path: '/api/v1/crypto/execution-latency' },
  { method: 'GET', path: '/api/v1/crypto/dislocations?pair=ETH/USD' },
  { method: 'GET', path: '/api/v1/crypto/spread-candles?pair=ETH/USD' },
];

interface Timed {
  status: number;
  ms: number;
}

async function timedFetch(url: string, v: RequestVariant, payment?: string): Promise<Timed> {
  const headers: Record<string, string> = {};
  if (v.body !== undefined) headers['content-type'] = 'application/json';
  if (payment) headers['payment-signature'] = payment;
  const t0 = performance.now();
  const res = await fetch(`${url}${v.path}`, { method: v.method, headers, ...(v.body ? { body: v.body } : {}) });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t0 };
}

const q = (xs: Timed[], p: number) =>
  quantile(
    xs.map((x) => x.ms),
    p,
  );
const cell = (xs: Timed[]) => (xs.length ? `${q(xs, 0.5).toFixed(1)} / ${q(xs, 0.99).toFixed(1)} (${xs.length})` : '-');
const ratio = (a: Timed[], b: Timed[], p: number) => (a.length && b.length ? (q(b, p) / q(a, p)).toFixed(2) : '-');

export async function printEventLoopUnderJobs(): Promise<void> {
  const jobs = envNum('BENCH_LOOP_JOBS', 4);
  const samples = envNum('BENCH_LOOP_SAMPLES', 40);
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-loop-'));
  const config = testConfig({
    ...PAID_API_ROLE,
    ROLE: 'all',
    NODE_ENV: 'test',
    QUEUE: 'inprocess',
    STORE: 'duckdb',
    DUCKDB_PATH: ':memory:',
    BUS: 'memory',
    MARKET_SOURCE: 'simulated',
    DATA_DIR: dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    AI_LOCAL_VOCABULARY: '1000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  });
  console.log(
    `\nL. The API while ${jobs} maximum-size airgap-scrub jobs run (ROLE=all, QUEUE=inprocess as \`npm start\`; CPU pool of ${poolSize(config.JOB_THREADS, true)} threads)`,
  );
  const app = await startPaidApi(config, benchLogger(join(dataDir, 'app.log')));
  try {
    const { url } = app;
    const client = payerClient(app.settlement.devChain!.payerKey);
    const sign = async (v: RequestVariant, n: number) => {
      const challenge = await challengeOf(url, v);
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(await signPayment(client, challenge));
      return out;
    };

    // The simulated market needs a few seconds before the telemetry has something to answer.
    let read: RequestVariant | undefined;
    for (const t0 = Date.now(); !read && Date.now() - t0 < 120_000;) {
      for (const v of TELEMETRY_READS) {
        const [header] = await sign(v, 1);
        if ((await timedFetch(url, v, header)).status === 200) {
          read = v;
          break;
        }
      }
      if (!read) await new Promise((r) => setTimeout(r, 1000));
    }
    if (!read) throw new Error('no paid telemetry read answered 200 within 120 s');

    const texts = await Promise.all(
      (await readdir(PII_CORPUS)).filter((f) => f.endsWith('.txt')).map((f) => readFile(join(PII_CORPUS, f), 'utf8')),
    );
    let text = '';
    while (text.length < MAX_TEXT) text += texts.join('\n\n') + '\n\n';
    text = text.slice(0, MAX_TEXT);
    const scrub = (t: string): RequestVariant => ({
      method: 'POST',
      path: '/api/v1/airgap-scrub',
      body: JSON.stringify({ text: t }),
    });
    // Warm-up: a small job (the pool's threads, the scrub's JIT) and a few reads.
    const [warmJob] = await sign(scrub(texts[0]!), 1);
    await timedFetch(url, scrub(texts[0]!), warmJob);

    // Signatures are signed before each phase: signing is CPU on this (the API's) event loop.
    const sampleWhile = async (keepGoing: () => boolean, headers: string[]) => {
      const health: Timed[] = [];
      const paid: Timed[] = [];
      for (let i = 0; i < headers.length && keepGoing(); i++) {
        health.push(await timedFetch(url, { method: 'GET', path: '/health' }));
        paid.push(await timedFetch(url, read, headers[i]));
      }
      return { health, paid };
    };

    const baseline = await sampleWhile(() => true, await sign(read, samples));
    const loadedHeaders = await sign(read, samples * 4);
    const jobHeaders = await sign(scrub(text), jobs);
    const cancelledBefore = (await metrics.jobsCancelled.get()).values.reduce((a, v) => a + v.value, 0);
    let running = jobs;
    const t0 = performance.now();
    const jobRuns = jobHeaders.map((h) =>
      timedFetch(url, scrub(text), h).finally(() => {
        running--;
      }),
    );
    const loaded = await sampleWhile(() => running > 0, loadedHeaders);
    const results = await Promise.all(jobRuns);
    const wall = performance.now() - t0;
    const cancelled = (await metrics.jobsCancelled.get()).values.reduce((a, v) => a + v.value, 0) - cancelledBefore;

    console.log('| request | no job: p50 / p99 ms (n) | during the jobs: p50 / p99 ms (n) | ratio p50 | ratio p99 |');
    console.log('|---|---|---|---|---|');
    for (const [name, a, b] of [
      ['GET /health', baseline.health, loaded.health],
      [`${read.method} ${read.path} (paid)`, baseline.paid, loaded.paid],
    ] as const) {
      console.log(`| ${name} | ${cell(a)} | ${cell(b)} | ${ratio(a, b, 0.5)} | ${ratio(a, b, 0.99)} |`);
    }
    const statuses = [...loaded.health, ...loaded.paid, ...baseline.health, ...baseline.paid]
      .map((x) => x.status)
      .filter((s) => s !== 200);
    console.log(
      `Jobs (${(text.length / 1000).toFixed(0)}k characters each): ${results.map((r) => `${r.status} in ${(r.ms / 1000).toFixed(1)} s`).join(', ')}; ` +
        `all answered within ${(wall / 1000).toFixed(1)} s; jobs_cancelled_total +${cancelled}.` +
        (statuses.length ? ` Non-200 reads: ${statuses.join(', ')}.` : ''),
    );
  } finally {
    await app.proc.shutdown('bench done');
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
