/**
 * How the gateway serves its pages and answers over HTTP, on the real api role
 * (in-process, payments on the dev chain) over loopback, read with raw
 * node:http so the bytes on the wire are seen as sent (fetch would decode them):
 *
 *   - the landing page and a dashboard asset are compressed with br or gzip as
 *     Accept-Encoding asks, and sent as they are when it asks for neither;
 *   - a second GET with the ETag in If-None-Match is a 304 (compressed or not);
 *     the hashed asset is cached for a year (immutable);
 *   - the security headers (CSP without unsafe-inline, nosniff, Referrer-Policy)
 *     are on `/` and on the paywall page;
 *   - a signed paid answer of more than the threshold, asked for with
 *     `Accept-Encoding: br, gzip`, is sent as signed: its Content-Digest is the
 *     digest of the bytes received and its RFC 9421 signature verifies;
 *   - the dashboard's rate limit is per client address: one bucket for every
 *     client when HTTP_TRUST_PROXY is false (the proxy's address), one per
 *     X-Forwarded-For client when it is true (the rightmost entry: a forged
 *     leftmost one changes nothing); a 429 carries Retry-After;
 *   - the access log: dashboard polls and assets at debug, the page and the
 *     paid call at info.
 */
import { createHash, webcrypto } from 'node:crypto';
import { Writable } from 'node:stream';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { component, verifySignature, webcrypto as sigWebcrypto } from 'http-message-sig';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { insertDislocations, type DislocationRecord } from '../../core/store/tables/dislocations.js';
import { COMPRESSION_THRESHOLD_BYTES } from '../../api/middleware/compression.js';
import { startPaidApi, type PaidApi } from '../helpers/paid-api.js';
import { spreadSample } from '../helpers/spread-sample.js';
import { testLogger } from '../helpers/config.js';
import { createLogger } from '../../core/logger.js';
import { NO_LEG_INPUTS } from '../helpers/dislocation-record.js';

const SLICE = { pair: 'ETH/USD', date: '2025-03-10', time: '0915' };
const SLICE_START = Date.UTC(2025, 2, 10, 9, 15);
const started: { api: PaidApi; dir: string }[] = [];
let direct: PaidApi; // HTTP_TRUST_PROXY=false
let proxied: PaidApi; // HTTP_TRUST_PROXY=true
/** The access lines of `direct` (its logger at debug, JSON). */
const accessLines: { level: number; path: string; status: number }[] = [];
const collecting = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      const entry = JSON.parse(line) as { msg?: string; level: number; path: string; status: number };
      if (entry.msg === 'request') accessLines.push(entry);
    }
    done();
  },
});

async function apiWith(env: Record<string, string>, logger = testLogger()): Promise<PaidApi> {
  const dir = await mkdtemp(join(tmpdir(), 'served-pages-'));
  const api = await startPaidApi(
    dir,
    { STORE: 'duckdb', DUCKDB_PATH: ':memory:', DASHBOARD_RATE_LIMIT_PER_MINUTE: '2', ...env },
    logger,
  );
  started.push({ api, dir });
  return api;
}

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as received (still encoded). */
  bytes: Buffer;
}

