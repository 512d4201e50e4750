/**
 * The payment settlement port: which facilitator verifies and settles, chosen
 * by SETTLEMENT.
 *
 * - `remote`: an x402 facilitator over HTTP (POST /verify, POST /settle,
 *   GET /supported) at FACILITATOR_URL.
 * - `self`: the in-process facilitator (local-facilitator.ts) over a viem
 *   wallet from PAYMENT_SETTLER_KEY on PAYMENT_RPC_URL; the server pays the
 *   gas of its settlement transactions. Several API replicas may share one
 *   settler key: with PAYMENT_REPLAY_STORE on Redis, its nonce sequence is
 *   leased through Redis too (nonce-lease.ts).
 * - `devchain` (default outside production): starts the local dev chain
 *   (api/dev-chain/), deploys the test USDC, and runs the same in-process
 *   facilitator against it; the funded demo payer's key is logged and written
 *   to `$DATA_DIR/devchain.json`. Refused in production (config.ts
 *   `settlementSafetyProblems`) unless explicitly allowed.
 *
 * Every facilitator is wrapped so that transport failures (unreachable,
 * timeout, RPC down) surface as FacilitatorUnavailableError: the x402 core
 * re-throws FacilitatorResponseError subclasses instead of turning them into a
 * 402, which lets the gate answer 503 and charge nothing.
 */
import type { FacilitatorClient } from '@x402/core/server';
import { HTTPFacilitatorClient } from '@x402/core/server';
import {
  FacilitatorResponseError,
  SettleError,
  VerifyError,
  type Network,
  type PaymentPayload,
  type PaymentRequirements,
} from '@x402/core/types';
import { getAddress, type Address, type Hex } from 'viem';
import { answerOnOf, settlementSafetyProblems, type Config } from '../../core/config.js';
import type { ProbeResult } from '../../core/health.js';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import {
  removeDevChainInfo,
  startDevChain,
  writeDevChainInfo,
  type DevChain,
  type DevChainMining,
} from '../dev-chain/dev-chain.js';
import { chainIdOf, startLocalFacilitator, type LocalFacilitator } from './local-facilitator.js';
import { probeFacilitator, probeLocal } from './settlement-probes.js';

export { chainIdOf } from './local-facilitator.js';

import type { SettlementMode } from './settlement-mode.js';

export type { SettlementMode };

/** What every challenge advertises (besides the per-route amount). */
export interface PaymentTerms {
  network: Network;
  asset: Address;
  assetName: string;
  assetVersion: string;
  payTo: Address;
  maxTimeoutSeconds: number;
}

export interface PaymentSettlement extends PaymentTerms {
  mode: SettlementMode;
  /** Guarded facilitator (transport failures -> FacilitatorUnavailableError). */
  facilitator: FacilitatorClient;
  /** The wallet that pays settlement gas (in-process modes). */
  settler?: Address;
  /** The in-process facilitator (self, devchain): chain view, settlement queue, reservations. */
  local?: LocalFacilitator;
  devChain?: DevChain;
  /** Health probe: `/supported` answers (remote); the chain's head age, the settler's gas, the asset (self, devchain). */
  probe(): Promise<ProbeResult>;
  stop(): Promise<void>;
}

export type SettlementConfig = Pick<
  Config,
  | 'SETTLEMENT'
  | 'PAYMENT_NETWORK'
  | 'PAYMENT_ASSET'
  | 'PAYMENT_ASSET_NAME'
  | 'PAYMENT_ASSET_VERSION'
  | 'PAYMENT_PAY_TO'
  | 'FACILITATOR_URL'
  | 'PAYMENT_SETTLER_KEY'
  | 'PAYMENT_RPC_URL'
  | 'PAYMENT_DEMO_PAYER_KEY'
  | 'PAYMENT_MAX_TIMEOUT_SECONDS'
  | 'PAYMENT_SETTLE_TIMEOUT_MS'
  | 'PAYMENT_SETTLE_BATCH_MAX'
  | 'PAYMENT_SETTLE_IN_FLIGHT'
  | 'PAYMENT_ANSWER_ON'
  | 'PAYMENT_RISK_MAX_PER_PAYER_ATOMIC'
  | 'PAYMENT_RISK_MAX_TOTAL_ATOMIC'
  | 'PAYMENT_RISK_HOLD_SECONDS'
  | 'PAYMENT_HEAD_STALE_MS'
  | 'DEVCHAIN_MINING'
  | 'DEVCHAIN_BLOCK_MS'
  | 'PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION'
  | 'NODE_ENV'
  | 'DATA_DIR'
>;

