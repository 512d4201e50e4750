/**
 * Starts the roles this process runs on the ports they need, and drains on
 * SIGTERM/SIGINT: stop intake (HTTP, ingestors), let consumers finish and
 * commit, let workers finish their jobs, then flush and close the ports.
 * The wiring of the roles lives here, above them all: core knows no role.
 */
import { hostname } from 'node:os';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import { HealthRegistry } from '../core/health.js';
import { createBus, createQueue, createStore } from '../core/ports.js';
import { ROLE_PORTS, type RoleContext, type RoleName, type RunningRole } from '../core/role.js';
import { errorMessage } from '../core/errors.js';
import { OperationHealth } from '../core/operation-health.js';
import { familiesOf, Readiness } from '../core/readiness.js';
import { observedBus } from '../core/bus/observed-bus.js';
import { observedStore } from '../core/store/observed-store.js';
import type { RunningApi } from '../api/role.js';
import type { HttpServer } from '../api/http-server.js';
import type { JobSku } from '../jobs/job-sku.js';
import type { Bus } from '../core/bus/bus.js';
import type { Store } from '../core/store/store.js';
import type { JobQueue } from '../core/queue/queue.js';

import { SERVICE_VERSION } from '../core/version.js';

export { SERVICE_VERSION };

/** Order of start-up; shutdown runs in the same order (intake first). */
const ROLE_ORDER: RoleName[] = ['api', 'ingest', 'aggregate', 'worker'];
const START_ORDER: RoleName[] = ['worker', 'aggregate', 'ingest', 'api'];

export interface RunningProcess {
  ctx: RoleContext;
  roles: RunningRole[];
  /** The api role's server, or the ops server (/livez, /readyz, /health, /metrics) of a process without it. */
  http: HttpServer;
  /** What the process can serve now, per family (core/readiness.ts); /readyz and the routes read it. */
  readiness: Readiness;
  shutdown(reason: string): Promise<void>;
}

/** What the process wires into its roles; every field has the production default. */
export interface ProcessWiring {
  /** The job SKUs the api role declares and the worker role serves; default the catalogue's list. */
  jobSkus?: readonly JobSku[];
  /** Aborted by a shutdown signal: start-up stops at its next step, drains what started, throws StartInterrupted. */
  abort?: AbortSignal;
  /** Told each step of the drain as it begins (the forced exit names the one that did not finish). */
  onDrainStep?: (step: string) => void;
}

/** Start-up was stopped by a shutdown signal; what had started is drained. */
export class StartInterrupted extends Error {
  constructor(readonly reason: string) {
    super(`start-up interrupted by ${reason}; drained`);
    this.name = 'StartInterrupted';
  }
}

