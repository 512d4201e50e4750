/**
 * image-ocr-shrink through the queue port (in-process adapter) with the real
 * tesseract.js worker pool built by the factory, offline (the language data
 * is read from @tesseract.js-data/eng; this machine has no route to a CDN).
 * Images are rendered in the test (pureimage + DejaVu Sans) and served by the
 * loopback site: an invoice with a four-column table (PNG, JPEG, and PNG as
 * application/octet-stream), prose without a table, a PNG header announcing
 * 400 megapixels, an HTML page posing as PNG, an SVG. Every 200 body is
 * checked against ImageOcrShrinkOutput. Latency is a bench figure
 * (npm run bench:utility), not a test.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageOcrShrinkOutput, type ImageOcrShrinkRequest } from '../../jobs/image-ocr-shrink/sku.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createInProcessQueue } from '../../core/queue/inprocess-queue.js';
import type { JobError } from '../../core/queue/queue.js';
import { type JobQueue } from '../../core/queue/queue.js';
import { imageOcrProcessor, type ImageOcrResult } from '../../jobs/image-ocr-shrink/processor.js';
import { skuJobName, type SkuProcessor } from '../../jobs/sku-processor.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { INVOICE, pngHeaderOnly, renderProse, renderTableDocument, TIMETABLE } from '../helpers/web-fixtures-images.js';
import { loopbackOnlyNetwork, startWebFixtures, type WebFixtures } from '../helpers/web-fixtures.js';
import { jobErrorOf } from '../helpers/job-error.js';

const logger = testLogger();
const JOB = skuJobName('image-ocr-shrink');
let site: WebFixtures;
let queue: JobQueue;
let processor: SkuProcessor<ImageOcrShrinkRequest, ImageOcrResult>;
let dataDir: string;
let invoice: { image: Buffer; width: number; height: number };

/** OCR on a busy 2-core machine can take several times its quiet figure: deadlines and test timeouts leave room. */
const DEADLINE_MS = 90_000;
const OCR_TEST = { timeout: 240_000 };

async function call(imageUrl: string): Promise<ImageOcrResult> {
  const result = await queue.run<ImageOcrShrinkRequest, ImageOcrResult>(JOB, { imageUrl }, { deadlineMs: DEADLINE_MS });
  const parsed = ImageOcrShrinkOutput.safeParse(result);
  if (!parsed.success) throw new Error(`output schema: ${JSON.stringify(parsed.error.issues)}`);
  expect(result.characterCount).toBe(result.extractedText.length);
  return result;
}

async function refused(imageUrl: string): Promise<JobError> {
  return jobErrorOf(queue.run(JOB, { imageUrl }, { deadlineMs: DEADLINE_MS }));
}

/** The Markdown table lines of a text: rows of cells (the `| --- |` rule excluded). */
function tableRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|( ?-+ ?\|)+$/.test(l))
    .map((l) =>
      l
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
}

function expectInvoiceTable(markdown: string) {
  const expected = [INVOICE.header, ...INVOICE.rows];
  // A header, a rule, then the body rows: a well-formed Markdown table.
  const lines = markdown.split('\n');
  const headerAt = lines.findIndex((l) => l.startsWith('| Item'));
  expect(headerAt, markdown).toBeGreaterThanOrEqual(0);
  expect(lines[headerAt + 1]).toBe('| --- | --- | --- | --- |');
  const rows = tableRows(markdown);
  expect(rows, markdown).toHaveLength(expected.length);
  for (const row of rows) expect(row, markdown).toHaveLength(4);
  const cells = expected.flat();
  const matched = rows.flat().filter((cell, i) => cell === cells[i]).length;
  expect(matched / cells.length, markdown).toBeGreaterThanOrEqual(0.95);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'image-ocr-'));
  site = await startWebFixtures();
  invoice = await renderTableDocument();
  const jpeg = await renderTableDocument(INVOICE, 'jpeg');
  const timetable = await renderTableDocument(TIMETABLE);
  const prose = await renderProse([
    'The harbour master opened the lock gates at dawn,',
    'and the first barges moved slowly into the basin.',
    'By noon the quay was crowded with containers.',
  ]);
  const serve = (path: string, type: string, body: Buffer) =>
    site.route(path, (_req, res) => {
      res.writeHead(200, { 'content-type': type, 'content-length': body.length });
      res.end(body);
    });
  serve('/scan/invoice.png', 'image/png', invoice.image);
  serve('/scan/invoice.jpg', 'image/jpeg', jpeg.image);
  serve('/scan/invoice.bin', 'application/octet-stream', invoice.image);
  serve('/scan/prose.png', 'image/png', prose);
  serve('/scan/timetable.png', 'image/png', timetable.image);
  serve('/scan/bomb.png', 'image/png', pngHeaderOnly(20_000, 20_000));
  serve('/scan/corrupt.png', 'image/png', pngHeaderOnly(40, 40));
  serve('/scan/fake.png', 'image/png', Buffer.from('<!DOCTYPE html><html><body>not an image</body></html>'));
  serve(
    '/scan/logo.svg',
    'image/svg+xml',
    Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><text>hi</text></svg>'),
  );
  serve('/scan/huge.png', 'image/png', Buffer.concat([invoice.image, Buffer.alloc(2 * 1024 * 1024)]));

  const config = testConfig({
    FETCH_ALLOW_LOOPBACK: 'true',
    DATA_DIR: dataDir,
    OCR_WORKERS: '1',
    OCR_MAX_IMAGE_BYTES: String(1024 * 1024),
  });
  queue = await createInProcessQueue({ concurrency: 2, maxAttempts: 1, logger });
  processor = await imageOcrProcessor({ fetcher: { connect: loopbackOnlyNetwork() } })({
    config,
    logger,
    pairs: loadPairs(config.PAIRS_FILE),
  });
  await queue.process(JOB, processor.handle, { concurrency: 2 });
});

