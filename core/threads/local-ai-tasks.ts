/**
 * The thread side of the local AI provider in the CPU pool (threaded-local-ai.ts): each pool thread holds one
 * LocalAiProvider (core/ai/local/local-provider.ts), built on its first task or by the pool's warm-up
 * (`warmLocalAi`, run before the thread takes work), and answers the provider's calls with it. Arguments and
 * results are plain data (structured clone); an abort terminates the thread (cpu-pool.ts), so no signal here.
 */
import type { EmbeddingRoute, SummaryFormat } from '../ai/ai-provider.js';
import { LocalAiProvider } from '../ai/local/local-provider.js';
import { cpuTask } from './cpu-pool.js';

let provider: Promise<LocalAiProvider> | undefined;
let providerVocabulary: number | undefined;

/** This thread's provider: one per thread, for the one vocabulary the worker is configured with. */
function local(vocabulary: number): Promise<LocalAiProvider> {
  if (provider && providerVocabulary !== vocabulary)
    throw new Error(`local AI thread: built for ${providerVocabulary} words, asked for ${vocabulary}`);
  providerVocabulary = vocabulary;
  provider ??= LocalAiProvider.create({ vocabulary });
  return provider;
}

export async function warmLocalAi(vocabulary: number): Promise<void> {
  await local(vocabulary);
}

export async function findSpansLocal(vocabulary: number, text: string) {
  return (await local(vocabulary)).findSensitiveSpans(text);
}

export async function embedLocal(vocabulary: number, texts: string[], route: EmbeddingRoute, dimensions: number) {
  return (await local(vocabulary)).embed(texts, { route, dimensions });
}

export async function summarizeLocal(vocabulary: number, text: string, format: SummaryFormat, maxWords: number) {
  return (await local(vocabulary)).summarize(text, { format, maxWords });
}

export async function sentimentLocal(vocabulary: number, texts: string[]) {
  return (await local(vocabulary)).sentiment(texts);
}

export const warmLocalAiTask = cpuTask(import.meta.url, { warmLocalAi });
export const findSpansTask = cpuTask(import.meta.url, { findSpansLocal });
export const embedTask = cpuTask(import.meta.url, { embedLocal });
export const summarizeTask = cpuTask(import.meta.url, { summarizeLocal });
export const sentimentTask = cpuTask(import.meta.url, { sentimentLocal });
