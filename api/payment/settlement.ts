/**
 * The payment settlement port: which facilitator verifies and settles, chosen
 * by SETTLEMENT.
 *
 * - `remote`: an x402 facilitator over HTTP (POST /verify, POST /settle,
 *   GET /supported) at FACILITATOR_URL.
 * - `self`: an in-process facilitator (`x402Facilitator` + `ExactEvmScheme`)
 *   over a viem wallet from PAYMENT_SETTLER_KEY on PAYMENT_RPC_URL; the server
 *   pays the gas of each `transferWithAuthorization`.
 * - `devchain` (default): starts the local dev chain (dev-chain.ts), deploys
 *   the test USDC, and runs the same in-process facilitator against it; the
 *   funded demo payer's key is logged and written to `$DATA_DIR/devchain.json`.
 *
 * Every facilitator is wrapped so that transport failures (unreachable,
 * timeout, RPC down) surface as FacilitatorUnavailableError: the x402 core
 * re-throws FacilitatorResponseError subclasses instead of turning them into a
 * 402, which lets the gate answer 503 and charge nothing.
 */
import type { FacilitatorClient } from '@x402/core/server';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { x402Facilitator } from '@x402/core/facilitator';
import {
  FacilitatorResponseError,
  SettleError,
  VerifyError,
  type Network,
  type PaymentPayload,
  type PaymentRequirements,
  type SupportedResponse,
} from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { createPublicClient, createWalletClient, defineChain, getAddress, http, publicActions, type Address, type Hex, type PublicClient } from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import type { Config } from '../../core/config.js';
import type { ProbeResult } from '../../core/health.js';
import type { Logger } from '../../core/logger.js';
import { errorMessage } from '../../core/errors.js';
import { removeDevChainInfo, startDevChain, writeDevChainInfo, type DevChain } from './dev-chain.js';

export type SettlementMode = 'devchain' | 'remote' | 'self';

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
  devChain?: DevChain;
  /** Health probe: `/supported` answers (remote) or the chain answers with the right id (self, devchain). */
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
  | 'DATA_DIR'
>;

export interface StartSettlementOptions {
  logger: Logger;
  /** devchain: write `$DATA_DIR/devchain.json` for `npm run pay`. Default true. */
  writeInfoFile?: boolean;
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
      if (err instanceof VerifyError || err instanceof SettleError || err instanceof FacilitatorResponseError) throw err;
      throw new FacilitatorUnavailableError(operation, `${label} ${operation} failed: ${errorMessage(err).split('\n')[0]}`, { cause: err });
    }
  };
  return {
    verify: (payload: PaymentPayload, requirements: PaymentRequirements) => guarded('verify', () => inner.verify(payload, requirements)),
    settle: (payload: PaymentPayload, requirements: PaymentRequirements) => guarded('settle', () => inner.settle(payload, requirements)),
    getSupported: () => guarded('supported', () => inner.getSupported()),
  };
}

export interface InProcessFacilitator {
  client: FacilitatorClient;
  settler: Address;
  publicClient: PublicClient;
  chainId: number;
}

