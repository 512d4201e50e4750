/**
 * airgap-scrub's zero data retention, end to end on the real engines: the
 * real BullMQ adapter on the running Redis (a key prefix of its own), a
 * worker running the real processor, and the API's own Koa app (request
 * context, problem errors, the SKU router with its validation) in front of
 * it; the x402 gate is replaced by a pass-through (it never reads the body).
 * Every log line of all of them goes to one pino logger at debug level that
 * writes into a buffer.
 *
 * Each run makes fresh secrets (a valid SSN, a Luhn-valid card, an email, a
 * phone number, a marker word), so a finding cannot come from another run.
 * After successful calls (queue and HTTP) and failing ones (bad input to the
 * processor, strict mode without an AI provider, input the router refuses,
 * a body that is not JSON), it SCANs every key under the prefix (strings,
 * hashes, lists, sets, zsets, streams), the SLOWLOG and the captured logs
 * for every secret, and checks that no job key and no completed/failed event
 * is left. Finally it looks at Redis' own persistence (AOF, RDB) on disk.
 */
import { randomInt } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createApp } from '../../api/app.js';
import type { Catalogue } from '../../api/sku/sku.js';
import { jobSkuEntry } from '../../api/catalogue/job-sku-route.js';
import { airgapScrubJob } from '../../jobs/airgap-scrub/job.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createStore } from '../../core/ports.js';
import { createBullMqQueue } from '../../core/queue/bullmq-queue.js';
import { JobError, type JobQueue } from '../../core/queue/queue.js';
import type { Store } from '../../core/store/store.js';
import { HealthRegistry } from '../../core/health.js';
import { createAirgapScrubProcessor } from '../../jobs/airgap-scrub/processor.js';
import { skuJobName } from '../../jobs/sku-processor.js';
import { eventually, testConfig, uniqueName } from '../helpers/config.js';
import { bufferLogger } from '../helpers/text-skus.js';

const PREFIX = uniqueName('airgap');
const config = testConfig({ QUEUE: 'bullmq', QUEUE_PREFIX: PREFIX, STORE: 'duckdb', DUCKDB_PATH: ':memory:' });
const JOB = skuJobName('airgap-scrub');
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** Generous on a busy machine: a job's keys go once BullMQ removes them; polling ends as soon as they are gone. */
const RETENTION_WAIT_MS = 60_000;
const DEADLINE_MS = 30_000;

// ------------------------------------------------------------------ fresh secrets

function luhnComplete(body: string): string {
  for (let d = 0; d < 10; d++) {
    const n = body + d;
    let sum = 0;
    for (let i = 0; i < n.length; i++) {
      let x = Number(n[n.length - 1 - i]);
      if (i % 2 === 1) x = x * 2 > 9 ? x * 2 - 9 : x * 2;
      sum += x;
    }
    if (sum % 10 === 0) return n;
  }
  throw new Error('unreachable');
}
const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');
const ssn = `${randomInt(100, 666)}-${randomInt(10, 100)}-${randomInt(1000, 10000)}`;
const card = luhnComplete(`4${digits(14)}`);
const cardSpaced = card.replace(/(\d{4})(?=\d)/g, '$1 ');
const emailLocal = `ret.${digits(8)}`;
const email = `${emailLocal}@example.org`;
const phone = `(415) 555-${randomInt(1000, 10000)}`;
const marker = `rtnmarker${digits(10)}`;
const TEXT = `Intake note ${marker}: SSN ${ssn}, card ${cardSpaced}, email ${email}, phone ${phone}, lives at 742 Evergreen Terrace, Springfield, IL 62704.`;
/** Every form a secret could be stored in: as written, digits only, JSON-escaped pieces. */
const NEEDLES = [
  marker,
  ssn,
  ssn.replace(/-/g, ''),
  card,
  cardSpaced,
  emailLocal,
  phone,
  phone.replace(/\D/g, '').slice(-7),
];

// ------------------------------------------------------------------ harness

let admin: Redis;
let queue: JobQueue;
let store: Store;
let server: Server;
let base: string;
const { logger, lines } = bufferLogger('debug');

