import type { Config } from './config.js';
import type { Logger } from './logger.js';
import type { HealthRegistry } from './health.js';
import type { Bus } from './bus/bus.js';
import type { Store } from './store/store.js';
import type { JobQueue } from './queue/queue.js';

export type RoleName = 'api' | 'ingest' | 'aggregate' | 'worker';

/** What a role gets from the process: configuration, logs, health, and the ports it asked for. */
export interface RoleContext {
  config: Config;
  logger: Logger;
  health: HealthRegistry;
  /** Identifies this process in canaries and job results: host:pid. */
  instanceId: string;
  bus?: Bus;
  store?: Store;
  queue?: JobQueue;
  /**
   * Aborted by a shutdown signal during start-up: a role whose start waits long (the worker's thread warm-up)
   * stops waiting, releases what it holds and rejects with the signal's reason; the process drains the rest.
   */
  abort?: AbortSignal;
}

export interface RunningRole {
  name: RoleName;
  /** Drains: stop intake, finish or requeue in-flight work, commit. Ports are closed by the process afterwards. */
  stop(): Promise<void>;
  /** Optional: releases what the role holds after the ports closed (e.g. the worker's OCR pool once in-flight jobs finished). */
  close?(): Promise<void>;
}

/** Which ports each role needs; the process creates the union for the roles it runs. */
export const ROLE_PORTS: Record<RoleName, ('bus' | 'store' | 'queue')[]> = {
  api: ['store', 'queue'],
  ingest: ['bus'],
  aggregate: ['bus', 'store'],
  worker: ['queue', 'store'],
};

export function need<T>(value: T | undefined, what: string, role: RoleName): T {
  if (value === undefined) throw new Error(`role ${role} needs the ${what} port`);
  return value;
}
