/**
 * What `npm start` does once its signals are trapped (roles/main.ts): reads the
 * configuration (exit 2 when it is invalid or unsafe), starts the process's
 * roles, and drains on the first SIGTERM/SIGINT, whenever it comes: during
 * start-up, start-up stops at its next step and what started is drained.
 * Exit 0 once drained; 1 when start-up failed or the drain overran
 * SHUTDOWN_TIMEOUT_MS.
 */
import { ConfigError, loadConfig, settlementSafetyProblems, type Config } from '../core/config.js';
import { createLogger, type Logger } from '../core/logger.js';
import { errorMessage } from '../core/errors.js';
import { StartInterrupted, startProcess } from './process.js';
import type { ShutdownSignals } from './shutdown-signals.js';

export async function launch(signals: ShutdownSignals): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config.LOG_LEVEL, { role: config.ROLE }, { format: config.LOG_FORMAT });
  logger.info({ pid: process.pid }, 'starting');
  const drain = boundTheDrain(signals, config, logger);
  try {
    const proc = await startProcess(config, logger, { abort: signals.abort, onDrainStep: drain.onStep });
    logger.info(
      { bus: config.BUS, store: config.STORE, queue: config.QUEUE, url: proc.http.url },
      `ready: ${proc.http.url}/health`,
    );
    await proc.shutdown(await signals.received);
    process.exit(0);
  } catch (err) {
    if (err instanceof StartInterrupted) process.exit(0); // what had started is drained
    logger.fatal({ err: errorMessage(err) }, 'start-up failed');
    console.error(`start-up failed: ${errorMessage(err)}`);
    process.exit(1);
  }
}

function readConfig(): Config {
  let config: Config;
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
  return config;
}

/**
 * From the first signal on, the drain has SHUTDOWN_TIMEOUT_MS; past that the process exits 1, naming the drain
 * step that did not finish (roles/process.ts reports each step as it begins).
 */
function boundTheDrain(signals: ShutdownSignals, config: Config, logger: Logger): { onStep: (step: string) => void } {
  let deadline: NodeJS.Timeout | undefined;
  let step = 'not begun (start-up had not reached its next step)';
  signals.onEach((signal) => {
    if (deadline) {
      logger.warn({ signal }, 'already draining');
      return;
    }
    logger.info({ signal }, 'signal received');
    deadline = setTimeout(() => {
      logger.fatal(
        { err: `drain exceeded SHUTDOWN_TIMEOUT_MS=${config.SHUTDOWN_TIMEOUT_MS}`, unfinished_step: step },
        `forced exit: the drain did not finish ${step}`,
      );
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
  });
  return {
    onStep: (s) => {
      step = s;
    },
  };
}
