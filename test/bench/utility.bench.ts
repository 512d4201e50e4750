/**
 * `npm run bench:utility`: the utility SKUs (issue 5) on a fixed local corpus,
 * no internet. Every upstream is a loopback server started here.
 *
 * Corpus (test/bench/utility-corpus/, plus fixtures reused read-only):
 *  - HTML pages: a product page, an encyclopedia article, a Q&A thread (the
 *    corpus), the three pages of test/fixtures/html, and the harbour article
 *    of test/helpers/web-fixtures.ts in its normal and long (80 extra
 *    paragraphs) forms: stealth-dom fetches them, rag-shrink gets them inline;
 *  - ~10 KB texts full of PII (three in the corpus, plus every text of
 *    test/fixtures/pii/corpus.jsonl joined into one): airgap-scrub;
 *  - code files in twelve languages: code-denoise;
 *  - RDAP answers (test/fixtures/rdap: Verisign .com, PIR .org, a registry
 *    redirecting to a registrar, 404 for names nobody holds) behind a
 *    bootstrap document pointing at loopback: domain-check;
 *  - DexScreener answers (test/fixtures/dexscreener: symbol and address
 *    queries, an unknown symbol): dex-price-summary;
 *  - table images rendered at start with pureimage and the DejaVu fonts
 *    (test/helpers/web-fixtures-images.ts: an invoice as PNG and JPEG, a
 *    timetable): image-ocr-shrink.
 *
 * Phases:
 *  Q. Quality on public corpora (issue 14; test/bench/utility-quality.ts):
 *     airgap-scrub recall/precision/F1 per kind on test/corpus/pii, and
 *     rag-shrink bag-of-words F1 against @mozilla/readability + turndown,
 *     trafilatura and readability-lxml (Python, skipped with a note when
 *     missing) on test/corpus/article-extraction.
 *  A. Each registered processor alone (built as the worker role builds it,
 *     called in this process, sequentially): p50/p99 per call, and the same
 *     minus the time the loopback upstream spent answering inside the call.
 *     Every corpus item is run once first and its output checked against the
 *     catalogue's output schema. In the same phase, side by side: rag-shrink
 *     against @mozilla/readability + turndown on the same pages, and
 *     airgap-scrub's throughput on the ~10 KB texts.
 *  B. Through the API and the queue: the real worker role (startProcess,
 *     ROLE=worker) and api role (ROLE=api; NODE_ENV=test for the loopback URLs, see below),
 *     QUEUE=bullmq on the running Redis (REDIS_URL, a key prefix of this run,
 *     deleted at the end), SETTLEMENT=devchain. Each request carries its own
 *     x402 signature, signed in advance in the load-generator child process
 *     (test/bench/x402-load.ts); the gate verifies each with the real
 *     facilitator; settlement is a no-op (nothing on chain). autocannon runs a
 *     fixed number of requests per connection level (BENCH_CONNECTIONS,
 *     default 1 and 8), sized to last about BENCH_DURATION_S seconds.
 *
 * Timing without the upstream: node:diagnostics_channel
 * (`http.server.request.start`) times every HTTP exchange this process
 * serves: the API's (server side: request start -> response flushed) and
 * the loopback upstreams'. At 1 connection the calls do not overlap, so each
 * API exchange is paired with the upstream exchanges inside it; "excluding
 * the upstream" is the API exchange minus the upstream's own answer time.
 * What stays counted is ours: HTTP, validation, x402 verification, the queue,
 * the fetcher (connect, SSRF checks, streaming) and the processing.
 *
 * Worker settings that differ from production defaults, for measurement:
 * FETCH_ALLOW_LOOPBACK and RDAP_ALLOW_HTTP (the upstreams are loopback; they
 * need NODE_ENV=test in the worker), DEX_PRICE_CACHE_TTL_MS=0 (every call
 * reaches the aggregator), DEXSCREENER_MAX_REQUESTS_PER_MIN=1000000 (the
 * local guard would answer 503 above 300/min), RDAP_BOOTSTRAP_REFRESH_MS=0,
 * AI_LOCAL_VOCABULARY=1000 (only strict mode, not benchmarked, uses it).
 *
 *  L. (issue 23) The API while 4 maximum-size airgap-scrub jobs run, as
 *     `npm start` runs it (ROLE=all, QUEUE=inprocess, jobs in the CPU pool):
 *     p50/p99 of /health and of a paid telemetry read, beside a baseline
 *     with no job running (test/bench/event-loop-under-jobs.ts). BENCH_JOBS_LOOP:
 *     `0` skips it, `only` runs it alone (without Redis).
 *  W. (opt-in, BENCH_WORST_CASE; issue 23) Worst-case inputs of every text
 *     SKU at 1×, 2× and 4× its schema's maximum size: time per size and
 *     the ratio per doubling (test/bench/worst-case-growth.ts). Off by
 *     default: at those sizes it takes minutes.
 *
 * Knobs: BENCH_DURATION_S (5), BENCH_CONNECTIONS ("1,8"), BENCH_SKUS (ids,
 * comma-separated), BENCH_PROCESSOR_S (3: time per SKU in phase A),
 * BENCH_LOG_FILE (the app's log; default a temp file), BENCH_WORST_CASE
 * (`1`/`all`, or SKU ids; prefixed `only:` it runs phase W alone, without
 * Redis) and BENCH_WORST_CASE_TIMEOUT_S (120, per shape).
 */
