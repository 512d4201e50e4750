/**
 * The local AI provider (AI_PROVIDER=local) with its work in the CPU pool: the same answers as
 * LocalAiProvider (it runs in each pool thread, local-ai-tasks.ts), but summaries, sentiment, entity spans
 * and embeddings compute off the event loop, and an abort (the caller's deadline) stops them at once. The
 * worker role uses it in place of the in-process provider; the word vectors then load in the pool's threads
 * (about 40 MB each, at start-up) and not in the main thread.
 */
import type { AiProvider } from '../ai/ai-provider.js';
import type { CpuPool } from './cpu-pool.js';
import { embedTask, findSpansTask, sentimentTask, summarizeTask, warmLocalAiTask } from './local-ai-tasks.js';

export function threadedLocalAi(pool: CpuPool, vocabulary: number): AiProvider {
  pool.preload(warmLocalAiTask, [vocabulary]);
  return {
    adapter: 'local',
    findSensitiveSpans: (text, options = {}) => pool.run(findSpansTask, [vocabulary, text], options.signal),
    embed: (texts, options) =>
      pool.run(embedTask, [vocabulary, texts, options.route, options.dimensions], options.signal),
    summarize: (text, options) =>
      pool.run(summarizeTask, [vocabulary, text, options.format, options.maxWords], options.signal),
    sentiment: (texts, options = {}) => pool.run(sentimentTask, [vocabulary, texts], options.signal),
  };
}
