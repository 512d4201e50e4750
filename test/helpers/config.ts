/**
 * Configuration for tests: the project's own config schema, read from the
 * environment (so CI can point at other ports) with quiet logs.
 * Real engines are those started by `npm run engines:up`.
 */
import { loadConfig, type Config } from '../../core/config.js';
import { createLogger } from '../../core/logger.js';

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // A fixed simulated market in tests (a start draws a random seed otherwise).
    SIM_SEED: '402',
    ...process.env,
    NODE_ENV: 'test',
    ...overrides,
  });
}

export const testLogger = () => createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

/** A name no other test run uses: tests never share topics, groups, databases or queues. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Polls `probe` until it returns a value accepted by `done` or the timeout passes. */
export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15000,
  intervalMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!done(last)) {
    if (Date.now() > until)
      throw new Error(
        `condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
    last = await probe();
  }
  return last;
}
