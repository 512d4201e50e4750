/**
 * image-ocr-shrink: fetch an image through the SSRF-safe fetcher (image media
 * types only, OCR_MAX_IMAGE_BYTES, OCR_FETCH_TIMEOUT_MS), check what it is
 * from its own bytes (image-size: format and dimensions from the header, so
 * a decompression bomb is refused before any decoding), OCR it with
 * tesseract.js fully offline, and return Markdown with tables rebuilt from
 * the word boxes (layout.ts). See jobs/image-ocr-shrink/README.md.
 *
 * Offline: the English LSTM model comes from @tesseract.js-data/eng
 * (`langPath` is that package's folder, read from disk), the wasm core from
 * tesseract.js-core; nothing is downloaded. The factory starts a scheduler
 * with OCR_WORKERS warm workers (each holds the model, ~100 MB); `close()`
 * terminates them.
 */
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { imageSize } from 'image-size';
import Tesseract from 'tesseract.js';
import type { ImageOcrShrinkRequest } from './sku.js';
import { JobError } from '../../core/queue/queue.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { createSafeFetch, fetcherSettingsFromConfig, type FetcherSettings } from '../web-fetch/safe-fetch.js';
import { layoutToMarkdown, type OcrLine } from './layout.js';

export interface ImageOcrResult {
  success: boolean;
  extractedText: string;
  characterCount: number;
  tokensSavedEstimate: number;
  /** Final image URL after redirects. */
  source: string;
}

/** Media types fetched; `application/octet-stream` too (object stores serve images so), the bytes decide. */
const IMAGE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/jpg',
  'image/pjpeg',
  'image/bmp',
  'image/x-bmp',
  'image/x-ms-bmp',
  'image/webp',
  'image/x-portable-bitmap',
  'image/x-portable-graymap',
  'image/x-portable-pixmap',
  'image/x-portable-anymap',
  'application/octet-stream',
]);
/** Formats tesseract.js (leptonica in wasm) decodes, as image-size names them. */
const DECODABLE = new Set(['png', 'jpg', 'bmp', 'webp', 'pnm']);
const ACCEPT = 'image/png,image/jpeg,image/webp,image/bmp;q=0.9,image/*;q=0.5';

/**
 * Tokens a vision model would have spent on the image, minus the tokens of the text that replaces it.
 * Image: OpenAI's published high-detail rule (fit in 2048x2048, shortest side down to 768, 170 tokens per
 * 512 px tile + 85). Text: 4 characters per token. Never negative.
 */
export function tokensSavedEstimate(width: number, height: number, characters: number): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shrink = Math.min(1, 768 / Math.min(w, h));
  w *= shrink;
  h *= shrink;
  const imageTokens = 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
  return Math.max(0, imageTokens - Math.ceil(characters / 4));
}

function linesOf(page: Tesseract.Page): OcrLine[] {
  const lines: OcrLine[] = [];
  let paragraph = 0;
  for (const block of page.blocks ?? []) {
    for (const para of block.paragraphs) {
      for (const line of para.lines) {
        lines.push({
          ...line.bbox,
          paragraph,
          words: line.words.map((w) => ({ text: w.text, confidence: w.confidence, ...w.bbox })),
        });
      }
      paragraph++;
    }
  }
  return lines;
}

export interface OcrOptions {
  fetcher?: Partial<FetcherSettings>;
}