async function dumpKeys(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await admin.type(key);
      let content: unknown;
      switch (type) {
        case 'string':
          content = await admin.get(key);
          break;
        case 'hash':
          content = await admin.hgetall(key);
          break;
        case 'list':
          content = await admin.lrange(key, 0, -1);
          break;
        case 'set':
          content = await admin.smembers(key);
          break;
        case 'zset':
          content = await admin.zrange(key, 0, -1, 'WITHSCORES');
          break;
        case 'stream':
          content = await admin.xrange(key, '-', '+');
          break;
        case 'none':
          continue;
        default:
          content = `<unreadable ${type}>`;
      }
      out.set(key, `${type} ${JSON.stringify(content)}`);
    }
  } while (cursor !== '0');
  return out;
}

/** What of the text or a finished job is still in Redis (under the prefix, or in the SLOWLOG). */
async function retained(): Promise<string[]> {
  const found: string[] = [];
  for (const [key, content] of await dumpKeys()) {
    for (const needle of NEEDLES) if (content.includes(needle)) found.push(`${key} contains ${needle}`);
    if (new RegExp(`^${PREFIX}:jobs\\.${JOB.replace('.', '\\.')}:${UUID}`).test(key)) found.push(`job key ${key}`);
    if (key.endsWith(':events') && /"event","(completed|failed)"/.test(content))
      found.push(`${key} still has completed/failed events`);
  }
  const slowlog = JSON.stringify(await admin.call('SLOWLOG', 'GET', '1000'));
  for (const needle of NEEDLES) if (slowlog.includes(needle)) found.push(`SLOWLOG contains ${needle}`);
  return found;
}

const inLogs = () => NEEDLES.filter((n) => lines().includes(n));