export interface StartSettlementOptions {
  logger: Logger;
  /** devchain: write `$DATA_DIR/devchain.json` for `npm run pay`. Default true. */
  writeInfoFile?: boolean;
  /** Where the settler's nonce sequence lives (self, devchain). Default: this process. */
  nonceStore?: { kind: 'memory' } | { kind: 'redis'; url: string; prefix: string };
  /** Block interval of the dev chain, ms. Default: DEVCHAIN_BLOCK_MS (2000, Base). */
  devChainBlockMs?: number;
  /** How the dev chain mines (`auto`, or `interval`: blocks only, as on Base). Default: DEVCHAIN_MINING. */
  devChainMining?: DevChainMining;
}

/** A facilitator that could not be reached or did not answer in time; nothing was charged by this call's failure. */
export class FacilitatorUnavailableError extends FacilitatorResponseError {
  constructor(
    readonly operation: 'verify' | 'settle' | 'supported',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message);
    this.name = 'FacilitatorUnavailableError';
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** Wraps a facilitator: protocol answers pass through, transport failures become FacilitatorUnavailableError. */
export function guardFacilitator(inner: FacilitatorClient, label: string): FacilitatorClient {
  const guarded = async <T>(operation: 'verify' | 'settle' | 'supported', run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof VerifyError || err instanceof SettleError || err instanceof FacilitatorResponseError)
        throw err;
      throw new FacilitatorUnavailableError(
        operation,
        `${label} ${operation} failed: ${errorMessage(err).split('\n')[0]}`,
        { cause: err },
      );
    }
  };
  return {
    verify: (payload: PaymentPayload, requirements: PaymentRequirements) =>
      guarded('verify', () => inner.verify(payload, requirements)),
    settle: (payload: PaymentPayload, requirements: PaymentRequirements) =>
      guarded('settle', () => inner.settle(payload, requirements)),
    getSupported: () => guarded('supported', () => inner.getSupported()),
  };
}