import dc from 'node:diagnostics_channel';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { Readability } from '@mozilla/readability';
import { Redis } from 'ioredis';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import type { z } from 'zod';
import { JOB_SKUS } from '../../api/catalogue/sku-list.js';
import type { Config } from '../../core/config.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { createStore } from '../../core/ports.js';
import { startProcess, type RunningProcess } from '../../roles/process.js';
import { JobError, type JobContext } from '../../core/queue/queue.js';
import type { SkuProcessor } from '../../jobs/sku-processor.js';
import { testConfig } from '../helpers/config.js';
import { dexFixture, DexScreenerServer } from '../helpers/dexscreener-server.js';
import { rdapFixture, RdapServer, writeBootstrapFile } from '../helpers/rdap-server.js';
import { articleHtml, startWebFixtures, type WebFixtures } from '../helpers/web-fixtures.js';
import { INVOICE, renderTableDocument, TIMETABLE } from '../helpers/web-fixtures-images.js';
import { benchLogger, cleanupOnSignal, envNum, PAID_API_ROLE, startPaidApi } from './bench-app.js';
import { cpuMeter, descendantsMatching, type CpuSplit as Split } from './cpu.js';
import { challengeOf, LoadGenerator, quantile, type RequestVariant, type RunResult } from './x402-load.js';
import { printSplitQualityTables } from './extraction-split-quality.js';
import { printQualityTables } from './utility-quality.js';
import { printEventLoopUnderJobs } from './event-loop-under-jobs.js';
import { printWorstCaseGrowth } from './worst-case-growth.js';

/** The seven utility SKUs of issue 5, in the order of the spec. */
const UTILITY_SKUS = [
  'stealth-dom',
  'airgap-scrub',
  'rag-shrink',
  'code-denoise',
  'domain-check',
  'dex-price-summary',
  'image-ocr-shrink',
] as const;
type UtilitySku = (typeof UTILITY_SKUS)[number];
const HAS_UPSTREAM: ReadonlySet<UtilitySku> = new Set([
  'stealth-dom',
  'domain-check',
  'dex-price-summary',
  'image-ocr-shrink',
]);

const CORPUS = fileURLToPath(new URL('./utility-corpus/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

const ms1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const fmt = (n: number) =>
  !Number.isFinite(n) ? 'n/a' : n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const clamp = (x: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, x));

// ==================================================================== corpus

interface CorpusItem {
  /** What the table calls it (file name). */
  label: string;
  /** The SKU's request body. */
  input: Record<string, unknown>;
  /** Other spellings of the same request, tried in order when the processor refuses the first with a 4xx (e.g. a language alias). */
  alternatives?: Record<string, unknown>[];
  /** Bytes of the payload the SKU works on (text, HTML, code; the fetched page or image for fetching SKUs). */
  bytes: number;
}

interface Page {
  name: string;
  html: string;
}

/** Language of a code file by extension, and aliases tried when a processor knows the language by another name. */
const LANGUAGES: Record<string, string[]> = {
  '.js': ['javascript'],
  '.ts': ['typescript'],
  '.py': ['python'],
  '.css': ['css'],
  '.html': ['html'],
  '.jsonc': ['jsonc', 'json'],
  '.go': ['go'],
  '.rs': ['rust'],
  '.java': ['java'],
  '.cpp': ['cpp', 'c++', 'c'],
  '.sh': ['shell', 'bash', 'sh'],
  '.sql': ['sql'],
};

async function readDir(dir: string): Promise<{ name: string; text: string }[]> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isFile() && !e.name.startsWith('.') && e.name !== 'README.md')
    .map((e) => e.name)
    .sort();
  return Promise.all(names.map(async (name) => ({ name, text: await readFile(join(dir, name), 'utf8') })));
}

interface Corpus {
  pages: Page[];
  texts: { name: string; text: string }[];
  code: { name: string; code: string; languages: string[] }[];
  images: { name: string; type: string; body: Buffer; width: number; height: number }[];
}

