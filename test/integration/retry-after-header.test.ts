/**
 * `Retry-After` end to end: POST /api/v1/domain-check through the real Koa
 * app (router, job handler, problemErrors; a pass-through stand-in for the
 * x402 gate) with the job on BullMQ over the running Redis, processed by the
 * real domain-check processor against a loopback RDAP registry answering
 * 429 with `Retry-After: 120`. The coded error crosses Redis (code, status,
 * details serialised by core/queue/bullmq-job-format.ts) and the gateway answers
 * 503 `upstream_rate_limited` with `details.retry_after_seconds` in the body
 * and the same value in a `Retry-After` header.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Middleware } from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { SERVICE_VERSION } from '../../api/discovery/context.js';
import { listen, type HttpServer } from '../../api/http-server.js';
import { HealthRegistry } from '../../core/health.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createBullMqQueue } from '../../core/queue/bullmq-queue.js';
import type { JobQueue } from '../../core/queue/queue.js';
import type { Store } from '../../core/store/store.js';
import { createDomainCheckProcessor } from '../../jobs/domain-check/processor.js';
import { skuJobName, type SkuProcessor } from '../../jobs/sku-processor.js';
import { testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { RdapServer, writeBootstrapFile } from '../helpers/rdap-server.js';
import { TEST_PAYMENT_INFO } from '../helpers/x402-client.js';

const PREFIX = uniqueName('retry_after');
const logger = testLogger();
let registry: RdapServer;
let dir: string;
let queue: JobQueue;
let processor: SkuProcessor;
let http: HttpServer;

const payment = TEST_PAYMENT_INFO;
/** Stands in for a gate whose payment verified: the handler runs. */
const passGate: Middleware = async (_ctx, next) => next();

beforeAll(async () => {
  registry = await RdapServer.start();
  registry.route('/com/v1/domain/busy.com', {
    kind: 'json',
    status: 429,
    body: { errorCode: 429, title: 'Too Many Requests' },
    headers: { 'retry-after': '120' },
  });
  // The date is 45 s after each answer (not after this setup), so the delta does not shrink while a busy machine runs it.
  registry.route('/com/v1/domain/dated.com', () => ({
    kind: 'json',
    status: 429,
    body: { errorCode: 429, title: 'Too Many Requests' },
    headers: { 'retry-after': new Date(Date.now() + 45_000).toUTCString() },
  }));
  dir = await mkdtemp(join(tmpdir(), 'retry-after-'));
  const config = testConfig({
    RDAP_BOOTSTRAP_FILE: writeBootstrapFile(dir, [[['com'], [`${registry.url}/com/v1/`]]], '2026-01-01T00:00:00Z'),
    RDAP_BOOTSTRAP_REFRESH_MS: '0',
    RDAP_ALLOW_HTTP: 'true',
  });
  queue = await createBullMqQueue({
    redisUrl: config.REDIS_URL,
    prefix: PREFIX,
    concurrency: 2,
    lockMs: config.JOB_LOCK_MS,
    maxAttempts: 2,
    connectTimeoutMs: 10_000,
    logger,
  });
  processor = (await createDomainCheckProcessor({ config, logger, pairs: loadPairs() })) as SkuProcessor;
  await queue.process(skuJobName('domain-check'), processor.handle);
  const pairs = loadPairs();
  const app = createApp({
    logger,
    health: new HealthRegistry({ version: SERVICE_VERSION, role: 'api' }),
    gateway: {
      runtime: {
        store: {} as Store,
        config,
        pairs,
        catalogue: buildCatalogue({ config, pairs }),
        queue,
        now: () => Date.now(),
      },
      gate: passGate,
      payment,
    },
  });
  http = await listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
});

afterAll(async () => {
  await http?.close();
  await queue?.close();
  await processor?.close?.();
  await registry?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  const redis = new Redis(testConfig().REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
});

const check = (domain: string) =>
  fetch(`${http.url}/api/v1/domain-check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ domain }),
  });

describe('Retry-After through the gateway and BullMQ', () => {
  it('registry 429 (Retry-After: 120) -> 503 upstream_rate_limited, Retry-After: 120', async () => {
    const res = await check('busy.com');
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(503);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(body).toMatchObject({ code: 'upstream_rate_limited', retry_after_seconds: 120 });
    expect(res.headers.get('retry-after')).toBe('120');
    expect(registry.requestsTo('/com/v1/domain/busy.com')).toHaveLength(1);
  });

  it('an HTTP-date Retry-After becomes delta-seconds in both places', async () => {
    const res = await check('dated.com');
    const body = (await res.json()) as { retry_after_seconds: number };
    expect(res.status).toBe(503);
    expect(body.retry_after_seconds).toBeGreaterThanOrEqual(40);
    expect(body.retry_after_seconds).toBeLessThanOrEqual(46);
    expect(res.headers.get('retry-after')).toBe(String(body.retry_after_seconds));
  });

  it('other errors carry no Retry-After (registry 404 is a 200 available; an unknown TLD a 400)', async () => {
    const res = await check('example.zz');
    expect(res.status).toBe(400);
    expect(res.headers.get('retry-after')).toBeNull();
  });
});
