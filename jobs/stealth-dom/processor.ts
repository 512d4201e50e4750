/**
 * stealth-dom: fetch a public URL through the SSRF-safe fetcher (with the
 * caller's User-Agent) and return its main content as Markdown (default),
 * plain text or the raw source, at most 10,000 characters, with the page's
 * HTTP status. See jobs/stealth-dom/README.md.
 *
 * Upstream statuses: every page the site actually served is a result (200,
 * charged): 2xx, a 3xx without Location, and 4xx such as 404 or 410 come back
 * with `status` set to the page's status and its content. A 5xx, 408 or 429
 * is the site failing for now: 502 `upstream_error` (details.upstream_status),
 * never charged, worth a retry later.
 */
import type { StealthDomRequest } from './sku.js';
import { JobError } from '../../core/queue/queue.js';
import { cpuTask, inlineCpu } from '../../core/threads/cpu-pool.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { createSafeFetch, fetcherSettingsFromConfig, type FetcherSettings } from '../web-fetch/safe-fetch.js';
import {
  classify,
  decode,
  extractHtml,
  extractText,
  isReadableMediaType,
  READABLE_DESCRIPTION,
  truncate,
  type DocumentKind,
  type Format,
} from './extract.js';

export const MAX_CONTENT_CHARS = 10_000;
export const DEFAULT_TIMEOUT_MS = 5000;

export interface StealthDomResult {
  success: boolean;
  status: number;
  format: Format;
  content: string;
  content_length: number;
  /** True when the content was cut at 10,000 characters. */
  truncated: boolean;
  /** Final URL after redirects. */
  source: string;
}

/**
 * Decoding and extraction of a fetched page (extract.ts), as a CPU pool task: plain data in and out (the body
 * as bytes, the URL as a string); a pool thread imports this module once.
 */
export function extractPage(
  body: Uint8Array,
  charset: string | null,
  kind: { kind: DocumentKind; language: string },
  pageUrl: string,
  format: Format,
): { content: string; truncated: boolean } {
  const text = decode(Buffer.from(body.buffer, body.byteOffset, body.byteLength), charset, kind.kind);
  const full =
    kind.kind === 'html'
      ? extractHtml(text, new URL(pageUrl), format).content
      : extractText(text, kind.kind, kind.language, format);
  const cut = truncate(full, MAX_CONTENT_CHARS);
  return { content: cut.text, truncated: cut.truncated };
}
export const extractTask = cpuTask(import.meta.url, { extractPage });

const ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5';
const TRANSIENT = (status: number) => status >= 500 || status === 408 || status === 429;

/** `fetcher` overrides the settings built from the config (tests: a controlled resolver or connection). */
export function stealthDomProcessor(
  overrides: Partial<FetcherSettings> = {},
): ProcessorFactory<StealthDomRequest, StealthDomResult> {
  return async (deps) => {
    const { config, logger } = deps;
    const fetch = createSafeFetch({ ...fetcherSettingsFromConfig(config), ...overrides });
    const threads = deps.threads ?? inlineCpu;
    // Warm-up of every thread: the module, the DOM parser and the JIT, on a small page.
    const page = '<html><body><main><h1>a</h1><p>b</p></main></body></html>';
    threads.preload(extractTask, [
      Buffer.from(page),
      'utf-8',
      { kind: 'html', language: 'html' },
      'http://x/',
      'markdown',
    ]);
    return {
      handle: async (input, ctx) => {
        const format: Format = input.format ?? 'markdown';
        const timeoutMs = input.timeout ?? DEFAULT_TIMEOUT_MS;
        if (timeoutMs > config.FETCH_MAX_TIMEOUT_MS) {
          throw new JobError('timeout_too_large', `timeout may be at most ${config.FETCH_MAX_TIMEOUT_MS} ms`, 400, {
            field: 'timeout',
            max: config.FETCH_MAX_TIMEOUT_MS,
          });
        }
        const page = await fetch({
          url: input.url,
          field: 'url',
          timeoutMs,
          maxBytes: config.FETCH_MAX_BODY_BYTES,
          userAgent: input.userAgent ?? config.FETCH_USER_AGENT,
          accept: ACCEPT,
          acceptMediaType: isReadableMediaType,
          acceptedDescription: READABLE_DESCRIPTION,
          signal: ctx.signal,
          rejectStatus: (status, statusText, url) =>
            TRANSIENT(status)
              ? new JobError('upstream_error', `the site answered ${status} ${statusText}`.trim(), 502, {
                  reason: 'upstream_status',
                  upstream_status: status,
                  url: url.href,
                })
              : undefined,
        });
        const kind = classify(page.mediaType, page.body);
        if ('binary' in kind) {
          throw new JobError(
            'unsupported_content_type',
            'the URL answered binary content without a Content-Type',
            415,
            {
              field: 'url',
              content_type: null,
              url: page.url.href,
            },
          );
        }
        const t0 = performance.now();
        // In a pool thread: the event loop keeps serving while the page is parsed.
        const { content, truncated } = await threads.run(
          extractTask,
          [page.body, page.charset, kind, page.url.href, format],
          ctx.signal,
        );
        logger.debug(
          {
            host: page.url.host,
            status: page.status,
            bytes: page.body.length,
            fetch_ms: Math.round(page.elapsedMs),
            extract_ms: Math.round(performance.now() - t0),
            redirects: page.redirects.length,
          },
          'stealth-dom: fetched',
        );
        return {
          success: true,
          status: page.status,
          format,
          content,
          content_length: content.length,
          truncated,
          source: page.url.href,
        };
      },
    };
  };
}

export const createStealthDomProcessor: ProcessorFactory<StealthDomRequest, StealthDomResult> = (deps) =>
  stealthDomProcessor()(deps);
