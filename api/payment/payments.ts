/**
 * One call that wires the payment port for the api role: the configured
 * settlement mode (settlement.ts), the replay guard (memory, or Redis when
 * configured), the Koa gate, and the `settlement` health probe.
 *
 *   const payments = await startPayments(config, { logger, health });
 *   router.get(path, validate, preflight, payments.gate, handler);   // ctx.state.paidRoute set by validate/preflight
 *   payments.core                                                    // the transport-neutral core, for other doors (MCP)
 *   ...on shutdown: await payments.stop();
 */
import type { Config } from '../../core/config.js';
import type { HealthRegistry } from '../../core/health.js';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import { createPaymentCore, type PaymentCore } from './payment-core.js';
import { gateOverCore, type PaymentGate } from './payment-gate.js';
import { createReplayGuard, type ReplayGuard } from './replay-guard.js';
import { startSettlement, type PaymentSettlement } from './settlement.js';

export interface Payments {
  /** The transport-neutral payment core: every door (HTTP gate, MCP) goes through it. */
  core: PaymentCore;
  /** The HTTP door (Koa middleware) over `core`. */
  gate: PaymentGate;
  settlement: PaymentSettlement;
  replayGuard: ReplayGuard;
  stop(): Promise<void>;
}

export interface StartPaymentsOptions {
  logger: Logger;
  health?: HealthRegistry;
  /** Public origin used in challenges' `resource.url`; default each request's own origin. */
  publicBaseUrl?: string;
}

/** `auto` uses Redis when the deployment already runs one for the queue (QUEUE=bullmq). */
export function replayStoreOf(config: Pick<Config, 'PAYMENT_REPLAY_STORE' | 'QUEUE'>): 'memory' | 'redis' {
  if (config.PAYMENT_REPLAY_STORE !== 'auto') return config.PAYMENT_REPLAY_STORE;
  return config.QUEUE === 'bullmq' ? 'redis' : 'memory';
}

export async function startPayments(config: Config, options: StartPaymentsOptions): Promise<Payments> {
  const { logger } = options;
  const settlement = await startSettlement(config, { logger });
  const store = replayStoreOf(config);
  const replayGuard = createReplayGuard({ store, redisUrl: config.REDIS_URL, prefix: `${config.QUEUE_PREFIX}:x402:nonce:` });
  const core = createPaymentCore({
    network: settlement.network,
    asset: settlement.asset,
    assetName: settlement.assetName,
    assetVersion: settlement.assetVersion,
    payTo: settlement.payTo,
    maxTimeoutSeconds: settlement.maxTimeoutSeconds,
    facilitator: settlement.facilitator,
    replayGuard,
    logger,
  });
  const gate = gateOverCore(core, options.publicBaseUrl ? { publicBaseUrl: options.publicBaseUrl } : {});

  options.health?.register('settlement', async () => {
    const result = await settlement.probe();
    try {
      await replayGuard.ping();
    } catch (err) {
      return { ...result, status: 'down', replay_store: store, reason: `replay guard (${store}): ${errorMessage(err)}` };
    }
    return { ...result, replay_store: store };
  });

  // Learn the facilitator's supported kinds now; a failure is retried by the first paid request.
  gate.ready().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'x402: facilitator not ready at start-up'));
  logger.info({ mode: settlement.mode, network: settlement.network, asset: settlement.asset, pay_to: settlement.payTo, replay_store: store }, 'x402 payments ready');

  return {
    core,
    gate,
    settlement,
    replayGuard,
    stop: async () => {
      await replayGuard.close();
      await settlement.stop();
    },
  };
}