async function post(
  body: string,
  contentType = 'application/json',
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}/api/v1/airgap-scrub`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  admin = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
  queue = await createBullMqQueue({
    redisUrl: config.REDIS_URL,
    prefix: PREFIX,
    concurrency: 2,
    lockMs: config.JOB_LOCK_MS,
    maxAttempts: config.JOB_MAX_ATTEMPTS,
    connectTimeoutMs: 10_000,
    logger,
  });
  const pairs = loadPairs(config.PAIRS_FILE);
  // The worker side, as jobs/role.ts builds it.
  const processor = await createAirgapScrubProcessor({ config, logger: logger.child({ sku: 'airgap-scrub' }), pairs });
  await queue.process(JOB, processor.handle, { concurrency: 2 });
  // The API side: the real app and router; a pass-through instead of the x402 gate.
  store = await createStore(config, logger);
  // Only this SKU, as the catalogue declares it (the other SKUs are not under test here).
  const sku = jobSkuEntry(airgapScrubJob);
  expect(sku.available).toBe(true);
  const priced = { ...sku, priceAtomic: sku.defaultPriceAtomic };
  const catalogue: Catalogue = { skus: [priced], byId: (id) => (id === priced.id ? priced : undefined) };
  const app = createApp({
    logger,
    health: new HealthRegistry({ version: 'test', role: 'api' }),
    gateway: {
      runtime: { store, config, pairs, catalogue, queue, now: () => Date.now() },
      gate: async (_ctx, next) => next(),
      payment: {
        network: 'eip155:8453',
        asset: '0x0000000000000000000000000000000000000000',
        assetName: 'USD Coin',
        assetVersion: '2',
        payTo: '0x0000000000000000000000000000000000000001',
        maxTimeoutSeconds: 300,
      },
    },
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  if (server) await new Promise((resolve) => server.close(resolve));
  await queue?.close();
  await store?.close();
  if (admin) {
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await admin.unlink(...keys);
    } while (cursor !== '0');
    admin.disconnect();
  }
});

describe('airgap-scrub: zero data retention (BullMQ on Redis, API in front)', { timeout: 120_000 }, () => {
  it('a call through the queue returns the scrubbed text and leaves nothing in Redis or the logs', async () => {
    const body = await queue.run<{ text: string }, { scrubbed: string; entities_redacted: string[] }>(
      JOB,
      { text: TEXT },
      { deadlineMs: DEADLINE_MS },
    );
    expect(body.entities_redacted).toEqual(
      expect.arrayContaining(['SSN', 'CREDIT_CARD', 'EMAIL', 'PHONE', 'ADDRESS', 'ZIP']),
    );
    for (const needle of NEEDLES.filter((n) => n !== marker)) expect(body.scrubbed).not.toContain(needle);
    expect(body.scrubbed).toContain(marker); // not PII: kept in the answer, and only there
    await eventually(retained, (found) => found.length === 0, RETENTION_WAIT_MS);
    expect(lines()).toContain('airgap-scrub: done'); // the capture works: the processor did log (counts)
    expect(inLogs()).toEqual([]);
  });

  it('a paid-route call over HTTP (router, validation, queue, worker) leaves nothing either', async () => {
    const res = await post(JSON.stringify({ text: TEXT }));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, mode: 'standard' });
    expect(JSON.stringify(res.json)).not.toContain(ssn);
    await eventually(retained, (found) => found.length === 0, RETENTION_WAIT_MS);
    expect(lines()).toMatch(/"path":"\/api\/v1\/airgap-scrub".*"status":200/); // the access log line was captured
    expect(inLogs()).toEqual([]);
  });

  it('failing calls (bad input to the processor, strict mode without AI, refused or broken bodies) leave nothing', async () => {
    // Straight to the processor through the queue: input the API would have refused, and strict mode without a provider.
    const bad = await queue
      .run(JOB, { text: TEXT, strictMode: 'yes' }, { deadlineMs: DEADLINE_MS })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(JobError);
    expect(bad).toMatchObject({ code: 'invalid_parameter', status: 400 });
    const strict = await queue
      .run(JOB, { text: TEXT, strictMode: true }, { deadlineMs: DEADLINE_MS })
      .catch((e: unknown) => e);
    expect(strict).toMatchObject({ code: 'ai_unavailable', status: 503 });
    for (const err of [bad, strict])
      expect(JSON.stringify({ m: (err as Error).message, d: (err as JobError).details })).not.toContain(ssn);
    // Over HTTP: strict mode (503 from the worker), an unknown field carrying a secret, and a body that is not JSON.
    expect((await post(JSON.stringify({ text: TEXT, strictMode: true }))).status).toBe(503);
    const unknown = await post(JSON.stringify({ text: TEXT, note: `SSN ${ssn}` }));
    expect(unknown).toMatchObject({ status: 400, json: { code: 'unknown_parameter', field: 'note' } });
    expect((await post(`{"text": "${TEXT}", `)).status).toBe(400);
    expect((await post(TEXT, 'text/plain')).status).toBe(415);
    await eventually(retained, (found) => found.length === 0, RETENTION_WAIT_MS);
    expect(inLogs()).toEqual([]);
  });

  it('repeated calls through BullMQ leave nothing retained either', async () => {
    // (Latency through the API and BullMQ is a bench figure: npm run bench:utility.)
    for (let i = 0; i < 20; i++) {
      const body = await queue.run<{ text: string }, { scrubbed: string }>(
        JOB,
        { text: TEXT },
        { deadlineMs: DEADLINE_MS },
      );
      expect(body.scrubbed).not.toContain(ssn);
    }
    await eventually(retained, (found) => found.length === 0, RETENTION_WAIT_MS);
    expect(inLogs()).toEqual([]);
  });

  it("on disk: the project's Redis persists nothing (no AOF, no RDB), and no file of its data dir holds the text", async () => {
    const [, appendonly] = (await admin.config('GET', 'appendonly')) as string[];
    const [, save] = (await admin.config('GET', 'save')) as string[];
    const [, dir] = (await admin.config('GET', 'dir')) as string[];
    // scripts/engines/redis/redis.conf.template (and docker-compose.yml): a job payload must never reach a disk.
    expect({ appendonly, save }).toEqual({ appendonly: 'no', save: '' });
    const local = await stat(dir!).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!local) {
      console.warn(`airgap-retention: Redis data dir ${dir} is not on this machine; the file search is skipped`);
      return;
    }
    // Every file in Redis' data dir (AOF base/incr files, the RDB, if any), searched for this run's secrets.
    const files: string[] = [];
    for (const entry of await readdir(dir!, { withFileTypes: true, recursive: true }))
      if (entry.isFile()) files.push(join(entry.parentPath, entry.name));
    const found: string[] = [];
    for (const file of files) {
      const content = (await readFile(file)).toString('latin1');
      for (const needle of [marker, ssn, emailLocal])
        if (content.includes(needle)) found.push(`${file} contains ${needle}`);
    }
    expect(found, 'nothing of the text may be on disk').toEqual([]);
  });
});
