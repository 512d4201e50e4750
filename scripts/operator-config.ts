/**
 * The config of an operator command that works on the Kafka topics of a
 * deployment (`npm run replay`, `npm run dlq`): the same environment as the
 * roles; a bad variable, or the in-process bus (whose topics live inside the
 * running app), ends the command with the command's own usage message.
 */
import { ConfigError, loadConfig, type Config } from '../core/config.js';

export function operatorConfig(fail: (message: string) => never, whyNotMemory: string): Config {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
  if (config.BUS === 'memory') fail(`BUS=memory: ${whyNotMemory}; set BUS=kafka`);
  return config;
}
