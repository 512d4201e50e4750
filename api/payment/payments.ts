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
import { settlementSafetyProblems, type Config } from '../../core/config.js';
import type { HealthRegistry } from '../../core/health.js';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import { createPaymentCore, type PaymentCore } from './payment-core.js';
import { gateOverCore, type PaymentGate } from './payment-gate.js';
import { createReplayGuard, type ReplayGuard } from './replay-guard.js';
import { announceApiUrl } from './dev-chain.js';
import { startSettlement, type PaymentSettlement } from './settlement.js';

export interface Payments {
  /** The transport-neutral payment core: every door (HTTP gate, MCP) goes through it. */
  core: PaymentCore;
  /** The HTTP door (Koa middleware) over `core`. */
  gate: PaymentGate;
  settlement: PaymentSettlement;
  replayGuard: ReplayGuard;
  /** The server listens at `url`: the dev chain's info file tells `npm run pay` where. */
  listening(url: string): Promise<void>;
  stop(): Promise<void>;
}

export interface StartPaymentsOptions {
  logger: Logger;
  health?: HealthRegistry;
}

/** `auto` uses Redis when the deployment already runs one for the queue (QUEUE=bullmq). */
export function replayStoreOf(config: Pick<Config, 'PAYMENT_REPLAY_STORE' | 'QUEUE'>): 'memory' | 'redis' {
  if (config.PAYMENT_REPLAY_STORE !== 'auto') return config.PAYMENT_REPLAY_STORE;
  return config.QUEUE === 'bullmq' ? 'redis' : 'memory';
}

export async function startPayments(config: Config, options: StartPaymentsOptions): Promise<Payments> {
  const { logger } = options;
  const store = replayStoreOf(config);
  // Replicas that share the replay store share the settler's nonce sequence through it too.
  const nonceStore =
    store === 'redis'
      ? { kind: 'redis' as const, url: config.REDIS_URL, prefix: `${config.QUEUE_PREFIX}:x402:settler:` }
      : { kind: 'memory' as const };
  const settlement = await startSettlement(config, { logger, nonceStore });
  const replayGuard = createReplayGuard({
    store,
    redisUrl: config.REDIS_URL,
    prefix: `${config.QUEUE_PREFIX}:x402:nonce:`,
  });
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
  // Challenges' `resource.url`: PUBLIC_BASE_URL, or each request's own origin.
  const gate = gateOverCore(core, config.PUBLIC_BASE_URL ? { publicBaseUrl: config.PUBLIC_BASE_URL } : {});
  // A verified payment whose handler failed is not settled: its reservation goes back to the payer.
  const local = settlement.local;
  if (local)
    core.resourceServer.onVerifiedPaymentCanceled(async ({ paymentPayload }) =>
      local.release(paymentPayload as Parameters<typeof local.release>[0]),
    );

  const unsafe =
    config.NODE_ENV === 'production' &&
    config.PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION &&
    settlementSafetyProblems({ ...config, PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION: false }).length > 0;
  const live = {
    mode: settlement.mode,
    network: settlement.network,
    asset: settlement.asset,
    pay_to: settlement.payTo,
    replay_store: store,
    ...(unsafe ? { unsafe_test_payments: true } : {}),
  };
  options.health?.register('settlement', async () => {
    const result = { ...(await settlement.probe()), ...live };
    const record = core.settlementRecord();
    const history = {
      ...(record.lastSettledAt ? { last_settled_at: record.lastSettledAt } : {}),
      ...(record.lastError ? { last_settlement_error: record.lastError } : {}),
    };
    try {
      await replayGuard.ping();
    } catch (err) {
      return { ...result, ...history, status: 'down', reason: `replay guard (${store}): ${errorMessage(err)}` };
    }
    if (result.status === 'ok' && record.failing && record.lastError) {
      return {
        ...result,
        ...history,
        status: 'degraded',
        reason: `the last settlement failed: ${record.lastError.reason}`,
      };
    }
    return { ...result, ...history };
  });

  // Learn the facilitator's supported kinds now; a failure is retried by the first paid request.
  gate
    .ready()
    .catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'x402: facilitator not ready at start-up'));
  if (unsafe)
    logger.error(
      live,
      `x402 UNSAFE: PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION=true: this production process takes ${settlement.mode} payments on ${settlement.network} in ${settlement.asset}, which is not real USDC`,
    );
  logger.info(
    { ...live, ...(settlement.settler ? { settler: settlement.settler } : {}) },
    `x402 payments live: ${settlement.mode} settlement on ${settlement.network}, asset ${settlement.asset}, pay to ${settlement.payTo}`,
  );

  return {
    core,
    gate,
    settlement,
    replayGuard,
    listening: async (url) => {
      if (settlement.devChain) await announceApiUrl(config.DATA_DIR, process.pid, url).catch(() => undefined);
    },
    stop: async () => {
      await replayGuard.close();
      await settlement.stop();
    },
  };
}