afterAll(async () => {
  await queue?.close();
  await processor?.close?.();
  await site?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('OCR of a rendered invoice', OCR_TEST, () => {
  it('PNG: the prose as text and the table as a Markdown table', async () => {
    const r = await call(site.url('/scan/invoice.png'));
    expect(r.success).toBe(true);
    expect(r.source).toBe(site.url('/scan/invoice.png'));
    const text = r.extractedText;
    expect(text.split('\n', 1)[0]).toBe(INVOICE.title);
    expect(text).toContain(INVOICE.intro);
    expect(text).toContain(INVOICE.footer);
    expectInvoiceTable(text);
    // Reading order: title, intro, table, footer.
    expect(text.indexOf(INVOICE.intro)).toBeLessThan(text.indexOf('| Item'));
    expect(text.indexOf('| Sugar cubes')).toBeLessThan(text.indexOf(INVOICE.footer));
    // 1000x500 px: 2 tiles of 512 px at high detail = 85 + 2 x 170 tokens, minus the text's tokens (4 chars each).
    expect(invoice).toMatchObject({ width: 1000, height: 500 });
    expect(r.tokensSavedEstimate).toBe(425 - Math.ceil(r.characterCount / 4));
  });

  it('JPEG, and a PNG served as application/octet-stream, give the same table', async () => {
    for (const path of ['/scan/invoice.jpg', '/scan/invoice.bin']) {
      const r = await call(site.url(path));
      expectInvoiceTable(r.extractedText);
    }
  });

  it('right-aligned numeric columns and an empty cell', async () => {
    const r = await call(site.url('/scan/timetable.png'));
    expect(r.extractedText).toContain(
      [
        '| Vessel | Departs | Berths |',
        '| --- | --- | --- |',
        '| Stena Britannica | 14:15 | 212 |',
        '| Stena Hollandica | 22:00 |  |',
        '| Caroline Russ | 09:30 | 48 |',
      ].join('\n'),
    );
    expect(r.extractedText).toContain(TIMETABLE.footer);
  });

  it('prose alone is not turned into a table', async () => {
    const r = await call(site.url('/scan/prose.png'));
    expect(r.extractedText).not.toContain('|');
    expect(r.extractedText).toContain('The harbour master opened the lock gates at dawn,');
    expect(r.extractedText.split('\n')).toHaveLength(3);
  });

  it('the language data came from the npm package into the cache folder under DATA_DIR', async () => {
    expect(await readdir(join(dataDir, 'tesseract-cache'))).toContain('eng.traineddata');
  });
});

describe('refusals', OCR_TEST, () => {
  it('a PNG header announcing 400 megapixels is refused before decoding (413)', async () => {
    const t0 = performance.now();
    const err = await refused(site.url('/scan/bomb.png'));
    expect(err).toMatchObject({ code: 'image_too_large', status: 413 });
    expect(err.details).toMatchObject({ field: 'imageUrl', width: 20_000, height: 20_000 });
    // Decoding 400 megapixels would take far longer (and 1.6 GB); the bound leaves a busy machine room.
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('a corrupt image is a 422 image_unreadable, and the worker pool keeps working', async () => {
    const err = await refused(site.url('/scan/corrupt.png'));
    expect(err).toMatchObject({ code: 'image_unreadable', status: 422 });
    expect((await call(site.url('/scan/prose.png'))).extractedText).toContain('lock gates');
  });

  it('more bytes than OCR_MAX_IMAGE_BYTES: 413 upstream_too_large', async () => {
    const err = await refused(site.url('/scan/huge.png'));
    expect(err).toMatchObject({ code: 'upstream_too_large', status: 413 });
    expect(err.details.field).toBe('imageUrl');
  });

  it('non-image types (HTML, PDF, SVG) and an HTML page labelled image/png: 415', async () => {
    for (const path of ['/article', '/report.pdf', '/scan/logo.svg', '/scan/fake.png']) {
      const err = await refused(site.url(path));
      expect(err, path).toMatchObject({ code: 'unsupported_content_type', status: 415 });
      expect(err.details.field, path).toBe('imageUrl');
    }
  });

  it('a redirect to the metadata service is refused on the imageUrl field', async () => {
    const err = await refused(
      site.url(`/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`),
    );
    expect(err).toMatchObject({ code: 'url_not_allowed', status: 400 });
    expect(err.details).toMatchObject({ field: 'imageUrl', reason: 'cloud_metadata', hop: 1 });
  });

  it('a missing image is a 422, an upstream 503 a 502', async () => {
    expect(await refused(site.url('/scan/missing.png'))).toMatchObject({ code: 'image_unavailable', status: 422 });
    expect(await refused(site.url('/status/503'))).toMatchObject({ code: 'upstream_error', status: 502 });
  });
});
