/** Methods a route does not answer: 405 `method_not_allowed` with `Allow`, never 501; the OpenAPI lists the 413. */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Middleware } from 'koa';
import { createApp } from '../../api/app.js';
import { listen, type HttpServer } from '../../api/http-server.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { loadConfig } from '../../core/config.js';
import { HealthRegistry } from '../../core/health.js';
import { loadPairs } from '../../core/markets/pairs.js';
import type { Store } from '../../core/store/store.js';
import { testLogger } from '../helpers/config.js';
import { TEST_PAYMENT_INFO } from '../helpers/x402-client.js';

let http: HttpServer;

/** node:http, since fetch refuses TRACE. */
function send(
  method: string,
  path: string,
): Promise<{ status: number; allow: string | undefined; body: string; challenged: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(`${http.url}${path}`, { method }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          allow: res.headers.allow,
          body,
          challenged: res.headers['payment-required'] !== undefined,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const config = loadConfig({ LOG_LEVEL: 'silent', NODE_ENV: 'test' });
  const pairs = loadPairs(config.PAIRS_FILE);
  const catalogue = buildCatalogue({ config, pairs });
  const gate: Middleware = async (ctx) => {
    ctx.status = 402;
    ctx.body = { code: 'payment_required' };
  };
  const app = createApp({
    logger: testLogger(),
    health: new HealthRegistry({ version: 'test', role: 'api' }),
    gateway: {
      runtime: { store: {} as Store, config, pairs, catalogue, now: () => Date.now() },
      gate,
      payment: TEST_PAYMENT_INFO,
    },
  });
  http = await listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
});

afterAll(async () => {
  await http?.close();
});

describe('HTTP methods', () => {
  it('answers TRACE, DELETE, PUT and PATCH on a route with 405 method_not_allowed and its Allow list, before any challenge', async () => {
    for (const [method, path, allow] of [
      ['TRACE', '/api/v1/crypto/spread-candles', 'HEAD, GET, POST'],
      ['PROPFIND', '/api/v1/crypto/spread-candles', 'HEAD, GET, POST'],
      ['DELETE', '/api/v1/crypto/spread-candles', 'HEAD, GET, POST'],
      ['PUT', '/api/v1/summarize', 'POST'],
      ['PATCH', '/health', 'HEAD, GET'],
    ] as const) {
      const res = await send(method, path);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.allow, `${method} ${path}`).toBe(allow);
      expect(res.challenged).toBe(false);
      expect(JSON.parse(res.body), `${method} ${path}`).toMatchObject({ status: 405, code: 'method_not_allowed' });
    }
    // An unknown path stays a 404.
    expect((await send('DELETE', '/nope')).status).toBe(404);
  });

  it('documents the 413 of every POST operation in the OpenAPI', async () => {
    const doc = (await (await fetch(`${http.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    let posts = 0;
    for (const item of Object.values(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'post') {
          posts += 1;
          expect(op.responses['413']).toMatchObject({ description: expect.stringContaining('payload_too_large') });
        } else {
          expect(op.responses['413']).toBeUndefined();
        }
      }
    }
    expect(posts).toBeGreaterThan(10);
  });
});
