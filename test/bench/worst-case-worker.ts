/**
 * One worst-case shape of one text SKU, timed in a worker thread of its own (worst-case-growth.ts starts it, and
 * stops it when it runs past its time limit: synchronous processing cannot be interrupted otherwise). It builds
 * the SKU's processor as the worker role does, warms it up on a small input of the shape, then runs the shape at
 * each size in `sizes`, posting `{ size, ms }` after each (with `refused`: the code of a 400 the SKU answers
 * before its work, e.g. code-denoise's `nesting_too_deep`, timed like an answer), or `{ size, error }` when the call
 * throws anything else.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createAiProvider } from '../../core/ai/create-ai-provider.js';
import { JobError } from '../../core/queue/queue.js';
import { createAirgapScrubProcessor, redact } from '../../jobs/airgap-scrub/processor.js';
import { createCodeDenoiseProcessor, denoise } from '../../jobs/code-denoise/processor.js';
import { resolveLanguage } from '../../jobs/code-denoise/languages.js';
import { createRagShrinkProcessor } from '../../jobs/rag-shrink/processor.js';
import { shrinkHtml } from '../../jobs/rag-shrink/shrink.js';
import { decode, extractHtml } from '../../jobs/stealth-dom/extract.js';
import { createSummarizeProcessor } from '../../jobs/summarize/processor.js';
import { createXSentimentProcessor } from '../../jobs/x-sentiment/processor.js';
import { jobContext, processorDeps } from '../helpers/text-skus.js';
import { AIRGAP_SCRUB, CODE_DENOISE, HTML, SUMMARIZE, X_SENTIMENT } from '../helpers/worst-case-inputs.js';

export interface WorstCaseJob {
  sku: 'airgap-scrub' | 'code-denoise' | 'rag-shrink' | 'stealth-dom' | 'summarize' | 'x-sentiment';
  /** Index into the SKU's shape list (worst-case-inputs.ts). */
  shape: number;
  sizes: number[];
}

export type WorstCaseReport = { size: number; ms: number; refused?: string } | { size: number; error: string };

type Call = (input: string) => unknown;

async function callOf(job: WorstCaseJob): Promise<{ call: Call; make: (size: number) => string }> {
  // A deadline far away: the bench measures the work, the parent thread enforces the limit.
  const ctx = () => jobContext(3_600_000);
  const deps = processorDeps({}, { AI_PROVIDER: 'local', AI_LOCAL_VOCABULARY: '1000' });
  const max = job.sizes[0]!;
  switch (job.sku) {
    // Past 1× each processor refuses the input (its schema's maximum): the growth is timed on its inner function.
    case 'airgap-scrub': {
      const p = await createAirgapScrubProcessor(deps);
      const region = deps.config.AIRGAP_PHONE_REGION as Parameters<typeof redact>[1];
      return {
        call: (text) => (text.length <= max ? p.handle({ text }, ctx()) : redact(text, region)),
        make: AIRGAP_SCRUB[job.shape]!.make,
      };
    }
    case 'code-denoise': {
      const p = await createCodeDenoiseProcessor(deps);
      const shape = CODE_DENOISE[job.shape]!;
      const { language, alias } = resolveLanguage(shape.language)!;
      return {
        call: (code) =>
          code.length <= max ? p.handle({ code, language: shape.language }, ctx()) : denoise(code, language, alias),
        make: shape.make,
      };
    }
    case 'rag-shrink': {
      const p = await createRagShrinkProcessor(deps);
      return {
        call: (html) =>
          html.length <= max ? p.handle({ html, keepLinks: true }, ctx()) : shrinkHtml(html, { keepLinks: true }),
        make: HTML[job.shape]!.make,
      };
    }
    case 'stealth-dom': {
      const page = new URL('https://example.com/a/page.html');
      return {
        call: (html) => extractHtml(decode(Buffer.from(html), null, 'html'), page, 'markdown'),
        make: HTML[job.shape]!.make,
      };
    }
    case 'summarize': {
      const p = await createSummarizeProcessor({ ...deps, ai: await createAiProvider(deps.config, deps.logger) });
      return { call: (text) => p.handle({ text }, ctx()), make: SUMMARIZE[job.shape]!.make };
    }
    case 'x-sentiment': {
      const p = await createXSentimentProcessor({ ...deps, ai: await createAiProvider(deps.config, deps.logger) });
      return { call: (topic) => p.handle({ topic }, ctx()), make: X_SENTIMENT[job.shape]!.make };
    }
  }
}

async function run(job: WorstCaseJob): Promise<void> {
  const { call, make } = await callOf(job);
  await call(make(1000));
  for (const size of job.sizes) {
    const input = make(size);
    const t0 = performance.now();
    try {
      await call(input);
      parentPort!.postMessage({ size, ms: performance.now() - t0 } satisfies WorstCaseReport);
    } catch (err) {
      if (err instanceof JobError && err.status === 400) {
        parentPort!.postMessage({ size, ms: performance.now() - t0, refused: err.code } satisfies WorstCaseReport);
        continue;
      }
      parentPort!.postMessage({
        size,
        error: err instanceof Error ? `${err.name}: ${err.message.slice(0, 80)}` : String(err),
      } satisfies WorstCaseReport);
      return;
    }
  }
}

if (parentPort) await run(workerData as WorstCaseJob);