function get(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const decoded = (r: Raw): Buffer =>
  r.headers['content-encoding'] === 'br'
    ? brotliDecompressSync(r.bytes)
    : r.headers['content-encoding'] === 'gzip'
      ? gunzipSync(r.bytes)
      : r.bytes;

function dislocation(n: number): DislocationRecord {
  const opened = SLICE_START + 10_000 * (n + 1);
  return {
    ...NO_LEG_INPUTS,
    event_id: `served-${n}:0`,
    opportunity_id: `served-${n}`,
    revision: 0,
    pair: 'ETH/USD',
    buy_venue: 'uniswap_v3_base',
    sell_venue: 'coinbase',
    buy_price: 2000.12,
    sell_price: 2003.45,
    raw_spread_bps: 12 + n,
    net_spread_bps: 3 + n,
    est_profit_usd: 12.64,
    capacity_usd: 25_000,
    liquidity_depth_usd: 123_456,
    liquidity_depth_capped: false,
    status: 'OPPORTUNITY',
    opened_at_ms: opened,
    updated_at_ms: opened + 1000,
    duration_ms: 1000,
    source: 'simulated',
    id: 100 + n,
    trigger_event_id: `t-served-${n}`,
    net_size_usd: 25_000,
    profit_size_usd: 25_000,
    fees_bps: 5,
    gas_usd: 0.02,
    peak_capacity_usd: 25_049,
    peak_profit_usd: 13,
    capacity_capped: false,
    peak_raw_spread_bps: 12 + n,
    peak_net_spread_bps: 3 + n,
    peak_size_usd: 25_000,
    peak_capacity_capped: false,
    capacity_usd_ms: 25_000_000,
    closed_at_ms: null,
  };
}

beforeAll(async () => {
  direct = await apiWith({}, createLogger('debug', {}, { format: 'json', destination: collecting }));
  proxied = await apiWith({ HTTP_TRUST_PROXY: 'true' });
  // A closed slice of ETH/USD with samples around it (coverage) and dislocations (a paid answer of a few KB).
  const store = direct.proc.ctx.store!;
  await insertSpreadSamples(
    store,
    Array.from({ length: 12 }, (_, i) => spreadSample(700_000 + i, SLICE_START - 15 * 60_000 + i * 5 * 60_000)),
  );
  await insertDislocations(
    store,
    Array.from({ length: 6 }, (_, n) => dislocation(n)),
  );
}, 240_000);

afterAll(async () => {
  for (const { api, dir } of started) {
    await api.proc.shutdown('test');
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);

describe('compression and validators', () => {
  it('the landing page: br, gzip or identity as asked; the same page each way; If-None-Match is a 304', async () => {
    const plain = await get(`${direct.url}/`, { 'accept-encoding': 'identity' });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.bytes.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES);
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    const none = await get(`${direct.url}/`);
    expect(none.headers['content-encoding']).toBeUndefined();
    for (const encoding of ['br', 'gzip']) {
      const res = await get(`${direct.url}/`, { 'accept-encoding': encoding });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(res.bytes.length).toBeLessThan(plain.bytes.length / 2);
      expect(decoded(res).equals(plain.bytes)).toBe(true);
      console.log(`landing page: ${plain.bytes.length} B identity, ${res.bytes.length} B ${encoding}`);
      // Compressed bytes differ from the identity ones: the validator is weak.
      expect(res.headers.etag).toMatch(/^W\/"/);
      const again = await get(`${direct.url}/`, {
        'accept-encoding': encoding,
        'if-none-match': String(res.headers.etag),
      });
      expect(again.status).toBe(304);
      expect(again.bytes.length).toBe(0);
    }
    expect(plain.headers['cache-control']).toBe('no-cache');
    const etag = String(plain.headers.etag);
    expect(etag).toMatch(/^"/);
    expect((await get(`${direct.url}/`, { 'if-none-match': etag })).status).toBe(304);
    expect((await get(`${direct.url}/`, { 'if-none-match': '"something-else"' })).status).toBe(200);
  });

  it('a hashed asset: compressed as asked, a year immutable, a strong content ETag, 304 on revalidation', async () => {
    const html = (await get(`${direct.url}/`)).bytes.toString('utf8');
    const src = /src="(\/dashboard\/assets\/lightweight-charts\.js\?v=[0-9a-f]{12})"/.exec(html)?.[1];
    expect(src).toBeDefined();
    const plain = await get(`${direct.url}${src}`, { 'accept-encoding': 'identity' });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['last-modified']).toBeDefined();
    expect(plain.headers.etag).toBe(`"${createHash('sha256').update(plain.bytes).digest('hex')}"`);
    for (const encoding of ['br', 'gzip']) {
      const res = await get(`${direct.url}${src}`, { 'accept-encoding': `${encoding}` });
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(decoded(res).equals(plain.bytes)).toBe(true);
      expect(res.bytes.length).toBeLessThan(plain.bytes.length / 2);
      console.log(`lightweight-charts.js: ${plain.bytes.length} B identity, ${res.bytes.length} B ${encoding}`);
    }
    const revalidated = await get(`${direct.url}${src}`, { 'if-none-match': String(plain.headers.etag) });
    expect(revalidated.status).toBe(304);
    expect(revalidated.bytes.length).toBe(0);
  });
});

describe('security headers', () => {
  const checkHeaders = (r: Raw) => {
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toMatch(/default-src 'self'/);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    // Hash sources only: the chart library's and the paywall page's fixed <style> elements.
    expect(csp).toMatch(/style-src 'self'( 'sha256-[A-Za-z0-9+/=]+')+(;|$)/);
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect(r.headers['x-frame-options']).toBe('DENY');
  };

  it('on the landing page', async () => {
    const page = await get(`${direct.url}/`);
    expect(page.status).toBe(200);
    checkHeaders(page);
  });

  it('on the paywall page', async () => {
    const q = new URLSearchParams(SLICE).toString();
    const page = await get(`${direct.url}/api/v1/crypto/spread-candles?${q}`, {
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-encoding': 'gzip',
    });
    expect(page.status).toBe(402);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(decoded(page).toString('utf8')).toContain('id="x402-challenge"');
    checkHeaders(page);
  });
});

describe('signed paid answers', () => {
  it('are sent as signed when compression is offered: the digest is of the bytes received, the signature verifies', async () => {
    const url = `${direct.url}/api/v1/crypto/dislocations?${new URLSearchParams(SLICE).toString()}`;
    const unpaid = await get(url, { accept: 'application/json' });
    expect(unpaid.status, unpaid.bytes.toString('utf8')).toBe(402);
    const chain = direct.api.payments.settlement;
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(direct.payer));
    client.setSpendControls({
      allowedAssets: [{ network: chain.network, asset: chain.asset, maxAmountPerPayment: '200000' }],
    });
    const payment = await client.createPaymentPayload(
      decodePaymentRequiredHeader(String(unpaid.headers['payment-required'])),
    );
    const paid = await get(url, {
      accept: 'application/json',
      'accept-encoding': 'br, gzip',
      'payment-signature': encodePaymentSignatureHeader(payment),
    });
    expect(paid.status, paid.bytes.toString('utf8')).toBe(200);
    // Large enough to be compressed, were it not signed.
    expect(paid.bytes.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES);
    expect(paid.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(paid.bytes.toString('utf8'))).toMatchObject({ pair: 'ETH/USD' });
    const digest = `sha-256=:${createHash('sha256').update(paid.bytes).digest('base64')}:`;
    expect(paid.headers['content-digest']).toBe(digest);

    const keys = (await (await fetch(`${direct.url}/.well-known/http-message-signatures-directory`)).json()) as {
      keys: JsonWebKey[];
    };
    const publicKey = await webcrypto.subtle.importKey('jwk', keys.keys[0]!, { name: 'Ed25519' }, false, ['verify']);
    const fields = ['content-digest', 'payment-response', 'signature-input', 'signature'].map((name) => ({
      name,
      value: String(paid.headers[name]),
    }));
    await expect(
      verifySignature(
        {
          kind: 'response',
          status: 200,
          fields,
          request: { kind: 'request', method: 'GET', targetUri: url, fields: [] },
        },
        {
          policy: {
            algorithms: ['ed25519'],
            requiredComponents: [
              '@status',
              'content-digest',
              'payment-response',
              component('@method', { req: true }),
              component('@target-uri', { req: true }),
            ],
            requiredParameters: ['created', 'keyid', 'alg'],
          },
          resolveVerifier: () => sigWebcrypto.verifier(publicKey),
        },
      ),
    ).resolves.toBeDefined();
  }, 120_000);
});

describe('the dashboard rate limit, per client', () => {
  const poll = (api: PaidApi, forwardedFor?: string) =>
    get(`${api.url}/dashboard/api/overview`, forwardedFor ? { 'x-forwarded-for': forwardedFor } : {});

  it('HTTP_TRUST_PROXY=false: every client behind the proxy shares its address, one bucket', async () => {
    expect((await poll(direct, '203.0.113.1')).status).toBe(200);
    expect((await poll(direct, '203.0.113.1')).status).toBe(200);
    const other = await poll(direct, '203.0.113.2');
    expect(other.status).toBe(429);
    expect(Number(other.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(other.bytes.toString('utf8'))).toMatchObject({ status: 429, code: 'rate_limited' });
  });

  it("HTTP_TRUST_PROXY=true: each X-Forwarded-For client has its own bucket, keyed on the proxy's entry", async () => {
    expect((await poll(proxied, '203.0.113.1')).status).toBe(200);
    expect((await poll(proxied, '203.0.113.1')).status).toBe(200);
    const limited = await poll(proxied, '203.0.113.1');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another client behind the same proxy is not limited by the first.
    expect((await poll(proxied, '203.0.113.2')).status).toBe(200);
    // A client forging a leftmost entry is still the address the proxy appended.
    expect((await poll(proxied, '198.51.100.7, 203.0.113.1')).status).toBe(429);
  });
});

describe('the access log', () => {
  it('has the dashboard polls and assets at debug, the page and paid calls at info', async () => {
    // The tests above made these requests on `direct`; each is on its own line.
    const levelsOf = (path: string) => [...new Set(accessLines.filter((l) => l.path === path).map((l) => l.level))];
    expect(levelsOf('/dashboard/api/overview')).toEqual([20]); // the polls, 200 and 429
    expect(levelsOf('/dashboard/assets/lightweight-charts.js')).toEqual([20]);
    expect(levelsOf('/')).toEqual([30]);
    expect(levelsOf('/api/v1/crypto/dislocations')).toEqual([30]); // the 402 and the paid 200
  });
});
