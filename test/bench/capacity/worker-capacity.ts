/**
 * Worker capacity by SKU (bench:capacity, docs/scaling.md): the real worker
 * role in a child process (`roles/main.ts`, ROLE=worker, QUEUE=bullmq on the
 * running Redis with a key prefix of its own) and this process as the caller
 * through the queue port, as the api role calls it. Per SKU: CAPACITY_CALLERS
 * callers (default JOB_CONCURRENCY, 4) keep jobs in flight for
 * CAPACITY_SECONDS, inputs validated by the SKU's own input schema; jobs/s
 * and the worker's CPU per job (from /proc) give jobs/s per process and per
 * core, and Redis's CPU per job the queue's cost. Upstreams (pages, images,
 * RDAP, DexScreener) are loopback servers, as in bench:utility; the worker
 * gets the test-only switches that let it reach them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { JOB_SKUS } from '../../../api/catalogue/sku-list.js';
import { createLogger } from '../../../core/logger.js';
import { createQueue } from '../../../core/ports.js';
import { skuJobName } from '../../../jobs/sku-processor.js';
import { testConfig, uniqueName } from '../../helpers/config.js';
import { dexFixture, DexScreenerServer } from '../../helpers/dexscreener-server.js';
import { rdapFixture, RdapServer, writeBootstrapFile } from '../../helpers/rdap-server.js';
import { startWebFixtures } from '../../helpers/web-fixtures.js';
import { INVOICE, renderTableDocument, TIMETABLE } from '../../helpers/web-fixtures-images.js';
import { cpuMsOf, pidsMatching } from '../cpu.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CORPUS = fileURLToPath(new URL('../utility-corpus/', import.meta.url));
const AI_FIXTURES = fileURLToPath(new URL('../../fixtures/ai/', import.meta.url));

export interface SkuCapacity {
  sku: string;
  jobs: number;
  seconds: number;
  jobsPerS: number;
  /** Worker process CPU ms per job (all its threads). */
  workerCpuMsPerJob: number;
  redisCpuMsPerJob: number;
  p50Ms: number;
  errors: number;
}

const files = (dir: string) =>
  readdirSync(join(CORPUS, dir)).map((f) => ({ name: f, text: readFileSync(join(CORPUS, dir, f), 'utf8') }));
const LANGUAGE: Record<string, string> = {
  java: 'java',
  sh: 'bash',
  py: 'python',
  html: 'html',
  ts: 'typescript',
  rs: 'rust',
  js: 'javascript',
  sql: 'sql',
  cpp: 'cpp',
  go: 'go',
  jsonc: 'jsonc',
  css: 'css',
};

/** Requests per SKU, on the bench corpus and the AI fixtures (each validated by the SKU's input schema). */
async function inputs(site: { url(p: string): string }): Promise<Record<string, unknown[]>> {
  const pages = files('html');
  const pii = files('pii');
  const code = files('code');
  const summaries = (
    JSON.parse(readFileSync(join(AI_FIXTURES, 'summaries.json'), 'utf8')) as { texts: { text: string }[] }
  ).texts.map((t) => t.text);
  const sentences = (
    JSON.parse(readFileSync(join(AI_FIXTURES, 'paraphrases-en.json'), 'utf8')) as { pairs: [string, string][] }
  ).pairs.flat();
  return {
    'airgap-scrub': pii.map((t) => ({ text: t.text })),
    'rag-shrink': pages.map((p) => ({ html: p.text })),
    'code-denoise': code.map((c) => ({ code: c.text, language: LANGUAGE[c.name.split('.').pop()!] ?? 'javascript' })),
    'stealth-dom': pages.map((p) => ({ url: site.url(`/capacity/${p.name}`) })),
    'image-ocr-shrink': ['invoice.png', 'timetable.png'].map((n) => ({ imageUrl: site.url(`/capacity/${n}`) })),
    'domain-check': ['google.com', 'wikipedia.org'].map((domain) => ({ domain })),
    'dex-price-summary': ['AERO', 'ETH'].map((query) => ({ query })),
    'embed-text': sentences.slice(0, 32).map((text) => ({ text })),
    'embed-multilingual': sentences.slice(0, 32).map((text) => ({ text })),
    summarize: summaries.map((text) => ({ text })),
    'x-sentiment': summaries.map((text) => ({ topic: text.slice(0, 500) })),
  };
}

async function loopbackUpstreams(dir: string) {
  const site = await startWebFixtures();
  for (const p of files('html')) {
    const body = Buffer.from(p.text);
    site.route(`/capacity/${p.name}`, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
      res.end(body);
    });
  }
  for (const [name, doc] of [
    ['invoice.png', INVOICE],
    ['timetable.png', TIMETABLE],
  ] as const) {
    const { image } = await renderTableDocument(doc, 'png');
    site.route(`/capacity/${name}`, (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length });
      res.end(image);
    });
  }
  const rdap = await RdapServer.start();
  rdap.domain('/com/v1/', 'google.com', rdapFixture('verisign-com-google.json'));
  rdap.domain('/rdap/', 'wikipedia.org', rdapFixture('pir-org-wikipedia.json'));
  const bootstrapFile = writeBootstrapFile(
    dir,
    [
      [['com'], [`${rdap.url}/com/v1/`]],
      [['org'], [`${rdap.url}/rdap/`]],
    ],
    '2026-01-01T00:00:00Z',
  );
  const dex = await DexScreenerServer.start();
  dex.searches.set('AERO', dexFixture('search-aero.json'));
  dex.searches.set('ETH', dexFixture('search-eth.json'));
  return { site, bootstrapFile, dexUrl: dex.url, close: () => Promise.all([site.close(), rdap.close(), dex.close()]) };
}

