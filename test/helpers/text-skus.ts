/**
 * Helpers for the text SKUs' tests (airgap-scrub, rag-shrink, code-denoise):
 * processor deps from the real test config, a job context with a live
 * signal, a pino logger that writes into a buffer, and percentiles.
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { loadPairs } from '../../core/markets/pairs.js';
import type { JobContext } from '../../core/queue/queue.js';
import type { ProcessorDeps } from '../../jobs/sku-processor.js';
import { testConfig, testLogger } from './config.js';

export function processorDeps(overrides: Partial<ProcessorDeps> = {}, env: Record<string, string> = {}): ProcessorDeps {
  const config = testConfig(env);
  return { config, logger: testLogger(), pairs: loadPairs(config.PAIRS_FILE), ...overrides };
}

export function jobContext(deadlineMs = 10_000): JobContext & { controller: AbortController } {
  const controller = new AbortController();
  return { jobId: 'test-job', attempt: 1, deadline: Date.now() + deadlineMs, signal: controller.signal, controller };
}

/** A pino logger at `level` whose every line lands in `lines()` (and nowhere else). */
export function bufferLogger(level = 'debug'): { logger: Logger; lines: () => string } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  // The project's redact list (core/logger.ts) is deliberately NOT copied: the test must see what would be written without it.
  const logger = pino({ level, base: { service: 'test' } }, sink);
  return { logger, lines: () => chunks.join('') };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** Runs `fn` `runs` times after `warmup` untimed runs; p50/p99 in ms. */
export async function timeRuns(
  fn: () => Promise<unknown>,
  runs: number,
  warmup = 5,
): Promise<{ p50: number; p99: number; mean: number }> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    mean: times.reduce((a, b) => a + b, 0) / times.length,
  };
}
