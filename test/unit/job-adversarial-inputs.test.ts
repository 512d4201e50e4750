/**
 * The text SKUs run in time linear in their input, on inputs built to be their worst (issue 23, "Job SKUs that
 * cannot be weaponized"; the shapes: test/helpers/worst-case-inputs.ts). Each shape is timed at a size s and at
 * 4·s, each call the SKU's own processor (or, for stealth-dom, whose processor fetches, its extraction), and the
 * ratio of the two times must stay under 16: linear work gives about 4, quadratic 16, cubic 64. The guard is
 * generous on purpose (a shared CI machine is noisy); there is no absolute time limit, since a CI machine can be
 * ten times slower than this one. Times are the median of three, after a warm-up (a ratio over the guard is
 * timed again as the best of five: load only adds time); s doubles from a small start
 * until one call takes a few milliseconds (below that, timer noise would decide the ratio), never past a quarter
 * of the schema's maximum (so 4·s is at most the maximum). The issue's own inputs (seconds to a minute before the
 * card scan was bounded) are timed too; their times are printed, only their growth is asserted.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createAiProvider } from '../../core/ai/create-ai-provider.js';
import type { AiProvider } from '../../core/ai/ai-provider.js';
import { createAirgapScrubProcessor } from '../../jobs/airgap-scrub/processor.js';
import { createCodeDenoiseProcessor } from '../../jobs/code-denoise/processor.js';
import { createRagShrinkProcessor } from '../../jobs/rag-shrink/processor.js';
import { RAG_SHRINK_MAX_HTML } from '../../jobs/rag-shrink/sku.js';
import { decode, extractHtml } from '../../jobs/stealth-dom/extract.js';
import { createSummarizeProcessor } from '../../jobs/summarize/processor.js';
import { createXSentimentProcessor } from '../../jobs/x-sentiment/processor.js';
import { MAX_CODE, MAX_TEXT } from '../../jobs/text-size-limits.js';
import { jobContext, processorDeps } from '../helpers/text-skus.js';
import {
  AIRGAP_ISSUE_INPUTS,
  AIRGAP_SCRUB,
  CODE_DENOISE,
  HTML,
  SUMMARIZE,
  X_SENTIMENT,
  type WorstCase,
} from '../helpers/worst-case-inputs.js';

/** time(4·s) / time(s) must stay below this: linear is ~4, quadratic 16. */
const MAX_RATIO = 16;
/** One call at size s should take at least this long (ms) before the ratio is trusted. */
const MIN_CALL_MS = 4;
/** Calls are repeated until a sample covers this long (ms): tiny inputs are timed over many calls. */
const MIN_SAMPLE_MS = 20;
/** The smallest s tried, and the largest for the big-input SKUs (the test's own time budget). */
const FIRST_SIZE = 500;
const MAX_TESTED_SIZE = 32_000;

type Call = (input: string) => unknown;

/** Mean ms per call of `call(input)`, over enough calls to fill MIN_SAMPLE_MS. */
async function sample(call: Call, input: string): Promise<number> {
  let calls = 0;
  const t0 = performance.now();
  let elapsed = 0;
  do {
    await call(input);
    calls++;
    elapsed = performance.now() - t0;
  } while (elapsed < MIN_SAMPLE_MS);
  return elapsed / calls;
}

async function median(call: Call, input: string): Promise<number> {
  const times = [await sample(call, input), await sample(call, input), await sample(call, input)];
  return times.sort((a, b) => a - b)[1]!;
}

interface Growth {
  size: number;
  ms: number;
  ms4: number;
  ratio: number;
}

/** The growth of `call` from s to 4·s on `make`'s input, s found as the header says; `maxSize`: the schema's. */
async function growth(call: Call, make: (size: number) => string, maxSize: number): Promise<Growth> {
  const limit = Math.min(Math.floor(maxSize / 4), MAX_TESTED_SIZE);
  let size = Math.min(FIRST_SIZE, limit);
  await call(make(size)); // warm-up: compile the code paths this shape takes
  let ms = await median(call, make(size));
  while (ms < MIN_CALL_MS && size * 2 <= limit) {
    size *= 2;
    ms = await median(call, make(size));
  }
  let ms4 = await median(call, make(size * 4));
  if (ms4 / ms >= MAX_RATIO) {
    // A busy machine only ever adds time: before judging, both sizes are timed again as the best of five samples.
    ms = await best(call, make(size));
    ms4 = await best(call, make(size * 4));
  }
  return { size, ms, ms4, ratio: ms4 / ms };
}

async function best(call: Call, input: string): Promise<number> {
  let least = Infinity;
  for (let n = 0; n < 5; n++) least = Math.min(least, await sample(call, input));
  return least;
}