async function loadCorpus(): Promise<Corpus> {
  const pages: Page[] = [
    ...(await readDir(join(CORPUS, 'html'))).map((f) => ({ name: f.name, html: f.text })),
    ...(await readDir(join(FIXTURES, 'html'))).map((f) => ({ name: `fixtures/${f.name}`, html: f.text })),
    { name: 'web-fixtures/article', html: articleHtml() },
    { name: 'web-fixtures/long-article', html: articleHtml({ paragraphs: 80 }) },
  ];
  const fixtureTexts = readFileSync(join(FIXTURES, 'pii', 'corpus.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { text: string }).text);
  const texts = [
    ...(await readDir(join(CORPUS, 'pii'))),
    { name: 'fixtures/pii/corpus.jsonl (all texts)', text: fixtureTexts.join('\n') },
  ];
  const code = (await readDir(join(CORPUS, 'code'))).map((f) => {
    const languages = LANGUAGES[extname(f.name)];
    if (!languages) throw new Error(`no language for ${f.name}`);
    return { name: f.name, code: f.text, languages };
  });
  const invoice = await renderTableDocument(INVOICE, 'png');
  const invoiceJpeg = await renderTableDocument(INVOICE, 'jpeg');
  const timetable = await renderTableDocument(TIMETABLE, 'png');
  const images = [
    { name: 'invoice.png', type: 'image/png', body: invoice.image, width: invoice.width, height: invoice.height },
    {
      name: 'timetable.png',
      type: 'image/png',
      body: timetable.image,
      width: timetable.width,
      height: timetable.height,
    },
    {
      name: 'invoice.jpg',
      type: 'image/jpeg',
      body: invoiceJpeg.image,
      width: invoiceJpeg.width,
      height: invoiceJpeg.height,
    },
  ];
  return { pages, texts, code, images };
}

// ==================================================================== loopback upstreams

const AERO = '0x940181a94A35A4569E4529A3CDfB74e38FD98631';
const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';

interface Upstreams {
  site: WebFixtures;
  registry: RdapServer;
  registrar: RdapServer;
  dex: DexScreenerServer;
  bootstrapFile: string;
  ports: Set<number>;
  close(): Promise<void>;
}

async function startUpstreams(corpus: Corpus, dir: string): Promise<Upstreams> {
  const site = await startWebFixtures();
  for (const page of corpus.pages) {
    const body = Buffer.from(page.html);
    site.route(`/corpus/${page.name}`, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
      res.end(body);
    });
  }
  for (const image of corpus.images) {
    site.route(`/corpus/images/${image.name}`, (_req, res) => {
      res.writeHead(200, { 'content-type': image.type, 'content-length': image.body.length });
      res.end(image.body);
    });
  }
  const registry = await RdapServer.start();
  const registrar = await RdapServer.start();
  registry.domain('/com/v1/', 'google.com', rdapFixture('verisign-com-google.json'));
  registry.domain('/rdap/', 'wikipedia.org', rdapFixture('pir-org-wikipedia.json'));
  // A registry that points at the registrar's RDAP server (RFC 7480 §5.2): two upstream exchanges per call.
  registry.route('/net/v1/domain/moved-example.net', {
    kind: 'redirect',
    status: 301,
    location: `${registrar.url}/rdap/domain/moved-example.net`,
  });
  registrar.domain('/rdap/', 'moved-example.net', rdapFixture('registrar-example-net.json'));
  const bootstrapFile = writeBootstrapFile(
    dir,
    [
      [['com'], [`${registry.url}/com/v1/`]],
      [['net'], [`${registry.url}/net/v1/`]],
      [['org'], [`${registry.url}/rdap/`]],
    ],
    '2026-01-01T00:00:00Z',
  );
  const dex = await DexScreenerServer.start();
  dex.searches.set('AERO', dexFixture('search-aero.json'));
  dex.searches.set('ETH', dexFixture('search-eth.json'));
  dex.tokens.set(AERO.toLowerCase(), dexFixture('tokens-aero.json'));
  dex.tokens.set(BONK, dexFixture('tokens-bonk.json'));
  const port = (url: string) => Number(new URL(url).port);
  return {
    site,
    registry,
    registrar,
    dex,
    bootstrapFile,
    ports: new Set([site.port, port(registry.url), port(registrar.url), port(dex.url)]),
    close: async () => {
      await Promise.all([site.close(), registry.close(), registrar.close(), dex.close()]);
    },
  };
}

/** Each SKU's requests on the corpus. */
function corpusItems(id: UtilitySku, corpus: Corpus, up: Upstreams): CorpusItem[] {
  switch (id) {
    case 'stealth-dom':
      return corpus.pages.map((p, i) => ({
        label: p.name,
        // Mostly Markdown (the default), every fourth page as plain text.
        input: { url: up.site.url(`/corpus/${p.name}`), ...(i % 4 === 3 ? { format: 'text' } : {}) },
        bytes: Buffer.byteLength(p.html),
      }));
    case 'airgap-scrub':
      return corpus.texts.map((t) => ({ label: t.name, input: { text: t.text }, bytes: Buffer.byteLength(t.text) }));
    case 'rag-shrink':
      return corpus.pages.map((p, i) => ({
        label: p.name,
        input: { html: p.html, ...(i % 2 ? { keepLinks: true } : {}) },
        bytes: Buffer.byteLength(p.html),
      }));
    case 'code-denoise':
      return corpus.code.map((c) => ({
        label: c.name,
        input: { code: c.code, language: c.languages[0] },
        alternatives: c.languages.slice(1).map((language) => ({ code: c.code, language })),
        bytes: Buffer.byteLength(c.code),
      }));
    case 'domain-check':
      return [
        'google.com',
        'wikipedia.org',
        'moved-example.net',
        'harbour-bench-unregistered.com',
        'tidal-bench-unregistered.org',
      ].map((domain) => ({
        label: domain,
        input: { domain },
        bytes: 0,
      }));
    case 'dex-price-summary':
      return ['AERO', 'ETH', AERO, BONK, 'NOSUCHTOKENXYZ'].map((query) => ({
        label: query,
        input: { query },
        bytes: 0,
      }));
    case 'image-ocr-shrink':
      return corpus.images.map((im) => ({
        label: `${im.name} ${im.width}x${im.height}`,
        input: { imageUrl: up.site.url(`/corpus/images/${im.name}`) },
        bytes: im.body.length,
      }));
  }
}

// ==================================================================== server-side timing of HTTP exchanges

interface Exchange {
  port: number;
  start: number;
  end: number;
  status: number;
}

/**
 * Every HTTP exchange this process serves (the API's and the loopback
 * upstreams'), timed from the request's start to the response being flushed,
 * through node:diagnostics_channel, so the servers need no hook.
 */
class ExchangeLog {
  readonly done: Exchange[] = [];
  private readonly inFlight = new Map<number, number>();
  private readonly onStart = (message: unknown) => {
    const { response, socket } = message as { request: IncomingMessage; response: ServerResponse; socket: Socket };
    const port = socket.localPort ?? 0;
    const start = performance.now();
    this.inFlight.set(port, (this.inFlight.get(port) ?? 0) + 1);
    response.once('finish', () => this.done.push({ port, start, end: performance.now(), status: response.statusCode }));
    response.once('close', () => this.inFlight.set(port, (this.inFlight.get(port) ?? 1) - 1));
  };

  constructor(private readonly upstreamPorts: ReadonlySet<number>) {
    dc.subscribe('http.server.request.start', this.onStart);
  }

  close(): void {
    dc.unsubscribe('http.server.request.start', this.onStart);
  }

  mark(): number {
    return this.done.length;
  }

  since(mark: number, port?: number): Exchange[] {
    return this.done.slice(mark).filter((e) => (port === undefined ? true : e.port === port));
  }

  upstreamSince(mark: number): Exchange[] {
    return this.done.slice(mark).filter((e) => this.upstreamPorts.has(e.port));
  }

  /** Time the upstreams spent answering exchanges that lie inside [start, end]. */
  upstreamWithin(start: number, end: number, from = 0): number {
    let total = 0;
    for (let i = from; i < this.done.length; i++) {
      const e = this.done[i]!;
      if (this.upstreamPorts.has(e.port) && e.start >= start && e.end <= end) total += e.end - e.start;
    }
    return total;
  }

  inFlightOn(port: number): number {
    return this.inFlight.get(port) ?? 0;
  }
}

// ==================================================================== CPU accounting (Linux /proc)

/** CPU ms over a run of the app (this process: api, worker, upstreams), the dev chain node and the load generator; `other`: the rest of the machine. */
type CpuSplit = Split<'app' | 'chain' | 'loader'>;

// ==================================================================== phase A: processors alone

interface Stats {
  n: number;
  p50: number;
  p99: number;
}
const stats = (xs: readonly number[]): Stats => ({ n: xs.length, p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) });

