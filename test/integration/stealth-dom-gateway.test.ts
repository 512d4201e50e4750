/**
 * stealth-dom and image-ocr-shrink end to end through the gateway: the real
 * api role (startProcess, ROLE=api, SETTLEMENT=devchain, in-process queue)
 * with the two processors registered on its queue as the worker role would,
 * paid by the real @x402/fetch client. A page fetch and an OCR settle
 * exactly the catalogue price; a URL the SSRF policy refuses (the job
 * answers 400 after the payment was verified) and an upstream 503 are
 * answered without any settlement.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader } from '@x402/fetch';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { RunningApi } from '../../api/role.js';
import { ImageOcrShrinkOutput } from '../../jobs/image-ocr-shrink/sku.js';
import { StealthDomOutput } from '../../jobs/stealth-dom/sku.js';
import type { Config } from '../../core/config.js';
import type { RunningProcess } from '../../roles/process.js';
import { startPaidApi } from '../helpers/paid-api.js';
import { imageOcrProcessor } from '../../jobs/image-ocr-shrink/processor.js';
import { skuJobName, type SkuProcessor } from '../../jobs/sku-processor.js';
import { stealthDomProcessor } from '../../jobs/stealth-dom/processor.js';
import { testLogger } from '../helpers/config.js';
import { renderTableDocument } from '../helpers/web-fixtures-images.js';
import { loopbackOnlyNetwork, startWebFixtures, type WebFixtures } from '../helpers/web-fixtures.js';
import { payingFetch as payingFetchWith } from '../helpers/x402-client.js';

const logger = testLogger();
let proc: RunningProcess;
let api: RunningApi;
let site: WebFixtures;
let dataDir: string;
let payer: PrivateKeyAccount;
let url: string;
const processors: SkuProcessor[] = [];

const balance = async () => api.payments.settlement.devChain!.balanceOf(payer.address);
const price = (id: string) => BigInt(api.catalogue.byId(id)!.priceAtomic);
const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

const payingFetch = () => payingFetchWith(payer, api.payments.settlement);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'stealth-dom-gateway-'));
  site = await startWebFixtures();
  const invoice = await renderTableDocument();
  site.route('/scan/invoice.png', (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': invoice.image.length });
    res.end(invoice.image);
  });
  let config: Config;
  ({ config, proc, api, url, payer } = await startPaidApi(
    dataDir,
    { STORE: 'duckdb', DUCKDB_PATH: ':memory:', FETCH_ALLOW_LOOPBACK: 'true' },
    logger,
  ));
  // What the worker role does for each registered SKU, with the test network seam.
  const deps = { config, logger, pairs: [] as never };
  const stealth = await stealthDomProcessor({ connect: loopbackOnlyNetwork() })(deps);
  const ocr = await imageOcrProcessor({ fetcher: { connect: loopbackOnlyNetwork() } })(deps);
  processors.push(stealth as SkuProcessor, ocr as SkuProcessor);
  await proc.ctx.queue!.process(skuJobName('stealth-dom'), stealth.handle);
  await proc.ctx.queue!.process(skuJobName('image-ocr-shrink'), ocr.handle);
});

afterAll(async () => {
  await proc?.shutdown('test done');
  for (const p of processors) await p.close?.();
  await site?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('paid calls', () => {
  it('both SKUs are served: an unpaid call gets the 402 challenge at the catalogue price', async () => {
    for (const [path, id, body] of [
      ['/api/v1/stealth-dom', 'stealth-dom', { url: site.url('/article') }],
      ['/api/v1/image-ocr-shrink', 'image-ocr-shrink', { imageUrl: site.url('/scan/invoice.png') }],
    ] as const) {
      const res = await fetch(`${url}${path}`, post(body));
      expect(res.status, path).toBe(402);
      const challenge = JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString()) as {
        accepts: { amount: string }[];
      };
      expect(challenge.accepts[0]!.amount).toBe(price(id).toString());
    }
  });

  it('stealth-dom: 200 with the article as Markdown, settled for exactly the price', async () => {
    const before = await balance();
    const { fetch: pay, sent } = payingFetch();
    const res = await pay(`${url}/api/v1/stealth-dom`, post({ url: site.url('/article'), format: 'markdown' }));
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(StealthDomOutput.safeParse(body).success).toBe(true);
    expect(body).toMatchObject({ success: true, status: 200, format: 'markdown' });
    expect(String(body.content)).toContain('## Dredging around the clock');
    expect(sent).toHaveLength(1);
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!)).toMatchObject({ success: true });
    expect(before - (await balance())).toBe(price('stealth-dom'));
  });

  it('image-ocr-shrink: 200 with the table, settled for exactly the price', async () => {
    const before = await balance();
    const { fetch: pay } = payingFetch();
    const res = await pay(`${url}/api/v1/image-ocr-shrink`, post({ imageUrl: site.url('/scan/invoice.png') }));
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(ImageOcrShrinkOutput.safeParse(body).success).toBe(true);
    expect(String(body.extractedText)).toContain('| Coffee beans | 12 | 3.50 | 42.00 |');
    expect(before - (await balance())).toBe(price('image-ocr-shrink'));
  });
});

describe('refused after payment verification: never settled', () => {
  it.each([
    ['a redirect to a private address', { url: '' }, 400, 'url_not_allowed'],
    ['a redirect to the metadata service', { url: '' }, 400, 'url_not_allowed'],
    ['an upstream 503', { url: '/status/503' }, 502, 'upstream_error'],
    ['a PDF', { url: '/report.pdf' }, 415, 'unsupported_content_type'],
  ] as const)('stealth-dom, %s', async (label, input, status, code) => {
    const target =
      label === 'a redirect to the metadata service'
        ? site.url(`/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`)
        : label === 'a redirect to a private address'
          ? site.url(`/redirect?to=${encodeURIComponent('http://10.0.0.1/admin')}`)
          : input.url.startsWith('/')
            ? site.url(input.url)
            : input.url;
    const before = await balance();
    const { fetch: pay, sent } = payingFetch();
    const res = await pay(`${url}/api/v1/stealth-dom`, post({ url: target }));
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(body.code).toBe(code);
    expect(sent, 'the client paid (signed) once').toHaveLength(1);
    expect(res.headers.get('payment-response')).toBeNull();
    expect(await balance(), 'nothing was settled').toBe(before);
  });
});

describe('refused before any challenge: never signed', () => {
  it('a literal private address is a 400 on the input, before the 402', async () => {
    const { fetch: pay, sent } = payingFetch();
    const res = await pay(`${url}/api/v1/stealth-dom`, post({ url: 'http://10.0.0.1/admin' }));
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_parameter', field: 'url' });
    expect(sent, 'no payment was asked for, none was signed').toHaveLength(0);
  });
});
