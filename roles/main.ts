/**
 * Entry point of `npm start`. With no configuration it runs every role in one
 * process on the embedded adapters: no server, no key, no internet.
 */
import { ConfigError, loadConfig, settlementSafetyProblems } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import { errorMessage } from '../core/errors.js';
import { exitOnSignals, startProcess } from './process.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  // A process serving paid routes fails closed in production, before anything starts.
  const unsafe = config.ROLE === 'all' || config.ROLE === 'api' ? settlementSafetyProblems(config) : [];
  if (unsafe.length) {
    console.error(`Refusing to start:\n${unsafe.map((p) => `  - ${p}`).join('\n')}`);
    process.exit(2);
  }
  const logger = createLogger(config.LOG_LEVEL, { role: config.ROLE }, { format: config.LOG_FORMAT });
  try {
    const proc = await startProcess(config, logger);
    exitOnSignals(proc, config, logger);
    logger.info(
      { bus: config.BUS, store: config.STORE, queue: config.QUEUE, url: proc.http.url },
      `ready: ${proc.http.url}/health`,
    );
  } catch (err) {
    logger.fatal({ err: errorMessage(err) }, 'start-up failed');
    console.error(`start-up failed: ${errorMessage(err)}`);
    process.exit(1);
  }
}

void main();
