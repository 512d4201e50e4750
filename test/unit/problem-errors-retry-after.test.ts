/**
 * `Retry-After` from problemErrors: a 429 or 503 whose error details carry an
 * integer `retry_after_seconds` gets the header (RFC 9110 §10.2.3
 * delta-seconds) next to the problem body; other statuses, missing or
 * non-integer values get none. Served by a real Koa app on loopback with the
 * middleware, read with fetch.
 */
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type HttpServer } from '../../api/http-server.js';
import { problemErrors, retryAfterHeader } from '../../api/middleware/problem-errors.js';
import { AppError } from '../../core/errors.js';
import { JobError } from '../../core/queue/queue.js';

let http: HttpServer;
/** path -> the error the route throws. */
const ERRORS: Record<string, Error> = {
  '/rate-limited-503': new JobError('upstream_rate_limited', 'RDAP server is rate limiting; retry after 120 s', 503, {
    upstream: 'https://rdap.example',
    retry_after_seconds: 120,
  }),
  '/rate-limited-429': new AppError('too_many_requests', 'slow down', 429, { retry_after_seconds: 7 }),
  '/zero': new AppError('too_many_requests', 'retry now', 429, { retry_after_seconds: 0 }),
  '/no-value': new AppError('sku_unavailable', 'not served', 503, {}),
  '/fraction': new AppError('upstream_rate_limited', 'x', 503, { retry_after_seconds: 1.5 }),
  '/string': new AppError('upstream_rate_limited', 'x', 503, { retry_after_seconds: '30' }),
  '/negative': new AppError('upstream_rate_limited', 'x', 503, { retry_after_seconds: -5 }),
  '/bad-gateway': new JobError('upstream_error', 'x', 502, { retry_after_seconds: 30 }),
  '/bad-request': new JobError('invalid_domain', 'x', 400, { field: 'domain', retry_after_seconds: 30 }),
  // Not an AppError: its details are not ours to trust.
  '/foreign': Object.assign(new Error('foreign'), { status: 503, details: { retry_after_seconds: 30 } }),
};

beforeAll(async () => {
  const app = new Koa();
  app.silent = true;
  app.use(problemErrors());
  app.use(async (ctx) => {
    const err = ERRORS[ctx.path];
    if (err) throw err;
    ctx.body = { ok: true };
  });
  http = await listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
});

afterAll(async () => {
  await http?.close();
});

async function get(path: string) {
  const res = await fetch(`${http.url}${path}`);
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

describe('Retry-After header', () => {
  it('503 upstream_rate_limited with retry_after_seconds: header and body agree', async () => {
    const res = await get('/rate-limited-503');
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('120');
    expect(res.body).toMatchObject({ code: 'upstream_rate_limited', retry_after_seconds: 120 });
  });

  it('429 with retry_after_seconds, including 0', async () => {
    expect(await get('/rate-limited-429')).toMatchObject({ status: 429, retryAfter: '7' });
    expect(await get('/zero')).toMatchObject({ status: 429, retryAfter: '0' });
  });

  it('no header without an integer value, on other statuses, or for errors that are not ours', async () => {
    for (const path of ['/no-value', '/fraction', '/string', '/negative', '/bad-gateway', '/bad-request', '/foreign']) {
      const res = await get(path);
      expect(res.status, path).toBe((ERRORS[path] as unknown as { status: number }).status);
      expect(res.retryAfter, path).toBeNull();
    }
  });

  it('a successful answer carries none', async () => {
    expect(await get('/fine')).toMatchObject({ status: 200, retryAfter: null });
  });

  it('retryAfterHeader: the rule itself', () => {
    expect(retryAfterHeader(503, { retry_after_seconds: 60 })).toBe('60');
    expect(retryAfterHeader(429, { retry_after_seconds: 86_400 })).toBe('86400');
    expect(retryAfterHeader(504, { retry_after_seconds: 60 })).toBeUndefined();
    expect(retryAfterHeader(503, { retry_after_seconds: Number.NaN })).toBeUndefined();
    expect(retryAfterHeader(503, { retry_after_seconds: Number.POSITIVE_INFINITY })).toBeUndefined();
    expect(retryAfterHeader(503, {})).toBeUndefined();
  });
});
