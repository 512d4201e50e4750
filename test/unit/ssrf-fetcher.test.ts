/**
 * The fetcher's limits against a real HTTP site on loopback (allowance ON,
 * loopback-only network): redirect cap (chains, loops), body cap (streamed
 * without Content-Length, declared, and a gzip bomb, all stopped early),
 * content types refused from the headers, total-time limit (slow headers,
 * slow body, the caller's abort), decoding (gzip, brotli), connection
 * failures, fallback between the vetted addresses of one answer, and the
 * request headers sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobError } from '../../core/queue/queue.js';
import type { HostResolver } from '../../jobs/web-fetch/resolver.js';
import { createSafeFetch, type FetchRequest, type FetcherSettings } from '../../jobs/web-fetch/safe-fetch.js';
import { freePort } from '../helpers/app-process.js';
import { ARTICLE_TITLE, loopbackOnlyNetwork, startWebFixtures, type WebFixtures } from '../helpers/web-fixtures.js';
import { jobErrorOf } from '../helpers/job-error.js';

let site: WebFixtures;
const noDns: HostResolver = async (host) => {
  throw new Error(`unexpected resolution of ${host}`);
};

const fetcher = (overrides: Partial<FetcherSettings> = {}) =>
  createSafeFetch({
    allowLoopback: true,
    maxRedirects: 5,
    resolver: noDns,
    connect: loopbackOnlyNetwork(),
    ...overrides,
  });

const request = (path: string, extra: Partial<FetchRequest> = {}): FetchRequest => ({
  url: path.startsWith('http') ? path : site.url(path),
  field: 'url',
  // Generous: decompressing the gzip bomb up to its cap takes seconds on a busy machine. The time tests set their own.
  timeoutMs: 30_000,
  maxBytes: 1024 * 1024,
  userAgent: 'FetcherTest/1.0',
  accept: 'text/html',
  acceptMediaType: (t) => t === null || t.startsWith('text/') || t === 'application/json',
  acceptedDescription: 'text',
  ...extra,
});

async function failure(promise: Promise<unknown>): Promise<JobError> {
  return jobErrorOf(promise);
}

beforeAll(async () => {
  site = await startWebFixtures();
});
afterAll(async () => site?.close());

describe('redirects', () => {
  it('follows up to the cap (5) and reports every hop', async () => {
    const page = await fetcher()(request('/chain/4'));
    expect(page.status).toBe(200);
    expect(page.url.pathname).toBe('/article');
    expect(page.redirects.map((u) => new URL(u).pathname)).toEqual([
      '/chain/4',
      '/chain/3',
      '/chain/2',
      '/chain/1',
      '/chain/0',
    ]);
  });

  it('one more than the cap is a 502 too_many_redirects', async () => {
    const err = await failure(fetcher()(request('/chain/5')));
    expect(err).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(err.details.reason).toBe('too_many_redirects');
  });

  it('a redirect loop stops at the cap', async () => {
    const before = site.requests.length;
    const err = await failure(fetcher({ maxRedirects: 3 })(request('/loop')));
    expect(err.details.reason).toBe('too_many_redirects');
    expect(site.requests.length - before).toBe(4);
  });

  it('a 3xx without Location is the final answer', async () => {
    site.route('/moved-nowhere', (_req, res) => {
      res.writeHead(302, { 'content-type': 'text/html' });
      res.end('<p>moved</p>');
    });
    const page = await fetcher()(request('/moved-nowhere'));
    expect(page.status).toBe(302);
    expect(page.redirects).toEqual([]);
  });
});

describe('body size', () => {
  it('a streamed body past the cap is abandoned early with 413', async () => {
    const err = await failure(fetcher()(request('/big', { maxBytes: 512 * 1024 })));
    expect(err).toMatchObject({ code: 'upstream_too_large', status: 413 });
    expect(err.details).toMatchObject({ field: 'url', limit_bytes: 512 * 1024 });
    await new Promise((r) => setTimeout(r, 200));
    // The server would have sent ~20 MB; the connection was closed long before. What the server counts as
    // sent includes what the kernel buffered on both ends of the loopback connection before the close
    // (the send buffer alone may grow to tcp_wmem's 4 MiB maximum), so the bound leaves room for it.
    expect(site.bigBytesSent()).toBeLessThan(8 * 1024 * 1024);
  });

  it('a declared Content-Length past the cap is refused before reading', async () => {
    // The server never ends that body: reading it would last until the request timeout (30 s here).
    const t0 = performance.now();
    const err = await failure(fetcher()(request('/big-declared', { timeoutMs: 30_000 })));
    expect(err.code).toBe('upstream_too_large');
    expect(err.message).toContain('Content-Length');
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('a gzip bomb stops at the cap after decompression', async () => {
    const err = await failure(fetcher()(request('/gzip-bomb', { maxBytes: 2 * 1024 * 1024 })));
    expect(err.code).toBe('upstream_too_large');
    expect(err.message).toContain('after decompression');
  });

  it('gzip and brotli bodies are decoded', async () => {
    for (const path of ['/article.gz', '/article.br']) {
      const page = await fetcher()(request(path));
      expect(page.body.toString('utf8'), path).toContain(ARTICLE_TITLE);
    }
  });

  it('an unknown Content-Encoding is a 502', async () => {
    site.route('/zstd', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'zstd' });
      res.end('xxxx');
    });
    const err = await failure(fetcher()(request('/zstd')));
    expect(err).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(err.details.reason).toBe('unsupported_content_encoding');
  });
});

describe('content types', () => {
  it('a type the caller does not accept is a 415 decided from the headers', async () => {
    const err = await failure(fetcher()(request('/report.pdf')));
    expect(err).toMatchObject({ code: 'unsupported_content_type', status: 415 });
    expect(err.details).toMatchObject({ field: 'url', content_type: 'application/pdf' });
  });

  it('media type and charset are parsed from Content-Type', async () => {
    const page = await fetcher()(request('/latin1'));
    expect(page.mediaType).toBe('text/html');
    expect(page.charset).toBe('iso-8859-1');
  });
});

describe('time', () => {
  // The site answers after 30 s; the fetch gives up after 400 ms. The bound of 10 s leaves a busy machine room while
  // telling "stopped at its own limit" apart from "waited for the site".
  it('slow headers: 504 upstream_timeout at the request timeout', async () => {
    const t0 = performance.now();
    const err = await failure(fetcher()(request('/slow-headers?ms=30000', { timeoutMs: 400 })));
    expect(err).toMatchObject({ code: 'upstream_timeout', status: 504 });
    expect(err.details.timeout_ms).toBe(400);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('a slow body counts against the same total time', async () => {
    const t0 = performance.now();
    const err = await failure(fetcher()(request('/slow-body?ms=30000', { timeoutMs: 400 })));
    expect(err.code).toBe('upstream_timeout');
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('the caller giving up aborts the fetch', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('deadline')), 150);
    const t0 = performance.now();
    const err = await failure(
      fetcher()(request('/slow-headers?ms=30000', { timeoutMs: 25_000, signal: controller.signal })),
    );
    expect(err.code).toBe('upstream_timeout');
    expect(err.details.reason).toBe('aborted');
    expect(performance.now() - t0).toBeLessThan(10_000);
  });
});

describe('connections', () => {
  it('a closed port is a 502 with the socket error as reason', async () => {
    const port = await freePort();
    const err = await failure(fetcher()(request(`http://127.0.0.1:${port}/`)));
    expect(err).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(err.details.reason).toBe('ECONNREFUSED');
  });

  it('when one vetted address refuses, the next address of the same answer is tried', async () => {
    const attempts: string[] = [];
    const resolver: HostResolver = async () => [
      { address: '::1', family: 6 },
      { address: '127.0.0.1', family: 4 },
    ];
    const page = await fetcher({ resolver, connect: loopbackOnlyNetwork(attempts) })(
      request(`http://localhost:${site.port}/article`),
    );
    expect(page.status).toBe(200);
    expect(page.remoteAddress).toBe('127.0.0.1');
    expect(attempts).toEqual([`::1:${site.port}`, `127.0.0.1:${site.port}`]);
  });

  it('sends the User-Agent, Accept and Host given', async () => {
    await fetcher()(request('/echo-ua', { userAgent: 'Mozilla/5.0 (TestAgent 7)', accept: 'text/html' }));
    const seen = site.requests.at(-1)!;
    expect(seen.headers['user-agent']).toBe('Mozilla/5.0 (TestAgent 7)');
    expect(seen.headers.accept).toBe('text/html');
    expect(seen.headers.host).toBe(`127.0.0.1:${site.port}`);
    expect(seen.headers['accept-encoding']).toBe('gzip, br');
  });
});