const rows: { sku: string; shape: string; size: number; ms: string; ms4: string; ratio: string }[] = [];

async function expectLinear(sku: string, shape: WorstCase, call: Call, maxSize: number): Promise<void> {
  const g = await growth(call, shape.make, maxSize);
  rows.push({
    sku,
    shape: shape.name,
    size: g.size,
    ms: g.ms.toFixed(2),
    ms4: g.ms4.toFixed(2),
    ratio: g.ratio.toFixed(1),
  });
  expect(
    g.ratio,
    `${sku} / ${shape.name}: ${g.ms.toFixed(2)} ms at ${g.size} chars, ${g.ms4.toFixed(2)} ms at 4×`,
  ).toBeLessThan(MAX_RATIO);
}

// Each case runs a warm-up and three calls at s and at 4·s: at load 15 one took over the default 60 s.
vi.setConfig({ testTimeout: 300_000 });

afterAll(() => {
  console.log('worst-case inputs: ms per call at s and 4·s characters');
  console.table(rows);
});

const deps = processorDeps({}, { AI_PROVIDER: 'local', AI_LOCAL_VOCABULARY: '1000' });
const ai: AiProvider = await createAiProvider(deps.config, deps.logger);
const airgap = await createAirgapScrubProcessor(deps);
const scrub: Call = (text) => airgap.handle({ text }, jobContext());

describe('airgap-scrub: worst-case inputs grow linearly', () => {
  it("runs the issue's inputs in milliseconds, and 4× them linearly", async () => {
    for (const { name, text } of AIRGAP_ISSUE_INPUTS) {
      await scrub(text);
      let ms = await median(scrub, text);
      let ms4 = await median(scrub, text.repeat(4));
      if (ms4 / ms >= MAX_RATIO) [ms, ms4] = [await best(scrub, text), await best(scrub, text.repeat(4))];
      console.log(
        `airgap-scrub, the issue's ${name} (${text.length} chars): ${ms.toFixed(1)} ms; 4×: ${ms4.toFixed(1)} ms`,
      );
      expect(ms4 / ms, name).toBeLessThan(MAX_RATIO);
    }
  });

  for (const shape of AIRGAP_SCRUB) it(shape.name, () => expectLinear('airgap-scrub', shape, scrub, MAX_TEXT));
});

describe('code-denoise: worst-case inputs grow linearly', async () => {
  const processor = await createCodeDenoiseProcessor(deps);
  for (const shape of CODE_DENOISE) {
    // Nests past MAX_CODE_DEPTH are refused before the parse (jobs/code-denoise/nesting-depth.ts): timed as well.
    const call: Call = (code) =>
      processor.handle({ code, language: shape.language }, jobContext()).catch((err: unknown) => {
        if ((err as { code?: string }).code !== 'nesting_too_deep') throw err;
      });
    it(`${shape.language}: ${shape.name}`, () => expectLinear('code-denoise', shape, call, MAX_CODE));
  }
});

describe('rag-shrink: worst-case inputs grow linearly', async () => {
  const processor = await createRagShrinkProcessor(deps);
  const call: Call = (html) => processor.handle({ html, keepLinks: true }, jobContext());
  for (const shape of HTML) it(shape.name, () => expectLinear('rag-shrink', shape, call, RAG_SHRINK_MAX_HTML));
});

describe('stealth-dom: extraction of worst-case pages grows linearly', () => {
  const page = new URL('https://example.com/a/page.html');
  // The body cap of a fetch (FETCH_MAX_BODY_BYTES) bounds what reaches the extraction.
  const maxBody = deps.config.FETCH_MAX_BODY_BYTES;
  for (const format of ['markdown', 'text'] as const) {
    const call: Call = (html) => extractHtml(decode(Buffer.from(html), null, 'html'), page, format);
    for (const shape of HTML) it(`${format}: ${shape.name}`, () => expectLinear('stealth-dom', shape, call, maxBody));
  }
});

describe('summarize (local provider): worst-case inputs grow linearly', async () => {
  const processor = await createSummarizeProcessor({ ...deps, ai });
  const call: Call = (text) => processor.handle({ text }, jobContext());
  for (const shape of SUMMARIZE) it(shape.name, () => expectLinear('summarize', shape, call, MAX_TEXT));
});

describe('x-sentiment (local provider): worst-case topics grow linearly', async () => {
  const processor = await createXSentimentProcessor({ ...deps, ai });
  const call: Call = (topic) => processor.handle({ topic }, jobContext());
  // The schema's maximum topic: 2,000 characters.
  for (const shape of X_SENTIMENT) it(shape.name, () => expectLinear('x-sentiment', shape, call, 2000));
});
