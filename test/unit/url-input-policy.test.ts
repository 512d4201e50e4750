/**
 * URL inputs refused before any payment challenge: stealth-dom `url` and
 * image-ocr-shrink `imageUrl` run the fetcher's synchronous policy
 * (jobs/web-fetch/address-policy.ts `staticUrlRefusal`) in their input
 * schemas. Literal non-public addresses in every spelling the URL parser
 * normalises, credentials, bad ports, internal and metadata names are schema
 * errors; names (which need DNS) and a plain dotted-quad loopback (judged by
 * the worker with FETCH_ALLOW_LOOPBACK) pass. Then through the real Koa app
 * (createApp, the router's zod rendering) with a gate that records whether it
 * was reached: a refused URL is a 400 `invalid_parameter` naming the field
 * and the gate (the 402 challenge) is never reached; an admitted one reaches
 * the gate.
 */
import type { Middleware } from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { ImageOcrShrinkInput } from '../../jobs/image-ocr-shrink/sku.js';
import { StealthDomInput } from '../../jobs/stealth-dom/sku.js';
import { SERVICE_VERSION } from '../../api/discovery/context.js';
import { listen, type HttpServer } from '../../api/http-server.js';
import { loadConfig } from '../../core/config.js';
import { HealthRegistry } from '../../core/health.js';
import { loadPairs } from '../../core/markets/pairs.js';
import type { Store } from '../../core/store/store.js';
import { checkUrl, staticUrlRefusal } from '../../jobs/web-fetch/address-policy.js';
import { testLogger } from '../helpers/config.js';
import { TEST_PAYMENT_INFO } from '../helpers/x402-client.js';

/** [URL, the policy's reason]: what no configuration lets the worker fetch. */
const REFUSED: [string, string][] = [
  ['http://10.0.0.1/', 'private'],
  ['http://192.168.1.1:8080/admin', 'private'],
  ['http://172.16.0.1/', 'private'],
  ['http://167772161/', 'private'], // 10.0.0.1 as one decimal number
  ['http://2130706433/', 'loopback'], // 127.0.0.1 as one decimal number
  ['http://0x7f.1/', 'loopback'],
  ['http://0177.0.0.1/', 'loopback'],
  ['http://127.1/', 'loopback'],
  ['http://127.000.000.001/', 'loopback'],
  ['http://[::1]/', 'loopback'],
  ['http://localhost:3000/', 'loopback'],
  ['http://[::ffff:127.0.0.1]/', 'ipv4_mapped'],
  ['http://169.254.169.254/latest/meta-data/', 'cloud_metadata'],
  ['http://0xa9.0xfe.0xa9.0xfe/', 'cloud_metadata'],
  ['http://[fd00:ec2::254]/latest/meta-data/', 'cloud_metadata'],
  ['http://metadata.google.internal/computeMetadata/v1/', 'cloud_metadata'],
  ['http://100.64.0.1/', 'carrier_grade_nat'],
  ['http://0.0.0.0/', 'unspecified'],
  ['http://224.0.0.1/', 'multicast'],
  ['https://[fe80::1]/', 'link_local'],
  ['http://[fc00::1]/', 'unique_local'],
  ['http://[64:ff9b::a00:1]/', 'nat64_embedded'], // NAT64 of 10.0.0.1
  ['http://192.0.2.10/', 'documentation'],
  ['http://user:pw@example.com/', 'credentials_in_url'],
  ['http://example.com:25/', 'port_not_allowed'],
  ['http://intranet/', 'internal_hostname'],
  ['http://printer.local/', 'internal_hostname'],
];

/** Public URLs, names (resolved and vetted by the worker) and plain dotted-quad loopback (judged by the worker's config). */
const ADMITTED = [
  'https://example.com/page?x=1#top',
  'http://93.184.215.14/',
  'https://[2606:4700:4700::1111]/',
  'http://169.254.169.254.nip.io/', // a name: the worker resolves it and refuses its address
  'http://127.0.0.1:8080/article',
  'https://127.0.0.1/',
  'HTTP://127.0.0.1',
];

const schemas = [
  ['url', (v: string) => StealthDomInput.safeParse({ url: v })],
  ['imageUrl', (v: string) => ImageOcrShrinkInput.safeParse({ imageUrl: v })],
] as const;