interface ProcessorResult {
  id: UtilitySku;
  buildMs: number;
  /** Corpus items the processor served (with the spelling it accepted). */
  items: CorpusItem[];
  /** Items dropped, and why. */
  dropped: { label: string; reason: string }[];
  schemaProblems: string[];
  total: Stats;
  upstream: Stats;
  own: Stats;
  /** Sequential calls per second. */
  callsPerS: number;
  /** The corpus item with the highest median time, with its median and max (ms). */
  slowest?: { label: string; p50: number; max: number };
}

const jobContext = (deadlineMs = 30_000): JobContext => ({
  jobId: 'bench',
  attempt: 1,
  deadline: Date.now() + deadlineMs,
  signal: new AbortController().signal,
});

async function runProcessorAlone(
  id: UtilitySku,
  processor: SkuProcessor,
  buildMs: number,
  items: CorpusItem[],
  output: z.ZodType,
  log: ExchangeLog,
  budgetMs: number,
): Promise<ProcessorResult> {
  const kept: CorpusItem[] = [];
  const dropped: { label: string; reason: string }[] = [];
  const schemaProblems: string[] = [];
  // One pass over the corpus: the warm-up, the output check, and the spelling each item is accepted in.
  for (const item of items) {
    const spellings = [item.input, ...(item.alternatives ?? [])];
    let lastError = '';
    for (const input of spellings) {
      try {
        const out = await processor.handle(input, jobContext());
        const check = output.safeParse(out);
        if (!check.success) schemaProblems.push(`${item.label}: ${JSON.stringify(check.error.issues.slice(0, 2))}`);
        kept.push({ ...item, input });
        lastError = '';
        break;
      } catch (err) {
        lastError = err instanceof JobError ? `${err.status} ${err.code}: ${err.message}` : String(err);
        if (!(err instanceof JobError && err.status < 500)) break;
      }
    }
    if (lastError) dropped.push({ label: item.label, reason: lastError });
  }
  const totals: number[] = [];
  const upstreams: number[] = [];
  const owns: number[] = [];
  const perItem = new Map<string, number[]>();
  if (kept.length) {
    const slow = id === 'image-ocr-shrink';
    const minRuns = slow ? 6 : 30;
    const maxRuns = slow ? 30 : 2000;
    const until = performance.now() + budgetMs;
    const t0 = performance.now();
    for (let i = 0; totals.length < maxRuns && (totals.length < minRuns || performance.now() < until); i++) {
      const item = kept[i % kept.length]!;
      const from = log.mark();
      const s = performance.now();
      await processor.handle(item.input, jobContext());
      const e = performance.now();
      const up = log.upstreamWithin(s, e, from);
      totals.push(e - s);
      upstreams.push(up);
      owns.push(e - s - up);
      const times = perItem.get(item.label) ?? [];
      times.push(e - s);
      perItem.set(item.label, times);
    }
    const callsPerS = totals.length / ((performance.now() - t0) / 1000);
    let slowest: ProcessorResult['slowest'];
    for (const [label, times] of perItem) {
      const p50 = quantile(times, 0.5);
      if (!slowest || p50 > slowest.p50) slowest = { label, p50, max: Math.max(...times) };
    }
    return {
      id,
      buildMs,
      items: kept,
      dropped,
      schemaProblems,
      total: stats(totals),
      upstream: stats(upstreams),
      own: stats(owns),
      callsPerS,
      ...(slowest ? { slowest } : {}),
    };
  }
  const none = stats([]);
  return { id, buildMs, items: kept, dropped, schemaProblems, total: none, upstream: none, own: none, callsPerS: 0 };
}

/** @mozilla/readability on a linkedom document, then turndown: the usual "main content as Markdown" pipeline. */
function readabilityTurndown(td: TurndownService, html: string): string {
  const { document } = parseHTML(html);
  const article = new Readability(document as never).parse();
  return td.turndown(article?.content ?? '').trim();
}

interface CompareRow {
  page: string;
  bytes: number;
  ours: Stats;
  theirs: Stats;
  oursChars: number;
  theirsChars: number;
}

async function compareRagShrink(processor: SkuProcessor, pages: Page[], iterations: number): Promise<CompareRow[]> {
  const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  const rows: CompareRow[] = [];
  for (const page of pages) {
    const input = { html: page.html };
    let oursChars = 0;
    let theirsChars = 0;
    for (let w = 0; w < 3; w++) {
      oursChars = ((await processor.handle(input, jobContext())) as { content: string }).content.length;
      theirsChars = readabilityTurndown(td, page.html).length;
    }
    const ours: number[] = [];
    const theirs: number[] = [];
    // Interleaved, so both see the same machine load.
    for (let i = 0; i < iterations; i++) {
      let s = performance.now();
      await processor.handle(input, jobContext());
      ours.push(performance.now() - s);
      s = performance.now();
      readabilityTurndown(td, page.html);
      theirs.push(performance.now() - s);
    }
    rows.push({
      page: page.name,
      bytes: Buffer.byteLength(page.html),
      ours: stats(ours),
      theirs: stats(theirs),
      oursChars,
      theirsChars,
    });
  }
  return rows;
}