/** Starts the configured settlement mode; refuses what would fail open in production (config.ts `settlementSafetyProblems`). */
export async function startSettlement(
  config: SettlementConfig,
  options: StartSettlementOptions,
): Promise<PaymentSettlement> {
  const unsafe = settlementSafetyProblems(config);
  if (unsafe.length) throw new Error(unsafe.join('; '));
  const { logger } = options;
  const network = config.PAYMENT_NETWORK as Network;
  const common = {
    network,
    assetName: config.PAYMENT_ASSET_NAME,
    assetVersion: config.PAYMENT_ASSET_VERSION,
    maxTimeoutSeconds: config.PAYMENT_MAX_TIMEOUT_SECONDS,
  };
  const local = (rpcUrl: string, settlerKey: Hex, asset: Address, pollingIntervalMs?: number) =>
    startLocalFacilitator({
      network,
      rpcUrl,
      settlerKey,
      asset,
      timeoutMs: config.PAYMENT_SETTLE_TIMEOUT_MS,
      maxValiditySeconds: config.PAYMENT_MAX_TIMEOUT_SECONDS + 60,
      batchMax: config.PAYMENT_SETTLE_BATCH_MAX,
      inFlight: config.PAYMENT_SETTLE_IN_FLIGHT,
      nonceStore: options.nonceStore ?? { kind: 'memory' },
      answerOn: answerOnOf(config),
      risk: {
        perPayerAtomic: BigInt(config.PAYMENT_RISK_MAX_PER_PAYER_ATOMIC),
        totalAtomic: BigInt(config.PAYMENT_RISK_MAX_TOTAL_ATOMIC),
        holdMs: config.PAYMENT_RISK_HOLD_SECONDS * 1000,
      },
      recordDir: config.DATA_DIR,
      ...(pollingIntervalMs ? { pollingIntervalMs } : {}),
      logger,
    });

  if (config.SETTLEMENT === 'remote') {
    if (!config.FACILITATOR_URL || !config.PAYMENT_PAY_TO)
      throw new Error('SETTLEMENT=remote needs FACILITATOR_URL and PAYMENT_PAY_TO');
    const url = config.FACILITATOR_URL;
    const facilitator = guardFacilitator(
      new HTTPFacilitatorClient({ url, timeoutMs: config.PAYMENT_SETTLE_TIMEOUT_MS }),
      `facilitator ${url}`,
    );
    // The remote facilitator's /settle decides when it answers (the x402 spec: once settled).
    logger.info({ facilitator: url, network, answer_on: 'confirmation' }, 'x402 settlement: remote facilitator');
    return {
      mode: 'remote',
      ...common,
      asset: getAddress(config.PAYMENT_ASSET),
      payTo: getAddress(config.PAYMENT_PAY_TO),
      facilitator,
      probe: () => probeFacilitator(facilitator, network, { adapter: 'remote', facilitator: url }),
      stop: async () => {},
    };
  }

  if (config.SETTLEMENT === 'self') {
    if (!config.PAYMENT_SETTLER_KEY || !config.PAYMENT_RPC_URL || !config.PAYMENT_PAY_TO) {
      throw new Error('SETTLEMENT=self needs PAYMENT_SETTLER_KEY, PAYMENT_RPC_URL and PAYMENT_PAY_TO');
    }
    const asset = getAddress(config.PAYMENT_ASSET);
    const facilitator = await local(config.PAYMENT_RPC_URL, config.PAYMENT_SETTLER_KEY as Hex, asset);
    // A wrong chain behind the RPC is a configuration error; an unreachable one is a health problem.
    const answered = await facilitator.publicClient.getChainId().catch((err: unknown) => {
      logger.warn({ err: errorMessage(err) }, 'x402 settlement: RPC not reachable at start-up');
      return undefined;
    });
    if (answered !== undefined && answered !== facilitator.chainId) {
      await facilitator.stop();
      throw new Error(`PAYMENT_RPC_URL answers chain id ${answered}, but PAYMENT_NETWORK is ${network}`);
    }
    logger.info(
      {
        network,
        settler: facilitator.settler,
        asset,
        nonce_store: facilitator.lease.kind,
        answer_on: facilitator.queue.answersOn,
      },
      'x402 settlement: self (in-process facilitator)',
    );
    return {
      mode: 'self',
      ...common,
      asset,
      payTo: getAddress(config.PAYMENT_PAY_TO),
      settler: facilitator.settler,
      local: facilitator,
      facilitator: guardFacilitator(facilitator.client, 'in-process facilitator'),
      probe: () => probeLocal(facilitator, asset, 'self', config.PAYMENT_HEAD_STALE_MS),
      stop: () => facilitator.stop(),
    };
  }

  const t0 = performance.now();
  const devChain = await startDevChain({
    chainId: chainIdOf(network),
    ...(config.PAYMENT_DEMO_PAYER_KEY ? { payerKey: config.PAYMENT_DEMO_PAYER_KEY as Hex } : {}),
    ...(config.PAYMENT_PAY_TO ? { payTo: getAddress(config.PAYMENT_PAY_TO) } : {}),
    mining: options.devChainMining ?? config.DEVCHAIN_MINING,
    blockIntervalMs: options.devChainBlockMs ?? config.DEVCHAIN_BLOCK_MS,
  });
  let facilitator: LocalFacilitator | undefined;
  try {
    facilitator = await local(devChain.rpcUrl, devChain.settlerKey, devChain.usdc, 25);
    let infoFile: string | undefined;
    if (options.writeInfoFile !== false) {
      infoFile = await writeDevChainInfo(config.DATA_DIR, {
        rpc_url: devChain.rpcUrl,
        chain_id: devChain.chainId,
        network,
        asset: devChain.usdc,
        asset_name: config.PAYMENT_ASSET_NAME,
        asset_version: config.PAYMENT_ASSET_VERSION,
        pay_to: devChain.payTo,
        payer: devChain.payer,
        payer_key: devChain.payerKey,
        settler_key: devChain.settlerKey,
        started_at: new Date().toISOString(),
        pid: process.pid,
      });
    }
    logger.info(
      {
        rpc_url: devChain.rpcUrl,
        network,
        asset: devChain.usdc,
        pay_to: devChain.payTo,
        payer: devChain.payer,
        payer_key: devChain.payerKey,
        info_file: infoFile,
        answer_on: facilitator.queue.answersOn,
        start_ms: devChain.startMs,
        deploy_ms: devChain.deployMs,
        total_ms: Math.round(performance.now() - t0),
        mining: devChain.mining,
        block_ms: devChain.blockMs,
      },
      `x402 devchain ready (${miningText(devChain)}): test USDC ${devChain.usdc}; demo payer ${devChain.payer}, payer_key ${devChain.payerKey} (throwaway, local chain only; also in ${infoFile ?? 'no file'})`,
    );
    const started = facilitator;
    return {
      mode: 'devchain',
      ...common,
      asset: devChain.usdc,
      payTo: devChain.payTo,
      settler: started.settler,
      local: started,
      devChain,
      facilitator: guardFacilitator(started.client, 'in-process facilitator'),
      probe: async () => ({
        ...(await probeLocal(started, devChain.usdc, 'devchain', config.PAYMENT_HEAD_STALE_MS)),
        devchain_mining: { mode: devChain.mining, block_ms: devChain.blockMs },
      }),
      stop: async () => {
        await started.stop();
        await devChain.stop();
        // The chain is gone: so is its demo payer (unless another process wrote the file since).
        if (infoFile) await removeDevChainInfo(config.DATA_DIR, process.pid).catch(() => undefined);
      },
    };
  } catch (err) {
    await facilitator?.stop();
    await devChain.stop();
    throw err;
  }
}

/** What the start log says of the dev chain's blocks. */
const miningText = (chain: Pick<DevChain, 'mining' | 'blockMs'>) =>
  chain.mining === 'interval'
    ? `interval mining: a block every ${chain.blockMs} ms, no automine, as on Base`
    : `automine: a block per transaction, and one every ${chain.blockMs} ms`;