describe('staticUrlRefusal (the fetcher policy without DNS or config)', () => {
  it.each(REFUSED)('%s -> %s', (url, reason) => {
    expect(staticUrlRefusal(url)?.reason).toBe(reason);
  });

  it.each(ADMITTED)('%s passes', (url) => {
    expect(staticUrlRefusal(url)).toBeNull();
  });

  it('refuses nothing the worker would fetch with loopback allowed (it is at most as strict as checkUrl)', () => {
    for (const [url] of REFUSED) {
      if (checkUrl(url, { allowLoopback: true }).ok) {
        // Only loopback spellings other than a plain dotted quad differ: the worker would fetch them in tests only.
        expect(staticUrlRefusal(url)?.reason, url).toBe('loopback');
      }
    }
  });
});

describe('input schemas', () => {
  for (const [field, parse] of schemas) {
    it(`${field}: every literal non-public URL is a schema error on the field, with the reason`, () => {
      for (const [url, reason] of REFUSED) {
        const result = parse(url);
        expect(result.success, url).toBe(false);
        const issue = result.error!.issues[0]!;
        expect(issue.path, url).toEqual([field]);
        expect(issue.message, url).toContain(`(${reason})`);
        expect(issue.message, url).toMatch(/^must be a public http\(s\) URL: /);
      }
    });

    it(`${field}: public URLs, names and a dotted-quad loopback pass`, () => {
      for (const url of ADMITTED) expect(parse(url).success, url).toBe(true);
    });

    it(`${field}: other schemes and garbage keep their own single message`, () => {
      for (const url of ['ftp://example.com/x', 'file:///etc/passwd', 'not a url', 'javascript:alert(1)']) {
        const result = parse(url);
        expect(result.success, url).toBe(false);
        expect(
          result.error!.issues.map((i) => i.message),
          url,
        ).toEqual(['must be an http(s) URL']);
      }
    });
  }
});

describe('through the router: 400 before the payment challenge', () => {
  const payment = TEST_PAYMENT_INFO;
  let http: HttpServer;
  let gateCalls = 0;
  const gate: Middleware = async (ctx) => {
    gateCalls++;
    ctx.status = 402;
    ctx.body = { code: 'payment_required' };
  };

  beforeAll(async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', NODE_ENV: 'test' });
    const catalogue = buildCatalogue({ config, pairs: loadPairs() });
    const app = createApp({
      logger: testLogger(),
      health: new HealthRegistry({ version: SERVICE_VERSION, role: 'api' }),
      gateway: {
        runtime: { store: {} as Store, config, pairs: loadPairs(), catalogue, now: () => Date.now() },
        gate,
        payment,
      },
    });
    http = await listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
  });

  afterAll(async () => {
    await http?.close();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${http.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it.each([
    ['/api/v1/stealth-dom', 'url', 'http://10.0.0.1/admin'],
    ['/api/v1/stealth-dom', 'url', 'http://2130706433/'],
    ['/api/v1/stealth-dom', 'url', 'http://[::1]/'],
    ['/api/v1/stealth-dom', 'url', 'http://user:pw@example.com/'],
    ['/api/v1/image-ocr-shrink', 'imageUrl', 'http://169.254.169.254/latest/meta-data/'],
    ['/api/v1/image-ocr-shrink', 'imageUrl', 'http://[::ffff:10.0.0.1]/x.png'],
  ])('%s %s=%s: 400 invalid_parameter, no challenge', async (path, field, value) => {
    const before = gateCalls;
    const res = await post(path, { [field]: value });
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.headers.get('payment-required')).toBeNull();
    expect(body).toMatchObject({ code: 'invalid_parameter', field });
    expect(String(body.detail)).toMatch(new RegExp(`^${field}: must be a public http\\(s\\) URL: `));
    expect(gateCalls).toBe(before);
  });

  it('an admitted URL (a name) reaches the payment gate; a dotted-quad loopback is a 400 too outside the test allowance', async () => {
    const before = gateCalls;
    expect((await post('/api/v1/stealth-dom', { url: 'https://example.com/' })).status).toBe(402);
    for (const [path, field, value] of [
      ['/api/v1/image-ocr-shrink', 'imageUrl', 'http://127.0.0.1:8080/scan.png'],
      ['/api/v1/stealth-dom', 'url', 'http://127.0.0.1:3000/'],
    ] as const) {
      const res = await post(path, { [field]: value });
      expect(res.status).toBe(400);
      expect(res.headers.get('payment-required')).toBeNull();
      expect(await res.json()).toMatchObject({
        code: 'invalid_parameter',
        field,
        detail: expect.stringMatching(/must be a public http\(s\) URL: .*\(loopback\)$/),
      });
    }
    expect(gateCalls).toBe(before + 1);
  });
});