/** airgap-scrub's processor alone on the ~10 KB texts, sequentially, for `budgetMs`. */
async function airgapThroughput(
  processor: SkuProcessor,
  items: CorpusItem[],
  budgetMs: number,
): Promise<{ texts: number; bytes: number; seconds: number }> {
  let texts = 0;
  let bytes = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < budgetMs || texts < items.length) {
    const item = items[texts % items.length]!;
    await processor.handle(item.input, jobContext());
    texts++;
    bytes += item.bytes;
  }
  return { texts, bytes, seconds: (performance.now() - t0) / 1000 };
}

// ==================================================================== phase B: through the API

interface ApiRow {
  id: UtilitySku;
  connections: number;
  result: RunResult;
  verify: Stats;
  /** Server-side time of the API exchanges of the run. */
  server: Stats;
  /** Upstream answer time per API exchange (1 connection), or per upstream exchange (more). */
  upstream: Stats;
  /** API exchange minus the upstream exchanges inside it (1 connection only). */
  own?: Stats;
  cpu: CpuSplit;
  avgBytes: number;
}

async function main(): Promise<void> {
  const tStart = performance.now();
  const durationS = envNum('BENCH_DURATION_S', 5);
  const processorMs = envNum('BENCH_PROCESSOR_S', 3) * 1000;
  const connectionLevels = (process.env.BENCH_CONNECTIONS ?? '1,8').split(',').map((c) => Number(c.trim()));
  const only = process.env.BENCH_SKUS?.split(',').map((s) => s.trim());
  console.log(`bench:utility: load average at start ${load()} on ${cpus().length} cores; ${new Date().toISOString()}`);

  // ---------------------------------------------------------------- L. the API's loop while jobs run (issue 23)
  const jobsLoop = process.env.BENCH_JOBS_LOOP?.trim();
  if (jobsLoop !== '0' && !process.env.BENCH_WORST_CASE?.trim().startsWith('only')) {
    await printEventLoopUnderJobs();
    if (jobsLoop === 'only') return;
  }

  // ---------------------------------------------------------------- W. worst-case inputs (issue 23), opt-in
  const worstCase = process.env.BENCH_WORST_CASE?.trim();
  if (worstCase) {
    const spec = worstCase.replace(/^only:?/, '');
    const ids = !spec || spec === '1' || spec === 'all' ? undefined : spec.split(',').map((s) => s.trim());
    await printWorstCaseGrowth(ids, envNum('BENCH_WORST_CASE_TIMEOUT_S', 120));
    if (worstCase.startsWith('only')) return;
  }

  const catalogue = new Map(JOB_SKUS.map((s) => [s.id, s]));
  const wanted = UTILITY_SKUS.filter((id) => !only || only.includes(id));
  const registered = wanted.filter((id) => JOB_SKUS.some((s) => s.id === id && s.processor));
  const skipped = wanted.filter((id) => !registered.includes(id));
  if (skipped.length) console.log(`Skipped (no processor in its jobs/<id>/job.ts): ${skipped.join(', ')}`);
  if (!registered.length) throw new Error('no utility SKU of the catalogue list has a processor');

  const dataDir = await mkdtemp(join(tmpdir(), 'bench-utility-'));
  const logFile = process.env.BENCH_LOG_FILE ?? join(dataDir, 'app.log');
  const logger = benchLogger(logFile);

  const corpus = await loadCorpus();
  const up = await startUpstreams(corpus, dataDir);
  const log = new ExchangeLog(up.ports);
  const prefix = `benchutil${Date.now().toString(36)}`;
  const common = {
    QUEUE: 'bullmq',
    QUEUE_PREFIX: prefix,
    STORE: 'duckdb',
    DUCKDB_PATH: ':memory:',
    BUS: 'memory',
    DATA_DIR: dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    MARKET_SOURCE: 'simulated',
    STARTUP_TIMEOUT_MS: '30000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  };
  const workerConfig: Config = testConfig({
    ...common,
    ROLE: 'worker',
    NODE_ENV: 'test', // the loopback allowances below exist only in test configuration
    FETCH_ALLOW_LOOPBACK: 'true',
    RDAP_ALLOW_HTTP: 'true',
    RDAP_BOOTSTRAP_FILE: up.bootstrapFile,
    RDAP_BOOTSTRAP_URL: `${up.registry.url}/bootstrap/dns.json`,
    RDAP_BOOTSTRAP_REFRESH_MS: '0',
    DEXSCREENER_BASE_URL: up.dex.url,
    DEX_PRICE_CACHE_TTL_MS: '0',
    DEXSCREENER_MAX_REQUESTS_PER_MIN: '1000000',
    AI_LOCAL_VOCABULARY: '1000',
  });
  // NODE_ENV=test in the api role too: its pre-challenge URL check refuses loopback URLs (the corpus is served on
  // loopback) unless FETCH_ALLOW_LOOPBACK, which only test configuration accepts. The one difference from production
  // this brings: each response is checked against its output schema (a zod parse, microseconds beside the processing).
  const apiConfig: Config = testConfig({ ...common, ...PAID_API_ROLE, NODE_ENV: 'test', FETCH_ALLOW_LOOPBACK: 'true' });
  const pairs = loadPairs(workerConfig.PAIRS_FILE);
  console.log(
    `Corpus: ${corpus.pages.length} HTML pages (${fmt(corpus.pages.reduce((a, p) => a + p.html.length, 0) / 1024)} KB), ${corpus.texts.length} PII texts ` +
      `(${corpus.texts.map((t) => (Buffer.byteLength(t.text) / 1024).toFixed(1)).join(', ')} KB), ${corpus.code.length} code files, ${corpus.images.length} table images; ` +
      `5 domains, 5 DEX queries. App log: ${logFile}`,
  );

  let worker: RunningProcess | undefined;
  let api: RunningProcess | undefined;
  let loader: LoadGenerator | undefined;
  const cleanup = cleanupOnSignal(async () => {
    await loader?.exit();
    await api?.shutdown('bench done'); // stops the dev chain too
    await worker?.shutdown('bench done');
    log.close();
    await up.close();
    const redis = new Redis(workerConfig.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      let cursor = '0';
      let deleted = 0;
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) deleted += await redis.del(...keys);
      } while (cursor !== '0');
      if (deleted) logger.info({ prefix, deleted }, 'bench: queue keys deleted');
    } catch (err) {
      console.log(`could not delete the Redis keys under ${prefix}: ${String(err)}`);
    } finally {
      redis.disconnect();
    }
    if (!process.env.BENCH_LOG_FILE) await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  });

  try {
    // ---------------------------------------------------------------- quality on public corpora (issue 14)
    printQualityTables();
    await printSplitQualityTables();

    // ---------------------------------------------------------------- A. processors alone
    console.log(`\nA. Processors alone (in this process, sequential; up to ${processorMs / 1000} s each)`);
    const store = await createStore(workerConfig, logger);
    await store.migrate();
    const alone = new Map<UtilitySku, ProcessorResult>();
    let compare: CompareRow[] | undefined;
    let airgapAlone: { texts: number; bytes: number; seconds: number } | undefined;
    try {
      for (const id of registered) {
        const sku = catalogue.get(id)!;
        const t0 = performance.now();
        const factory = await JOB_SKUS.find((s) => s.id === id)!.processor!.load();
        const processor = await factory({ config: workerConfig, logger: logger.child({ sku: id }), pairs, store });
        const buildMs = performance.now() - t0;
        try {
          const r = await runProcessorAlone(
            id,
            processor,
            buildMs,
            corpusItems(id, corpus, up),
            sku.output,
            log,
            id === 'image-ocr-shrink' ? Math.max(processorMs, 8000) : processorMs,
          );
          alone.set(id, r);
          console.log(
            `  ${id}: built in ${ms1(buildMs)} ms; ${r.total.n} calls on ${r.items.length} items, p50 ${ms1(r.total.p50)} ms p99 ${ms1(r.total.p99)} ms ` +
              `(without the upstream p50 ${ms1(r.own.p50)} p99 ${ms1(r.own.p99)})${r.slowest ? `; slowest item ${r.slowest.label}: p50 ${ms1(r.slowest.p50)} max ${ms1(r.slowest.max)} ms` : ''}${r.dropped.length ? `; dropped ${r.dropped.map((d) => `${d.label} (${d.reason})`).join(', ')}` : ''}` +
              `${r.schemaProblems.length ? `; OUTPUT SCHEMA MISMATCH: ${r.schemaProblems.join(' | ')}` : ''}`,
          );
          if (id === 'rag-shrink') compare = await compareRagShrink(processor, corpus.pages, 40);
          if (id === 'airgap-scrub' && r.items.length)
            airgapAlone = await airgapThroughput(processor, r.items, processorMs);
        } finally {
          await processor.close?.();
        }
      }
    } finally {
      await store.close();
    }

    // ---------------------------------------------------------------- B. through the API and the queue
    const tApp = performance.now();
    worker = await startProcess(workerConfig, logger);
    const workerReadyS = (performance.now() - tApp) / 1000;
    const paid = await startPaidApi(apiConfig, logger); // x402 verified on the dev chain, settlement excluded
    api = paid.proc;
    const { url, settlement, payment } = paid;
    const apiPort = Number(new URL(url).port);
    loader = LoadGenerator.start();
    await loader.setPayer(settlement.devChain!.payerKey);
    const meter = cpuMeter({ app: [process.pid], chain: descendantsMatching(/hardhat/), loader: [loader.pid] });
    console.log(
      `\nB. Through the API and the queue: worker role ready in ${workerReadyS.toFixed(1)} s, api role + dev chain in ${((performance.now() - tApp) / 1000 - workerReadyS).toFixed(1)} s; ` +
        `QUEUE=bullmq on ${workerConfig.REDIS_URL.replace(/\/\/[^@]*@/, '//')} prefix ${prefix}; load average ${load()}`,
    );

    const apiRows: ApiRow[] = [];
    let signS = 0;
    for (const id of registered) {
      const items = alone.get(id)?.items ?? [];
      const sku = catalogue.get(id)!;
      if (!items.length) {
        console.log(`  ${id}: no corpus item served by the processor; not run through the API`);
        continue;
      }
      const variants: RequestVariant[] = items.map((it) => ({
        method: 'POST',
        path: sku.path,
        body: JSON.stringify(it.input),
      }));
      const avgBytes = items.reduce((a, it) => a + it.bytes, 0) / items.length;
      const challenge = await challengeOf(url, variants[0]!);
      for (const v of variants.slice(1)) await challengeOf(url, v); // every request passes validation and pre-flight
      const sign = async (n: number) => {
        signS += await loader!.sign(id, challenge, n);
      };
      // Warm-up: each corpus item twice at 1 connection; the second pass's server-side times give the rate estimate.
      await sign(2 * variants.length);
      const warmFrom = log.mark();
      const warm = await loader.run({ url, connections: 1, amount: 2 * variants.length, variants, pool: id });
      if (warm.non2xx + warm.errors)
        console.log(
          `  ${id} warm-up: ${warm.non2xx} non-2xx, ${warm.errors} errors${warm.firstFailure ? `; first: ${warm.firstFailure}` : ''}`,
        );
      const second = log.since(warmFrom, apiPort).slice(variants.length);
      const meanMs = second.reduce((a, e) => a + e.end - e.start, 0) / Math.max(1, second.length);
      // The client and the loopback add about a millisecond per request.
      let rate1 = second.length ? 1000 / (meanMs + 1) : Math.max(warm.rps, 0.5);
      for (const connections of connectionLevels) {
        // A fixed number of requests, sized to last about durationS: nothing is left in flight at the end.
        const expectedRps = connections === 1 ? rate1 : rate1 * 1.5;
        const amount = Math.round(
          clamp(expectedRps * durationS, Math.max(connections * 2, connections === 1 ? 10 : 16), 1500),
        );
        await sign(amount);
        const from = log.mark();
        const verifyFrom = payment.verifyMs.length;
        const cpuOf = meter();
        const result = await loader.run({ url, connections, amount, variants, pool: id });
        const cpu = cpuOf();
        for (let waited = 0; log.inFlightOn(apiPort) > 0 && waited < 30_000; waited += 50)
          await new Promise((r) => setTimeout(r, 50));
        if (connections === 1) rate1 = Math.max(result.rps, 0.5);
        const apiExchanges = log.since(from, apiPort);
        const upstreamExchanges = log.upstreamSince(from);
        const server = stats(apiExchanges.map((e) => e.end - e.start));
        let upstream: Stats;
        let own: Stats | undefined;
        if (connections === 1) {
          const ups = apiExchanges.map((e) => log.upstreamWithin(e.start, e.end, from));
          upstream = stats(ups);
          own = stats(apiExchanges.map((e, i) => e.end - e.start - ups[i]!));
        } else {
          upstream = stats(upstreamExchanges.map((e) => e.end - e.start));
        }
        const verify = stats(payment.verifyMs.slice(verifyFrom));
        apiRows.push({ id, connections, result, verify, server, upstream, ...(own ? { own } : {}), cpu, avgBytes });
        console.log(
          `  ${id} @${connections}: ${result.requests} requests in ${result.durationS.toFixed(1)} s, p50 ${result.p50} ms p99 ${result.p99} ms, ${result.rps.toFixed(1)} req/s, ` +
            `non-2xx ${result.non2xx}, errors ${result.errors}${own ? `; without the upstream p50 ${ms1(own.p50)} p99 ${ms1(own.p99)} ms` : ''}; verify p50 ${ms1(verify.p50)} p99 ${ms1(verify.p99)} ms`,
        );
        if (result.firstFailure) console.log(`    first failure: ${result.firstFailure}`);
      }
    }

    // ---------------------------------------------------------------- report
    const note = (id: UtilitySku) => (HAS_UPSTREAM.has(id) ? '' : ' (no upstream)');
    console.log(
      `\n### Utility SKUs through the API and the queue (${new Date().toISOString()})\n\n` +
        `Real api role (x402 verification on the dev chain, settlement excluded) -> BullMQ on Redis -> real worker role, one process; ` +
        `load generator (autocannon) in a child process; loopback upstreams in this process; ${cpus().length} cores. ` +
        `Latency as the client sees it; "server" and "upstream" are server-side exchange times.\n`,
    );
    console.log(
      '| SKU | conns | requests | p50 ms | p99 ms | req/s | non-2xx | server p50 / p99 ms | upstream p50 / p99 ms | verify p50 / p99 ms | CPU ms/req app / chain / loadgen | other work (cores) |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of apiRows) {
      const x = r.result;
      const n = Math.max(1, x.requests);
      console.log(
        `| ${r.id} | ${r.connections} | ${x.requests} | ${x.p50} | ${x.p99} | ${fmt(x.rps)} | ${x.non2xx + x.errors + x.timeouts} | ${ms1(r.server.p50)} / ${ms1(r.server.p99)} | ` +
          `${HAS_UPSTREAM.has(r.id) ? `${ms1(r.upstream.p50)} / ${ms1(r.upstream.p99)}` : '-'} | ${ms1(r.verify.p50)} / ${ms1(r.verify.p99)} | ` +
          `${(r.cpu.app / n).toFixed(1)} / ${(r.cpu.chain / n).toFixed(1)} / ${(r.cpu.loader / n).toFixed(1)} | ${(r.cpu.other / Math.max(1, r.cpu.wall)).toFixed(2)} |`,
      );
    }

    console.log(
      `\n### p99 excluding the upstream vs the spec's average latency\n\n` +
        "API @1: server-side time of each API exchange at 1 connection minus the loopback upstream's own answer time inside it " +
        '(HTTP, validation, x402 verification, BullMQ round trip, fetcher and processing stay counted). ' +
        'Processor alone: the processor called directly, minus the same upstream time. Target: p99 / spec average < 1.\n',
    );
    console.log(
      '| SKU | spec avg ms | API @1 p50 / p99 ms | API @1 excl. upstream p50 / p99 ms | p99 / spec avg | processor alone p50 / p99 ms | processor excl. upstream p50 / p99 ms | p99 / spec avg | n (API / alone) | target met (API / alone) |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    const missed: string[] = [];
    for (const id of registered) {
      const spec = catalogue.get(id)!.avgLatencyMs;
      const a = apiRows.find((r) => r.id === id && r.connections === 1);
      const p = alone.get(id);
      const apiRatio = a?.own ? a.own.p99 / spec : Number.NaN;
      const aloneRatio = p ? p.own.p99 / spec : Number.NaN;
      const verdict = (ratio: number) => (Number.isFinite(ratio) ? (ratio < 1 ? 'yes' : 'NO') : '-');
      if (!(apiRatio < 1) || !(aloneRatio < 1))
        missed.push(`${id} (API ${verdict(apiRatio)}, alone ${verdict(aloneRatio)})`);
      console.log(
        `| ${id}${note(id)} | ${spec} | ${a ? `${ms1(a.server.p50)} / ${ms1(a.server.p99)}` : '-'} | ${a?.own ? `${ms1(a.own.p50)} / ${ms1(a.own.p99)}` : '-'} | ${Number.isFinite(apiRatio) ? apiRatio.toFixed(2) : 'n/a'} | ` +
          `${p ? `${ms1(p.total.p50)} / ${ms1(p.total.p99)}` : '-'} | ${p ? `${ms1(p.own.p50)} / ${ms1(p.own.p99)}` : '-'} | ${Number.isFinite(aloneRatio) ? aloneRatio.toFixed(2) : 'n/a'} | ` +
          `${a?.own?.n ?? 0} / ${p?.total.n ?? 0} | ${verdict(apiRatio)} / ${verdict(aloneRatio)} |`,
      );
    }
    for (const id of skipped)
      console.log(`| ${id} | ${catalogue.get(id)!.avgLatencyMs} | skipped: not registered | | | | | | | |`);

    if (compare) {
      console.log(
        '\n### rag-shrink vs @mozilla/readability + turndown, same pages\n\n' +
          'Each page 3 warm-up runs, then 40 interleaved runs of each: the rag-shrink processor (input check, linkedom parse, semantic walk, statistics) ' +
          'and readability on a linkedom document + turndown of its article. Ratio < 1: rag-shrink is faster.\n',
      );
      console.log(
        '| page | KB | rag-shrink p50 / p99 ms | readability+turndown p50 / p99 ms | ratio p50 | ratio p99 | output chars rag-shrink / readability |',
      );
      console.log('|---|---|---|---|---|---|---|');
      for (const c of compare) {
        console.log(
          `| ${c.page} | ${(c.bytes / 1024).toFixed(1)} | ${ms1(c.ours.p50)} / ${ms1(c.ours.p99)} | ${ms1(c.theirs.p50)} / ${ms1(c.theirs.p99)} | ${(c.ours.p50 / c.theirs.p50).toFixed(2)} | ${(c.ours.p99 / c.theirs.p99).toFixed(2)} | ${c.oursChars} / ${c.theirsChars} |`,
        );
      }
      const sum = (f: (c: CompareRow) => number) => compare!.reduce((a, c) => a + f(c), 0);
      console.log(
        `| all pages (sum of p50) | ${(sum((c) => c.bytes) / 1024).toFixed(1)} | ${ms1(sum((c) => c.ours.p50))} | ${ms1(sum((c) => c.theirs.p50))} | ${(sum((c) => c.ours.p50) / sum((c) => c.theirs.p50)).toFixed(2)} | | |`,
      );
    } else {
      console.log('\nrag-shrink vs readability + turndown: skipped (rag-shrink is not registered).');
    }

    const airgapRows = apiRows.filter((r) => r.id === 'airgap-scrub');
    if (airgapAlone || airgapRows.length) {
      const items = alone.get('airgap-scrub')?.items ?? [];
      console.log(
        `\n### airgap-scrub throughput on ~10 KB texts\n\n${items.length} texts of ${items.map((i) => (i.bytes / 1024).toFixed(1)).join(', ')} KB (UTF-8), round robin. ` +
          'MB/s counts the input text (1 MB = 10^6 bytes).\n',
      );
      console.log('| path | conns | texts | seconds | texts/s | MB/s | p50 / p99 ms |');
      console.log('|---|---|---|---|---|---|---|');
      if (airgapAlone) {
        const p = alone.get('airgap-scrub')!;
        console.log(
          `| processor alone (sequential) | - | ${airgapAlone.texts} | ${airgapAlone.seconds.toFixed(1)} | ${fmt(airgapAlone.texts / airgapAlone.seconds)} | ${(airgapAlone.bytes / 1e6 / airgapAlone.seconds).toFixed(2)} | ${ms1(p.total.p50)} / ${ms1(p.total.p99)} |`,
        );
      }
      for (const r of airgapRows) {
        console.log(
          `| API + x402 + BullMQ + worker | ${r.connections} | ${r.result.ok2xx} | ${r.result.durationS.toFixed(1)} | ${fmt(r.result.rps)} | ${((r.result.rps * r.avgBytes) / 1e6).toFixed(2)} | ${r.result.p50} / ${r.result.p99} |`,
        );
      }
    }

    const failures = apiRows.reduce((n, r) => n + r.result.non2xx + r.result.errors + r.result.timeouts, 0);
    const schema = [...alone.values()].filter((r) => r.schemaProblems.length).map((r) => r.id);
    console.log(
      `\nPayments: ${payment.verifyMs.length} verifications (real facilitator on the dev chain), ${payment.settleCalls()} settle calls answered by the no-op; signing ${signS.toFixed(1)} s in the load generator.`,
    );
    if (skipped.length) console.log(`Skipped SKUs (no processor in the catalogue list): ${skipped.join(', ')}.`);
    console.log(
      missed.length
        ? `p99 excluding the upstream NOT below the spec average: ${missed.join(', ')}.`
        : 'Every SKU run: p99 excluding the upstream below its spec average latency.',
    );
    if (schema.length) console.log(`Output schema mismatches in phase A: ${schema.join(', ')}.`);
    console.log(`Total ${((performance.now() - tStart) / 1000).toFixed(0)} s; load average at the end ${load()}.`);
    if (failures) {
      console.log(`\nINVALID: ${failures} non-2xx responses, errors or timeouts through the API.`);
      process.exitCode = 1;
    }
  } finally {
    await cleanup();
  }
}

await main();
process.exit(process.exitCode ?? 0);
