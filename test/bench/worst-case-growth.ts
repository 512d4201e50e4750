/**
 * Phase W of `npm run bench:utility` (issue 23): every worst-case shape of every text SKU
 * (test/helpers/worst-case-inputs.ts) at 1×, 2× and 4× the schema's maximum input size, each shape in a worker
 * thread of its own (worst-case-worker.ts) stopped past BENCH_WORST_CASE_TIMEOUT_S. Prints the time per size and
 * the ratio per doubling; a ratio above 2.3 is flagged (linear is 2; the target of the issue is ≤ 2.3). One call
 * per size, after a warm-up: the sizes are large enough for the timer. For airgap-scrub, code-denoise (per language,
 * real source files), rag-shrink, stealth-dom and summarize it then times an honest input of the maximum size
 * (printHonestMaximum) against the SKU's latency target.
 *
 * Knobs: BENCH_WORST_CASE (`1` or `all`: every SKU; or SKU ids, comma-separated; `only…` as in `only` or
 * `only:airgap-scrub` runs this phase alone and skips the rest of the bench, which needs Redis),
 * BENCH_WORST_CASE_TIMEOUT_S (120: per shape, all three sizes).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createAiProvider } from '../../core/ai/create-ai-provider.js';
import { createAirgapScrubProcessor } from '../../jobs/airgap-scrub/processor.js';
import { airgapScrubSku } from '../../jobs/airgap-scrub/sku.js';
import { createCodeDenoiseProcessor } from '../../jobs/code-denoise/processor.js';
import { codeDenoiseSku } from '../../jobs/code-denoise/sku.js';
import { createRagShrinkProcessor } from '../../jobs/rag-shrink/processor.js';
import { RAG_SHRINK_MAX_HTML, ragShrinkSku } from '../../jobs/rag-shrink/sku.js';
import { decode, extractHtml } from '../../jobs/stealth-dom/extract.js';
import { stealthDomSku } from '../../jobs/stealth-dom/sku.js';
import { createSummarizeProcessor } from '../../jobs/summarize/processor.js';
import { summarizeSku } from '../../jobs/summarize/sku.js';
import { MAX_CODE, MAX_TEXT } from '../../jobs/text-size-limits.js';
import { testConfig } from '../helpers/config.js';
import { loadArticleCorpus } from '../helpers/extraction-quality.js';
import { jobContext, processorDeps } from '../helpers/text-skus.js';
import {
  AIRGAP_SCRUB,
  CODE_DENOISE,
  HONEST_CODE_FILES,
  honestCode,
  honestHtml,
  honestText,
  HTML,
  SUMMARIZE,
  X_SENTIMENT,
} from '../helpers/worst-case-inputs.js';
import type { WorstCaseJob, WorstCaseReport } from './worst-case-worker.js';

/** The repository root (test/bench/ -> ../..). */
const ROOT = new URL('../..', import.meta.url).pathname;

/** The largest input each SKU's schema accepts (characters), and its shapes' names. */
function skus(): { sku: WorstCaseJob['sku']; max: number; shapes: string[] }[] {
  const names = (list: readonly { name: string; language?: string }[]) =>
    list.map((s) => (s.language ? `${s.language}: ${s.name}` : s.name));
  return [
    { sku: 'airgap-scrub', max: MAX_TEXT, shapes: names(AIRGAP_SCRUB) },
    { sku: 'code-denoise', max: MAX_CODE, shapes: names(CODE_DENOISE) },
    { sku: 'rag-shrink', max: RAG_SHRINK_MAX_HTML, shapes: names(HTML) },
    // A fetched page, up to the fetch's body cap.
    { sku: 'stealth-dom', max: testConfig().FETCH_MAX_BODY_BYTES, shapes: names(HTML) },
    { sku: 'summarize', max: MAX_TEXT, shapes: names(SUMMARIZE) },
    { sku: 'x-sentiment', max: 2000, shapes: names(X_SENTIMENT) },
  ];
}

/** The reports of one shape's run, cut short (with `timeout`) when the worker outlives `limitMs`. */
function runShape(job: WorstCaseJob, limitMs: number): Promise<{ reports: WorstCaseReport[]; timeout: boolean }> {
  return new Promise((resolve) => {
    const reports: WorstCaseReport[] = [];
    // The bench runs under tsx, whose loader a worker thread does not inherit: the worker registers it first.
    const entry = new URL('./worst-case-worker.ts', import.meta.url).href;
    const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
    const worker = new Worker(boot, { eval: true, workerData: job });
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve({ reports, timeout: true });
    }, limitMs);
    worker.on('message', (r: WorstCaseReport) => reports.push(r));
    worker.on('error', (err) => reports.push({ size: job.sizes[reports.length] ?? 0, error: String(err) }));
    worker.on('exit', () => {
      clearTimeout(timer);
      resolve({ reports, timeout: false });
    });
  });
}