export function imageOcrProcessor(options: OcrOptions = {}): ProcessorFactory<ImageOcrShrinkRequest, ImageOcrResult> {
  return async ({ config, logger }) => {
    const fetch = createSafeFetch({ ...fetcherSettingsFromConfig(config), ...options.fetcher });
    const require = createRequire(import.meta.url);
    const langPath = join(dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
    const cachePath = resolve(config.DATA_DIR, 'tesseract-cache');
    await mkdir(cachePath, { recursive: true });
    const scheduler = Tesseract.createScheduler();
    const t0 = performance.now();
    const workers = await Promise.all(
      Array.from({ length: config.OCR_WORKERS }, () =>
        Tesseract.createWorker('eng', Tesseract.OEM.LSTM_ONLY, {
          langPath,
          cachePath,
          gzip: true,
          logger: () => {},
          errorHandler: (err: unknown) => logger.warn({ err }, 'image-ocr: worker error'),
        }),
      ),
    );
    for (const worker of workers) scheduler.addWorker(worker);
    logger.debug({ workers: workers.length, ms: Math.round(performance.now() - t0) }, 'image-ocr: workers ready');

    return {
      close: async () => {
        await scheduler.terminate();
      },
      handle: async (input, ctx) => {
        const image = await fetch({
          url: input.imageUrl,
          field: 'imageUrl',
          timeoutMs: config.OCR_FETCH_TIMEOUT_MS,
          maxBytes: config.OCR_MAX_IMAGE_BYTES,
          userAgent: config.FETCH_USER_AGENT,
          accept: ACCEPT,
          acceptMediaType: (type) => type !== null && IMAGE_TYPES.has(type),
          acceptedDescription:
            'image/png, image/jpeg, image/webp, image/bmp, image/x-portable-anymap (or application/octet-stream holding one)',
          signal: ctx.signal,
          rejectStatus: (status, _text, url) => {
            if (status >= 200 && status <= 299) return undefined;
            // A 5xx/408/429 is the site failing for now (502); any other status means there is no image at that URL (422).
            const transient = status >= 500 || status === 408 || status === 429;
            return new JobError(
              transient ? 'upstream_error' : 'image_unavailable',
              `the image URL answered ${status}`,
              transient ? 502 : 422,
              {
                field: 'imageUrl',
                reason: 'upstream_status',
                upstream_status: status,
                url: url.href,
              },
            );
          },
        });
        let size: { width: number; height: number; type?: string };
        try {
          size = imageSize(image.body);
        } catch {
          throw new JobError('unsupported_content_type', 'the URL did not return a recognisable image', 415, {
            field: 'imageUrl',
            content_type: image.mediaType,
          });
        }
        if (!size.type || !DECODABLE.has(size.type)) {
          throw new JobError(
            'unsupported_content_type',
            `image format ${size.type ?? 'unknown'} is not supported; use PNG, JPEG, WebP, BMP or PNM`,
            415,
            {
              field: 'imageUrl',
              content_type: image.mediaType,
              format: size.type ?? null,
            },
          );
        }
        if (size.width * size.height > config.OCR_MAX_PIXELS) {
          throw new JobError(
            'image_too_large',
            `the image has ${size.width}x${size.height} pixels; at most ${config.OCR_MAX_PIXELS} are read`,
            413,
            {
              field: 'imageUrl',
              width: size.width,
              height: size.height,
              limit_pixels: config.OCR_MAX_PIXELS,
            },
          );
        }
        const started = performance.now();
        const job = scheduler.addJob('recognize', image.body, {}, { blocks: true, text: true });
        job.catch(() => {}); // the race below observes it; this avoids an unhandled rejection after an abort
        // A running recognition cannot be interrupted; on abort the caller stops waiting and the worker finishes it.
        const aborted = new Promise<never>((_, reject) => {
          const onAbort = () =>
            reject(
              new JobError('upstream_timeout', 'OCR abandoned: the caller stopped waiting', 504, { reason: 'aborted' }),
            );
          if (ctx.signal.aborted) onAbort();
          else ctx.signal.addEventListener('abort', onAbort, { once: true });
        });
        let page: Tesseract.Page;
        try {
          page = (await Promise.race([job, aborted])).data;
        } catch (err) {
          if (err instanceof JobError) throw err;
          const message = String((err as Error)?.message ?? err);
          if (/read image|image file|pix/i.test(message)) {
            throw new JobError('image_unreadable', 'the image could not be decoded', 422, {
              field: 'imageUrl',
              format: size.type,
            });
          }
          throw err;
        }
        const { markdown, tables } = layoutToMarkdown(linesOf(page));
        const extractedText = markdown || page.text.trim();
        logger.debug(
          {
            bytes: image.body.length,
            width: size.width,
            height: size.height,
            tables,
            fetch_ms: Math.round(image.elapsedMs),
            ocr_ms: Math.round(performance.now() - started),
          },
          'image-ocr: recognised',
        );
        return {
          success: true,
          extractedText,
          characterCount: extractedText.length,
          tokensSavedEstimate: tokensSavedEstimate(size.width, size.height, extractedText.length),
          source: image.url.href,
        };
      },
    };
  };
}

export const createImageOcrProcessor: ProcessorFactory<ImageOcrShrinkRequest, ImageOcrResult> = (deps) =>
  imageOcrProcessor()(deps);