/** `x402Facilitator` + the EVM `exact` scheme over a viem wallet, as a FacilitatorClient. */
export function createInProcessFacilitator(options: {
  network: Network;
  rpcUrl: string;
  settlerKey: Hex;
  timeoutMs: number;
  pollingIntervalMs?: number;
}): InProcessFacilitator {
  const chainId = chainIdOf(options.network);
  const chain = defineChain({
    id: chainId,
    name: options.network,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
  });
  // The nonce manager keeps concurrent settlements from one wallet on distinct nonces.
  const account = privateKeyToAccount(options.settlerKey, { nonceManager });
  const transport = http(options.rpcUrl, { timeout: options.timeoutMs, retryCount: 1 });
  const pollingInterval = options.pollingIntervalMs ?? 500;
  const wallet = createWalletClient({ account, chain, transport, pollingInterval }).extend(publicActions);
  // viem's generic signatures are narrower than the signer's plain-object ones: bridge each call.
  const signerClient: Parameters<typeof toFacilitatorEvmSigner>[0] = {
    address: account.address,
    readContract: (args) => wallet.readContract(args as Parameters<typeof wallet.readContract>[0]),
    verifyTypedData: (args) => wallet.verifyTypedData(args as Parameters<typeof wallet.verifyTypedData>[0]),
    writeContract: (args) => wallet.writeContract(args as Parameters<typeof wallet.writeContract>[0]),
    sendTransaction: (args) => wallet.sendTransaction(args as Parameters<typeof wallet.sendTransaction>[0]),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
    getCode: (args) => wallet.getCode(args),
  };
  const signer = toFacilitatorEvmSigner(signerClient, { confirmationTimeoutMs: options.timeoutMs });
  const facilitator = new x402Facilitator().register(options.network, new ExactEvmFacilitatorScheme(signer));
  const client: FacilitatorClient = {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
  return {
    client,
    settler: account.address,
    publicClient: createPublicClient({ chain, transport, pollingInterval }) as PublicClient,
    chainId,
  };
}

export function chainIdOf(network: string): number {
  const m = /^eip155:([1-9]\d*)$/.exec(network);
  if (!m?.[1]) throw new Error(`not an EVM CAIP-2 network: ${network}`);
  return Number(m[1]);
}

/** Starts the configured settlement mode. */
export async function startSettlement(config: SettlementConfig, options: StartSettlementOptions): Promise<PaymentSettlement> {
  const { logger } = options;
  const network = config.PAYMENT_NETWORK as Network;
  const common = {
    network,
    assetName: config.PAYMENT_ASSET_NAME,
    assetVersion: config.PAYMENT_ASSET_VERSION,
    maxTimeoutSeconds: config.PAYMENT_MAX_TIMEOUT_SECONDS,
  };

  if (config.SETTLEMENT === 'remote') {
    if (!config.FACILITATOR_URL || !config.PAYMENT_PAY_TO) throw new Error('SETTLEMENT=remote needs FACILITATOR_URL and PAYMENT_PAY_TO');
    const url = config.FACILITATOR_URL;
    const facilitator = guardFacilitator(new HTTPFacilitatorClient({ url, timeoutMs: config.PAYMENT_SETTLE_TIMEOUT_MS }), `facilitator ${url}`);
    logger.info({ facilitator: url, network }, 'x402 settlement: remote facilitator');
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
    const inProcess = createInProcessFacilitator({
      network,
      rpcUrl: config.PAYMENT_RPC_URL,
      settlerKey: config.PAYMENT_SETTLER_KEY as Hex,
      timeoutMs: config.PAYMENT_SETTLE_TIMEOUT_MS,
    });
    // A wrong chain behind the RPC is a configuration error; an unreachable one is a health problem.
    const answered = await inProcess.publicClient.getChainId().catch((err: unknown) => {
      logger.warn({ err: errorMessage(err) }, 'x402 settlement: RPC not reachable at start-up');
      return undefined;
    });
    if (answered !== undefined && answered !== inProcess.chainId) {
      throw new Error(`PAYMENT_RPC_URL answers chain id ${answered}, but PAYMENT_NETWORK is ${network}`);
    }
    const asset = getAddress(config.PAYMENT_ASSET);
    logger.info({ network, settler: inProcess.settler, asset }, 'x402 settlement: self (in-process facilitator)');
    return {
      mode: 'self',
      ...common,
      asset,
      payTo: getAddress(config.PAYMENT_PAY_TO),
      settler: inProcess.settler,
      facilitator: guardFacilitator(inProcess.client, 'in-process facilitator'),
      probe: () => probeChain(inProcess, asset, 'self'),
      stop: async () => {},
    };
  }

  const t0 = performance.now();
  const devChain = await startDevChain({
    chainId: chainIdOf(network),
    ...(config.PAYMENT_DEMO_PAYER_KEY ? { payerKey: config.PAYMENT_DEMO_PAYER_KEY as Hex } : {}),
    ...(config.PAYMENT_PAY_TO ? { payTo: getAddress(config.PAYMENT_PAY_TO) } : {}),
  });
  try {
    const inProcess = createInProcessFacilitator({
      network,
      rpcUrl: devChain.rpcUrl,
      settlerKey: devChain.settlerKey,
      timeoutMs: config.PAYMENT_SETTLE_TIMEOUT_MS,
      pollingIntervalMs: 25,
    });
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
        demo_payer: devChain.payer,
        demo_payer_key: devChain.payerKey,
        info_file: infoFile,
        start_ms: devChain.startMs,
        deploy_ms: devChain.deployMs,
        total_ms: Math.round(performance.now() - t0),
      },
      `x402 devchain ready: test USDC ${devChain.usdc}; demo payer ${devChain.payer} key ${devChain.payerKey} (throwaway, local chain only)`,
    );
    return {
      mode: 'devchain',
      ...common,
      asset: devChain.usdc,
      payTo: devChain.payTo,
      settler: inProcess.settler,
      devChain,
      facilitator: guardFacilitator(inProcess.client, 'in-process facilitator'),
      probe: () => probeChain(inProcess, devChain.usdc, 'devchain'),
      stop: async () => {
        await devChain.stop();
        // The chain is gone: so is its demo payer (unless another process wrote the file since).
        if (infoFile) await removeDevChainInfo(config.DATA_DIR, process.pid).catch(() => undefined);
      },
    };
  } catch (err) {
    await devChain.stop();
    throw err;
  }
}

/** ok when `/supported` lists `exact` on the network for x402 v2. */
export async function probeFacilitator(facilitator: FacilitatorClient, network: string, facts: Record<string, unknown>): Promise<ProbeResult> {
  try {
    const supported = await facilitator.getSupported();
    const kind = supported.kinds.find((k) => k.x402Version === 2 && k.scheme === 'exact' && k.network === network);
    if (!kind) return { status: 'down', ...facts, network, reason: `facilitator does not support exact on ${network} (x402 v2)` };
    return { status: 'ok', ...facts, network };
  } catch (err) {
    return { status: 'down', ...facts, network, reason: errorMessage(err) };
  }
}

/** ok when the chain answers with the expected id, the asset has code and the settler holds gas. */
export async function probeChain(inProcess: InProcessFacilitator, asset: Address, adapter: SettlementMode): Promise<ProbeResult> {
  const facts = { adapter, settler: inProcess.settler, asset };
  try {
    const [chainId, block, code, gas] = await Promise.all([
      inProcess.publicClient.getChainId(),
      inProcess.publicClient.getBlockNumber(),
      inProcess.publicClient.getCode({ address: asset }),
      inProcess.publicClient.getBalance({ address: inProcess.settler }),
    ]);
    if (chainId !== inProcess.chainId) return { status: 'down', ...facts, reason: `RPC answers chain id ${chainId}, expected ${inProcess.chainId}` };
    if (!code || code === '0x') return { status: 'down', ...facts, block: Number(block), reason: `no contract at asset ${asset}` };
    if (gas === 0n) return { status: 'degraded', ...facts, block: Number(block), reason: 'settler wallet holds no gas' };
    return { status: 'ok', ...facts, block: Number(block) };
  } catch (err) {
    return { status: 'down', ...facts, reason: errorMessage(err).split('\n')[0] };
  }
}