const cell = (r: WorstCaseReport | undefined, timeout: boolean): string =>
  !r
    ? timeout
      ? 'timeout'
      : '-'
    : 'error' in r
      ? r.error.slice(0, 30)
      : `${r.ms.toFixed(r.ms < 10 ? 1 : 0)}${r.refused ? ` (${r.refused})` : ''}`;
const ratio = (a: WorstCaseReport | undefined, b: WorstCaseReport | undefined): string =>
  a && b && 'ms' in a && 'ms' in b ? `${(b.ms / a.ms).toFixed(2)}${b.ms / a.ms > 2.3 ? ' !' : ''}` : '-';

/** Runs the phase for the SKUs `wanted` names (undefined: all). */
export async function printWorstCaseGrowth(wanted: readonly string[] | undefined, limitS: number): Promise<void> {
  console.log(
    `\nW. Worst-case inputs at 1×, 2×, 4× the schema's maximum (ms per call; ratio per doubling, ! above 2.3)`,
  );
  for (const { sku, max, shapes } of skus()) {
    if (wanted && !wanted.includes(sku)) continue;
    const rows = [];
    for (const [shape, name] of shapes.entries()) {
      const { reports, timeout } = await runShape({ sku, shape, sizes: [max, 2 * max, 4 * max] }, limitS * 1000);
      const [r1, r2, r4] = [0, 1, 2].map((i) => reports[i]);
      rows.push({
        shape: name,
        '1× ms': cell(r1, timeout),
        '2× ms': cell(r2, timeout),
        '4× ms': cell(r4, timeout),
        '2×/1×': ratio(r1, r2),
        '4×/2×': ratio(r2, r4),
      });
    }
    console.log(`${sku} (maximum ${max.toLocaleString('en-US')} characters; a shape stops after ${limitS} s)`);
    console.table(rows);
    await printHonestMaximum(sku, max);
  }
}

const HONEST_CALLS = 5;

/**
 * An honest input of the schema's maximum size (honestHtml / honestText: the public article pages one after
 * another), HONEST_CALLS calls in this thread after a warm-up: p50 and p99 (of so few calls: the slowest) against
 * the SKU's latency target. For rag-shrink, stealth-dom (its extraction; the fetch is not timed) and summarize.
 */
async function printHonestMaximum(sku: WorstCaseJob['sku'], max: number): Promise<void> {
  const deps = processorDeps({}, { AI_PROVIDER: 'local' });
  const ctx = () => jobContext(3_600_000);
  if (sku === 'code-denoise') {
    const p = await createCodeDenoiseProcessor(deps);
    const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
    for (const language of Object.keys(HONEST_CODE_FILES)) {
      const code = honestCode(read, language, max);
      await timeHonest(`${sku} (${language} source files)`, code, codeDenoiseSku.latencyTargetMs, (c) =>
        p.handle({ code: c, language }, ctx()),
      );
    }
    return;
  }
  let call: (input: string) => unknown;
  let input: string;
  let target: number;
  if (sku === 'airgap-scrub') {
    const p = await createAirgapScrubProcessor(deps);
    call = (text) => p.handle({ text }, ctx());
    input = honestText(loadArticleCorpus(), max);
    target = airgapScrubSku.latencyTargetMs;
  } else if (sku === 'rag-shrink') {
    const p = await createRagShrinkProcessor(deps);
    call = (html) => p.handle({ html }, ctx());
    input = honestHtml(loadArticleCorpus(), max);
    target = ragShrinkSku.latencyTargetMs;
  } else if (sku === 'stealth-dom') {
    const page = new URL('https://example.com/a/page.html');
    call = (html) => extractHtml(decode(Buffer.from(html), null, 'html'), page, 'markdown');
    input = honestHtml(loadArticleCorpus(), max);
    target = stealthDomSku.latencyTargetMs;
  } else if (sku === 'summarize') {
    const p = await createSummarizeProcessor({ ...deps, ai: await createAiProvider(deps.config, deps.logger) });
    call = (text) => p.handle({ text }, ctx());
    input = honestText(loadArticleCorpus(), max);
    target = summarizeSku.latencyTargetMs;
  } else return;
  await timeHonest(`${sku} (article pages)`, input, target, call);
}

/** HONEST_CALLS calls of `call(input)` after a warm-up on its first 20,000 characters, printed against `target`. */
async function timeHonest(
  what: string,
  input: string,
  target: number,
  call: (input: string) => unknown,
): Promise<void> {
  await call(input.slice(0, 20_000));
  const ms: number[] = [];
  for (let i = 0; i < HONEST_CALLS; i++) {
    const t0 = performance.now();
    await call(input);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const p99 = ms[ms.length - 1]!;
  console.log(
    `${what}: honest input of the maximum size (${input.length.toLocaleString('en-US')} characters): p50 ${ms[ms.length >> 1]!.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms (${HONEST_CALLS} calls) against the latency target ${target} ms: ${p99 <= target ? 'met' : 'NOT met'}`,
  );
}