export async function startProcess(
  config: Config,
  logger: Logger,
  wiring: ProcessWiring = {},
): Promise<RunningProcess> {
  const roles: RoleName[] = config.ROLE === 'all' ? ROLE_ORDER : [config.ROLE];
  const needed = new Set(roles.flatMap((r) => ROLE_PORTS[r]));
  const health = new HealthRegistry({ version: SERVICE_VERSION, role: config.ROLE });
  const ctx: RoleContext = {
    config,
    logger,
    health,
    instanceId: `${hostname()}:${process.pid}`,
    ...(wiring.abort ? { abort: wiring.abort } : {}),
  };
  /** Readiness, made once the ports are open (it needs to know whether workers send heartbeats); the drain stops it. */
  const late: { readiness?: Readiness } = {};
  let bus: Bus | undefined;
  let store: Store | undefined;
  let queue: JobQueue | undefined;
  let ops: HttpServer | undefined;
  const running: RunningRole[] = [];

  // Defined before anything starts, so a signal during start-up drains whatever has started by then.
  let stopping: Promise<void> | undefined;
  const shutdown = (reason: string) =>
    (stopping ??= (async () => {
      logger.info({ reason }, 'draining');
      const step = (s: string) => wiring.onDrainStep?.(s);
      late.readiness?.stop();
      for (const name of ROLE_ORDER) {
        const role = running.find((r) => r.name === name);
        if (!role) continue;
        step(`stopping role ${name}`);
        await role.stop().catch((err) => logger.error({ role: name, err: errorMessage(err) }, 'role stop failed'));
      }
      step('closing the ops server');
      await ops?.close();
      // Queue first (workers finish in-flight jobs), then the bus (producers flushed), then the store.
      for (const [name, port] of [
        ['queue', queue],
        ['bus', bus],
        ['store', store],
      ] as const) {
        step(`closing port ${name}`);
        if (port)
          await port
            .close()
            .catch((err: unknown) => logger.error({ port: name, err: errorMessage(err) }, 'port close failed'));
      }
      for (const role of running) {
        step(`closing role ${role.name}`);
        await role
          .close?.()
          .catch((err: unknown) => logger.error({ role: role.name, err: errorMessage(err) }, 'role close failed'));
      }
      step('done');
      logger.info('drained');
    })());
  /** Between steps: a shutdown signal ends start-up here, drained. */
  const checkpoint = async () => {
    const { abort } = wiring;
    if (!abort?.aborted) return;
    const reason = String(abort.reason ?? 'abort');
    await shutdown(reason);
    throw new StartInterrupted(reason);
  };

  await checkpoint();
  // The SKU contracts (and their schemas' dependencies) are loaded only by a process that serves or runs SKUs.
  const jobSkus =
    wiring.jobSkus ??
    (roles.includes('api') || roles.includes('worker') ? (await import('../jobs/job-list.js')).JOB_SKUS : []);

  // Ports first; each adapter fails fast with an error naming its variable. A port that opened is closed by the
  // drain even when another failed.
  const opened = await Promise.allSettled([
    needed.has('bus') ? createBus(config, logger).then((p) => (bus = p)) : undefined,
    needed.has('store') ? createStore(config, logger).then((p) => (store = p)) : undefined,
    needed.has('queue') ? createQueue(config, logger).then((p) => (queue = p)) : undefined,
  ]);
  const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await shutdown('start-up failed');
    throw failed.reason;
  }
  await checkpoint();
  // bus and store report what their operations do, not only whether they answer a ping (core/operation-health.ts).
  const busOps = new OperationHealth();
  const storeOps = new OperationHealth();
  ctx.bus = bus && observedBus(bus, busOps);
  ctx.store = store && observedStore(store, storeOps);
  ctx.queue = queue;
  if (bus) {
    const b = bus;
    health.registerPing(
      'bus',
      b.adapter,
      () => b.ping(),
      () => busOps.report(),
    );
  }
  if (store) {
    const s = store;
    const report = await ctx.store!.migrate();
    logger.info({ applied: report.applied, already_applied: report.skipped.length }, 'migrations');
    health.registerPing(
      'store',
      s.adapter,
      () => s.ping(),
      () => storeOps.report(),
    );
  }
  if (queue) {
    const q = queue;
    health.registerPing('queue', q.adapter, () => q.ping());
  }
  // Its probes run once every role has registered its components (below); /health's verdict is its own. Workers
  // in this process (in-process queue) have no heartbeat to wait for: job routes then need the queue alone.
  const r = new Readiness(
    health,
    config.ROLE,
    familiesOf(roles, queue?.workerHeartbeats ? [] : ['workers']),
    config.READINESS_REFRESH_MS,
  );
  late.readiness = r;

  let api: RunningApi | undefined;
  // Role modules are imported only for the roles this process runs (ccxt and viem are heavy to load).
  for (const name of START_ORDER.filter((r) => roles.includes(r))) {
    await checkpoint();
    let role: RunningRole;
    try {
      if (name === 'api') role = api = await (await import('../api/role.js')).startApi(ctx, jobSkus, r);
      else if (name === 'ingest') role = await (await import('../ingest/role.js')).startIngest(ctx);
      else if (name === 'aggregate') role = await (await import('../aggregate/role.js')).startAggregate(ctx);
      else role = await (await import('../jobs/role.js')).startWorker(ctx, jobSkus);
    } catch (err) {
      await checkpoint(); // a role that gave up because of a shutdown signal: drained, StartInterrupted
      throw err;
    }
    running.push(role);
    logger.info({ role: name }, 'role started');
  }
  if (!api) ops = await (await import('../api/ops-server.js')).startOpsServer(ctx, r);
  await checkpoint();
  await r.start();
  const http = api?.http ?? (ops as HttpServer);
  return { ctx, roles: running, http, readiness: r, shutdown };
}
