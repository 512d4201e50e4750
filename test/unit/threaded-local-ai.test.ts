/**
 * The local AI provider run in the CPU pool (core/threads/threaded-local-ai.ts) answers exactly as the
 * in-process LocalAiProvider does (entity spans, summaries, sentiment, embeddings), and the caller's signal
 * stops a call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AiProvider } from '../../core/ai/ai-provider.js';
import { LocalAiProvider } from '../../core/ai/local/local-provider.js';
import { createCpuPool, type CpuPool } from '../../core/threads/cpu-pool.js';
import { threadedLocalAi } from '../../core/threads/threaded-local-ai.js';
import { testLogger } from '../helpers/config.js';

const VOCABULARY = 1000;
const TEXT =
  'Maria Lopez joined Northwind in 2019 as head of research. She previously led the data team at Contoso. ' +
  'Ethereum rallied after the upgrade, and traders turned bullish on strong inflows. ' +
  'Analysts expect the rally to continue while liquidity stays high. Volumes doubled on the main exchanges. ' +
  'Some warned of a correction if funding rates keep rising.';

let pool: CpuPool;
let threaded: AiProvider;
let local: LocalAiProvider;

beforeAll(async () => {
  pool = createCpuPool({ threads: 1, logger: testLogger() });
  threaded = threadedLocalAi(pool, VOCABULARY);
  local = await LocalAiProvider.create({ vocabulary: VOCABULARY });
}, 120_000);
afterAll(() => pool?.close());

describe('the local AI provider in the CPU pool', { timeout: 120_000 }, () => {
  it('answers as the in-process provider: spans, summary, sentiment, embeddings', async () => {
    expect(threaded.adapter).toBe('local');
    expect(await threaded.findSensitiveSpans(TEXT)).toEqual(await local.findSensitiveSpans(TEXT));
    const summary = { format: 'bullets' as const, maxWords: 30 };
    expect(await threaded.summarize(TEXT, summary)).toEqual(await local.summarize(TEXT, summary));
    expect(await threaded.sentiment([TEXT, 'ETH looks bearish'])).toEqual(
      await local.sentiment([TEXT, 'ETH looks bearish']),
    );
    const embed = { route: 'multilingual' as const, dimensions: 1024 };
    const [a, b] = [await threaded.embed([TEXT, 'hola'], embed), await local.embed([TEXT, 'hola'], embed)];
    expect(a.model).toBe(b.model);
    expect(a.vectors.map((v) => Array.from(v))).toEqual(b.vectors.map((v) => Array.from(v)));
  });

  it('an aborted signal stops the call with its reason', async () => {
    const controller = new AbortController();
    const call = threaded.summarize(TEXT.repeat(200), { format: 'paragraph', maxWords: 50, signal: controller.signal });
    controller.abort(new Error('caller answered'));
    await expect(call).rejects.toThrow('caller answered');
  });
});
