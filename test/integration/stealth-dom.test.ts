/**
 * stealth-dom through the queue port (in-process adapter: the same JSON
 * boundary as BullMQ) against a real web site on loopback. The processor is
 * built by its factory from the test config (FETCH_ALLOW_LOOPBACK=true, only
 * possible under NODE_ENV=test) on a loopback-only network. Every 200 body
 * is checked against the catalogue's StealthDomOutput schema. Latency is a
 * bench figure (npm run bench:utility), not a test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StealthDomOutput, type StealthDomRequest } from '../../jobs/stealth-dom/sku.js';
import { createInProcessQueue } from '../../core/queue/inprocess-queue.js';
import type { JobError } from '../../core/queue/queue.js';
import { type JobQueue } from '../../core/queue/queue.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { skuJobName, type SkuProcessor } from '../../jobs/sku-processor.js';
import { stealthDomProcessor, type StealthDomResult } from '../../jobs/stealth-dom/processor.js';
import { testConfig, testLogger } from '../helpers/config.js';
import {
  ARTICLE_TITLE,
  articleHtml,
  loopbackOnlyNetwork,
  startWebFixtures,
  type WebFixtures,
} from '../helpers/web-fixtures.js';
import { jobErrorOf } from '../helpers/job-error.js';

const logger = testLogger();
let site: WebFixtures;
let queue: JobQueue;
let processor: SkuProcessor<StealthDomRequest, StealthDomResult>;
const JOB = skuJobName('stealth-dom');

const config = testConfig({
  FETCH_ALLOW_LOOPBACK: 'true',
  FETCH_MAX_TIMEOUT_MS: '10000',
  FETCH_MAX_BODY_BYTES: String(2 * 1024 * 1024),
});

async function call(input: StealthDomRequest, deadlineMs = 15_000): Promise<StealthDomResult> {
  const result = await queue.run<StealthDomRequest, StealthDomResult>(JOB, input, { deadlineMs });
  const parsed = StealthDomOutput.safeParse(result);
  if (!parsed.success) throw new Error(`output schema: ${JSON.stringify(parsed.error.issues)}`);
  expect(result.content_length).toBe(result.content.length);
  return result;
}

async function refused(input: StealthDomRequest): Promise<JobError> {
  return jobErrorOf(queue.run(JOB, input, { deadlineMs: 15_000 }));
}

beforeAll(async () => {
  site = await startWebFixtures();
  queue = await createInProcessQueue({ concurrency: 4, maxAttempts: 1, logger });
  processor = await stealthDomProcessor({ connect: loopbackOnlyNetwork() })({
    config,
    logger,
    pairs: loadPairs(config.PAIRS_FILE),
  });
  await queue.process(JOB, processor.handle, { concurrency: 4 });
});

afterAll(async () => {
  await queue?.close();
  await processor?.close?.();
  await site?.close();
});

describe('formats', () => {
  it('markdown (the default): the article only, titled, with headings, lists, quotes and absolute links', async () => {
    const r = await call({ url: site.url('/article') });
    expect(r).toMatchObject({
      success: true,
      status: 200,
      format: 'markdown',
      truncated: false,
      source: site.url('/article'),
    });
    const md = r.content;
    expect(md.startsWith('# ')).toBe(true);
    expect(md.split('\n', 1)[0]).toContain('Dredging the Maasgeul');
    expect(md).toContain('## Dredging around the clock');
    expect(md).toContain('## What the work involves');
    expect(md).toMatch(/^- Surveying the channel floor with echo sounders$/m);
    expect(md).toMatch(/^> Every tide brings the sea floor/m);
    expect(md).toContain('438 million tonnes');
    expect(md).toContain(`[publish the surveyed depths](${site.origin}/ports/rotterdam/depths)`);
    for (const noise of [
      'Accept cookies',
      'Subscribe now',
      'Cheap container insurance',
      'Sail the fjords',
      'Most read',
      'Copyright 2025',
      'Sign me up',
      'gtag',
      'dataLayer',
      'Privacy policy',
    ]) {
      expect(md, noise).not.toContain(noise);
    }
  });

  it('text: the same main content without markup, one block per line', async () => {
    const r = await call({ url: site.url('/article'), format: 'text' });
    expect(r.format).toBe('text');
    expect(r.content.split('\n', 1)[0]).toContain('Dredging the Maasgeul');
    expect(r.content).toMatch(/^Dredging around the clock$/m);
    expect(r.content).toMatch(/^The Port of Rotterdam handled 438 million tonnes/m);
    expect(r.content).toContain('publish the surveyed depths every week');
    expect(r.content).toContain(
      '- Surveying the channel floor with echo sounders\n- Dredging shoals before they limit the draught\n',
    );
    expect(r.content).not.toMatch(/\]\(|^#|<\w+/m);
    expect(r.content).not.toContain('Accept cookies');
  });

  it('raw: the decoded source, byte for byte', async () => {
    const r = await call({ url: site.url('/article'), format: 'raw' });
    expect(articleHtml().length).toBeLessThan(10_000);
    expect(r.content).toBe(articleHtml());
  });

  it('content is cut at 10,000 characters and says so', async () => {
    for (const format of ['markdown', 'text', 'raw'] as const) {
      const r = await call({ url: site.url('/long-article'), format });
      expect(r.content.length, format).toBe(10_000);
      expect(r.truncated, format).toBe(true);
    }
  });

  it('charsets: from the header, and from <meta> when the header has none', async () => {
    for (const path of ['/latin1', '/meta-charset']) {
      const r = await call({ url: site.url(path), format: 'text' });
      expect(r.content, path).toContain('Zoë Léonard-Müller');
    }
  });

  it('gzip-encoded pages', async () => {
    const r = await call({ url: site.url('/article.gz') });
    expect(r.content).toContain('## Dredging around the clock');
  });

  it('plain text is returned as is; JSON becomes a fenced block in markdown', async () => {
    const text = await call({ url: site.url('/notes.txt') });
    expect(text.content).toBe(
      'Tide table notes\n\nHigh water 06:12, low water 12:31.\nPilot boarding at Maas Center.\n',
    );
    const json = await call({ url: site.url('/data.json') });
    expect(json.content).toBe(
      '```json\n{"port":"Rotterdam","tonnes":438000000,"channel":{"name":"Maasgeul","depth_m":24}}\n```',
    );
    const rawJson = await call({ url: site.url('/data.json'), format: 'raw' });
    expect(JSON.parse(rawJson.content)).toMatchObject({ port: 'Rotterdam' });
  });

  it('a page served without Content-Type is sniffed: HTML is read, binary is refused', async () => {
    const html = await call({ url: site.url('/untyped-html') });
    expect(html.content).toContain('## Dredging around the clock');
    const err = await refused({ url: site.url('/untyped-binary') });
    expect(err).toMatchObject({ code: 'unsupported_content_type', status: 415 });
  });
});

describe('refusals and upstream statuses', () => {
  it('binary types are refused with 415 (PDF, image)', async () => {
    for (const path of ['/report.pdf', '/photo.jpg']) {
      const err = await refused({ url: site.url(path) });
      expect(err, path).toMatchObject({ code: 'unsupported_content_type', status: 415 });
      expect(err.details.field).toBe('url');
    }
  });

  it('a 404 or 410 page is a result with that status (the page was served)', async () => {
    for (const status of [404, 410]) {
      const r = await call({ url: site.url(`/status/${status}`) });
      expect(r.status).toBe(status);
      expect(r.success).toBe(true);
      expect(r.content).toContain('could not be served');
    }
  });

  it('a 5xx, 408 or 429 is a 502 upstream_error with the upstream status (not charged)', async () => {
    for (const status of [500, 503, 408, 429]) {
      const err = await refused({ url: site.url(`/status/${status}`) });
      expect(err, String(status)).toMatchObject({ code: 'upstream_error', status: 502 });
      expect(err.details.upstream_status).toBe(status);
    }
  });

  it('a redirect to a private address is refused (400 url_not_allowed at hop 1)', async () => {
    const before = site.requests.length;
    const err = await refused({
      url: site.url(`/redirect?to=${encodeURIComponent('http://192.168.1.1/router/admin')}`),
    });
    expect(err).toMatchObject({ code: 'url_not_allowed', status: 400 });
    expect(err.details).toMatchObject({ field: 'url', reason: 'private', hop: 1 });
    expect(site.requests.length).toBe(before + 1);
  });

  it('the metadata service is refused even with the loopback allowance on', async () => {
    const err = await refused({ url: 'http://169.254.169.254/latest/meta-data/' });
    expect(err.details).toMatchObject({ reason: 'cloud_metadata' });
  });

  it('redirects are followed: source is the final URL', async () => {
    const r = await call({ url: site.url('/chain/3') });
    expect(r.source).toBe(site.url('/article'));
    expect(r.status).toBe(200);
  });

  it('a body over FETCH_MAX_BODY_BYTES is a 413', async () => {
    const err = await refused({ url: site.url('/big') });
    expect(err).toMatchObject({ code: 'upstream_too_large', status: 413 });
  });
});

describe('request options', () => {
  it('sends the custom userAgent, or the configured default', async () => {
    const custom = await call({ url: site.url('/echo-ua'), userAgent: 'AgentSmith/3.1 (+https://agents.example)' });
    expect(custom.content).toContain('AgentSmith/3.1 (+https://agents.example)');
    await call({ url: site.url('/echo-ua') });
    expect(site.requests.at(-1)!.headers['user-agent']).toBe(config.FETCH_USER_AGENT);
  });

  it('timeout: a slow site answers 504 upstream_timeout after the requested time', async () => {
    // The site answers after 30 s and the job deadline is 15 s: an answer within 10 s comes from the requested 300 ms.
    const t0 = performance.now();
    const err = await refused({ url: site.url('/slow-headers?ms=30000'), timeout: 300 });
    expect(err).toMatchObject({ code: 'upstream_timeout', status: 504 });
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('a timeout above FETCH_MAX_TIMEOUT_MS is a 400 on the timeout field', async () => {
    const err = await refused({ url: site.url('/article'), timeout: 20_000 });
    expect(err).toMatchObject({ code: 'timeout_too_large', status: 400 });
    expect(err.details).toMatchObject({ field: 'timeout', max: 10_000 });
  });
});

it('the article title constant matches the fixture', () => expect(articleHtml()).toContain(ARTICLE_TITLE));
