/**
 * The repeat-access (sign-in-with-x) service of the api role, from the
 * configuration: its store beside the replay lock (payments.ts's
 * `replayStoreOf`), the entitlement and proof lifetimes, the closed-slice
 * rule, and contract-wallet verification through viem when an RPC of the
 * payment chain is known (PAYMENT_RPC_URL, or the dev chain's URL).
 *
 *   const access = configuredRepeatAccess(config, { network: core.terms.network, store: replayStoreOf(config), rpcUrl, log });
 *   ...on shutdown: await access.store.close();
 */
import { createPublicClient, http } from 'viem';
import type { Config } from '../../../core/config.js';
import type { Logger } from '../../../core/logger.js';
import { createSiwxStore } from './create-siwx-store.js';
import { RepeatAccess } from './repeat-access.js';

type RepeatAccessConfig = Pick<
  Config,
  | 'REDIS_URL'
  | 'QUEUE_PREFIX'
  | 'SIWX_ENTITLEMENT_TTL_SECONDS'
  | 'SIWX_PROOF_MAX_AGE_SECONDS'
  | 'SIWX_MEMORY_MAX_ENTITLEMENTS'
  | 'TELEMETRY_CACHE_CLOSED_AFTER_MS'
>;

export function configuredRepeatAccess(
  config: RepeatAccessConfig,
  options: { network: string; store: 'memory' | 'redis'; rpcUrl?: string; log?: Logger },
): RepeatAccess {
  const store = createSiwxStore({
    store: options.store,
    redisUrl: config.REDIS_URL,
    prefix: `${config.QUEUE_PREFIX}:x402:siwx:`,
    maxEntitlements: config.SIWX_MEMORY_MAX_ENTITLEMENTS,
  });
  // Without an RPC, EOAs only: a contract wallet's proof is refused (invalid_siwx_signature) and it pays instead.
  const client = options.rpcUrl ? createPublicClient({ transport: http(options.rpcUrl) }) : undefined;
  return new RepeatAccess({
    store,
    chains: [options.network],
    entitlementTtlMs: config.SIWX_ENTITLEMENT_TTL_SECONDS * 1000,
    proofMaxAgeMs: config.SIWX_PROOF_MAX_AGE_SECONDS * 1000,
    closedAfterMs: config.TELEMETRY_CACHE_CLOSED_AFTER_MS,
    ...(client ? { evmVerifier: (args) => client.verifyMessage(args) } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}