function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'roles/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out = (out + d.toString()).slice(-8000);
      if (/"msg":"ready: /.test(out)) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready:\n${out}`)));
  });
}

export async function measureWorker(options: {
  seconds: number;
  callers?: number;
  skus?: string[];
  log: (s: string) => void;
}): Promise<{ rows: SkuCapacity[]; concurrency: number }> {
  const config = testConfig({ QUEUE: 'bullmq', QUEUE_PREFIX: uniqueName('capacity') });
  const dir = await mkdtemp(join(tmpdir(), 'gw-capacity-'));
  const up = await loopbackUpstreams(dir);
  const worker = await startWorker({
    ROLE: 'worker',
    QUEUE: 'bullmq',
    QUEUE_PREFIX: config.QUEUE_PREFIX,
    REDIS_URL: config.REDIS_URL,
    STORE: 'duckdb',
    DATA_DIR: dir,
    HTTP_PORT: '0',
    LOG_LEVEL: 'info',
    // Test-only switches (need NODE_ENV=test) so the worker reaches the loopback upstreams; no guard or cache in the way.
    NODE_ENV: 'test',
    FETCH_ALLOW_LOOPBACK: 'true',
    RDAP_ALLOW_HTTP: 'true',
    RDAP_BOOTSTRAP_FILE: up.bootstrapFile,
    RDAP_BOOTSTRAP_REFRESH_MS: '0',
    DEXSCREENER_BASE_URL: up.dexUrl,
    DEX_PRICE_CACHE_TTL_MS: '0',
    DEXSCREENER_MAX_REQUESTS_PER_MIN: '1000000',
  });
  const queue = await createQueue(config, createLogger('silent'));
  const redisPids = pidsMatching(new RegExp(`redis-server .*:${new URL(config.REDIS_URL).port}`));
  const catalogue = new Map(JOB_SKUS.map((s) => [s.id, s]));
  const all = await inputs(up.site);
  const callers = options.callers ?? config.JOB_CONCURRENCY;
  const rows: SkuCapacity[] = [];
  try {
    for (const [sku, raw] of Object.entries(all)) {
      if (options.skus && !options.skus.includes(sku)) continue;
      const def = catalogue.get(sku);
      if (!def) throw new Error(`no SKU ${sku} in the catalogue`);
      const data = raw.map((r) => def.input.parse(r));
      let i = 0;
      const call = () => queue.run(skuJobName(sku), data[i++ % data.length], { deadlineMs: 60_000 });
      for (let w = 0; w < Math.max(2, data.length); w++) await call(); // warm: models, pools, JIT
      const latencies: number[] = [];
      let errors = 0;
      const cpu0 = { w: cpuMsOf(worker.pid) ?? 0, r: redisPids.reduce((a, p) => a + (cpuMsOf(p) ?? 0), 0) };
      const t0 = performance.now();
      const until = t0 + options.seconds * 1000;
      await Promise.all(
        Array.from({ length: callers }, async () => {
          while (performance.now() < until) {
            const s = performance.now();
            try {
              await call();
              latencies.push(performance.now() - s);
            } catch {
              errors++;
            }
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const jobs = latencies.length;
      const cpu1 = { w: cpuMsOf(worker.pid) ?? 0, r: redisPids.reduce((a, p) => a + (cpuMsOf(p) ?? 0), 0) };
      latencies.sort((a, b) => a - b);
      const row = {
        sku,
        jobs,
        seconds,
        jobsPerS: jobs / seconds,
        workerCpuMsPerJob: (cpu1.w - cpu0.w) / Math.max(jobs, 1),
        redisCpuMsPerJob: (cpu1.r - cpu0.r) / Math.max(jobs, 1),
        p50Ms: latencies[Math.floor(latencies.length / 2)] ?? NaN,
        errors,
      };
      rows.push(row);
      options.log(
        `worker ${sku}: ${row.jobsPerS.toFixed(1)} jobs/s, ${row.workerCpuMsPerJob.toFixed(1)} worker CPU ms/job, p50 ${row.p50Ms.toFixed(0)} ms${errors ? `, ${errors} errors` : ''}`,
      );
    }
  } finally {
    await queue.close();
    await new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.kill('SIGTERM');
    });
    await up.close();
    const redis = new Redis(config.REDIS_URL);
    for (let cursor = '0'; ;) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${config.QUEUE_PREFIX}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      if ((cursor = next) === '0') break;
    }
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  }
  return { rows, concurrency: callers };
}
