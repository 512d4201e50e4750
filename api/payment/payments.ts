/**
 * One call that wires the payment port for the api role: the configured
 * settlement mode (settlement.ts), the replay guard (memory, or Redis when
 * configured), the payment-identifier and sign-in-with-x stores beside it,
 * the server signing key (offers, receipts, signed answers) and the
 * `settlement` health probe. The doors stand above it: the HTTP gate
 * (api/paid-call/payment-gate.ts), MCP and A2A take `payments.core`.
 *
 *   const payments = await startPayments(config, { logger, health });
 *   const gate = gateOverCore(payments.core, { publicBaseUrl });    // Koa middleware (api/role.ts)
 *   ...on shutdown: await payments.stop();
 */
import { settlementSafetyProblems, type Config } from '../../core/config.js';
import type { HealthRegistry } from '../../core/health.js';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import { createPaymentCore, type PaymentCore } from './payment-core.js';
import { createReplayGuard, type ReplayGuard } from './replay-guard.js';
import { announceApiUrl } from '../dev-chain/dev-chain.js';
import { startSettlement, type PaymentSettlement } from './settlement.js';
import { configuredRetries } from './idempotency/configured-retries.js';
import { configuredRepeatAccess } from './siwx/configured-repeat-access.js';
import { paidCallEvidenceFromConfig } from './receipts/paid-call-evidence.js';

export interface Payments {
  /** The transport-neutral payment core: every door (HTTP gate, MCP) goes through it. */
  core: PaymentCore;
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

/** The payment chain's JSON-RPC (contract wallets' sign-in-with-x proofs): PAYMENT_RPC_URL, or the dev chain's. */
function rpcUrlOf(config: Pick<Config, 'PAYMENT_RPC_URL'>, settlement: PaymentSettlement): string | undefined {
  return config.PAYMENT_RPC_URL ?? settlement.devChain?.rpcUrl;
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
  // The steps the paid-call pipeline adds around a payment, for every door (api/paid-call/payment-step.ts).
  const evidence = paidCallEvidenceFromConfig(config, logger);
  const retries = configuredRetries(config, { terms: settlement, store, log: logger });
  const rpcUrl = rpcUrlOf(config, settlement);
  const access = configuredRepeatAccess(config, {
    network: settlement.network,
    store,
    ...(rpcUrl ? { rpcUrl } : {}),
    log: logger,
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
    ...(evidence ? { evidence } : {}),
    retries,
    access,
  });
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
    for (const [name, ping] of [
      ['replay guard', () => replayGuard.ping()],
      ['idempotency store', () => retries.store.ping()],
      ['sign-in-with-x store', () => access.store.ping()],
    ] as const) {
      try {
        await ping();
      } catch (err) {
        return { ...result, ...history, status: 'down', reason: `${name} (${store}): ${errorMessage(err)}` };
      }
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
  core
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
    settlement,
    replayGuard,
    listening: async (url) => {
      if (settlement.devChain) await announceApiUrl(config.DATA_DIR, process.pid, url).catch(() => undefined);
    },
    stop: async () => {
      await replayGuard.close();
      await retries.store.close();
      await access.store.close();
      await settlement.stop();
    },
  };
}
