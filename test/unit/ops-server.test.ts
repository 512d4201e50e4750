/**
 * The ops server of the roles without the api (api/ops-server.ts, plain node:http) on a loopback port: /livez,
 * /readyz (and its transitions), /health, /metrics, and problem+json with the request id for anything else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../api/http-server.js';
import { startOpsServer } from '../../api/ops-server.js';
import { HealthRegistry, type ProbeResult } from '../../core/health.js';
import { familiesOf, Readiness } from '../../core/readiness.js';
import { testConfig, testLogger } from '../helpers/config.js';

const config = testConfig({ ROLE: 'worker', HTTP_HOST: '127.0.0.1', HTTP_PORT: '0' });
const health = new HealthRegistry({ version: 't', role: 'worker' }, 500);
let queue: ProbeResult | Error = { status: 'ok', adapter: 'bullmq' };
health.register('queue', async () => {
  if (queue instanceof Error) throw queue;
  return queue;
});
health.register('store', async () => ({ status: 'ok' }));
const readiness = new Readiness(health, 'worker', familiesOf(['worker']), 60_000);
let http: HttpServer;

beforeAll(async () => {
  http = await startOpsServer({ config, logger: testLogger(), health, instanceId: 'test' }, readiness);
  await readiness.start();
});
afterAll(async () => {
  readiness.stop();
  await http?.close();
});

const get = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${http.url}${path}`, init);
  const text = await res.text();
  return { res, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
};

describe('ops server (node:http)', () => {
  it('answers /livez, /readyz and /health, and readiness follows the queue down and back', async () => {
    expect((await get('/livez')).body).toMatchObject({ status: 'alive', role: 'worker' });
    const ready = await get('/readyz');
    expect(ready.res.status).toBe(200);
    expect(ready.body).toMatchObject({ ready: true, families: { worker: { ready: true, needs: ['queue'] } } });
    expect((await get('/health')).body).toMatchObject({ status: 'ok' });

    queue = new Error('Redis at redis://127.0.0.1:1/ did not answer');
    await readiness.refresh();
    const notReady = await get('/readyz');
    expect(notReady.res.status).toBe(503);
    expect(notReady.res.headers.get('content-type')).toContain('application/json');
    expect(notReady.body).toMatchObject({
      ready: false,
      families: { worker: { ready: false, code: 'queue_unavailable' } },
    });
    const down = await get('/health');
    expect(down.res.status).toBe(503); // a worker without its queue serves nothing
    expect(down.body).toMatchObject({ status: 'down' });
    expect((await get('/livez')).res.status).toBe(200);

    queue = { status: 'ok', adapter: 'bullmq' };
    await readiness.refresh();
    expect((await get('/readyz')).res.status).toBe(200);
    expect((await get('/readyz?family=worker')).res.status).toBe(200);
  });

  it('serves /metrics as Prometheus text', async () => {
    const { res, text } = await fetch(`${http.url}/metrics`).then(async (r) => ({ res: r, text: await r.text() }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('answers problem+json with a stable code and the request id otherwise', async () => {
    const missing = await get('/nope', { headers: { 'x-request-id': 'req-ops-1' } });
    expect(missing.res.status).toBe(404);
    expect(missing.res.headers.get('content-type')).toContain('application/problem+json');
    expect(missing.res.headers.get('x-request-id')).toBe('req-ops-1');
    expect(missing.body).toMatchObject({ code: 'route_not_found', request_id: 'req-ops-1' });

    const post = await get('/health', { method: 'POST' });
    expect(post.res.status).toBe(405);
    expect(post.res.headers.get('allow')).toBe('GET, HEAD');
    expect(post.body).toMatchObject({ code: 'method_not_allowed' });

    const unknown = await get('/readyz?family=api');
    expect(unknown.res.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'invalid_parameter', field: 'family' });

    const head = await fetch(`${http.url}/livez`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });
});
