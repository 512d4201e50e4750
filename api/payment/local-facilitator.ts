/**
 * The in-process facilitator of the `self` and `devchain` settlement modes,
 * as an x402 FacilitatorClient over a viem wallet:
 *
 *   verify       local-verify.ts: no chain round trip (native signature
 *                recovery, the chain view's per-block facts, reservations);
 *                x402's ExactEvmScheme verify for smart wallets and the rare
 *                payload the fast path does not cover
 *   settle       settlement-queue.ts: one nonce sequence per settler key
 *                (nonce-lease.ts), batched in Multicall3, retried while valid
 *   getSupported x402's facilitator (`exact` on the network, x402 v2)
 *
 * `release(payload)` gives back a verified payment's reservation when it will
 * not be settled (its handler failed).
 */
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  publicActions,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Logger } from '../../core/logger.js';
import { ChainView } from './chain-view.js';
import { verifyLocally } from './local-verify.js';
import { MemoryNonceLease, RedisNonceLease, type NonceLease } from './nonce-lease.js';
import { Reservations } from './reservations.js';
import { innerSignature, MULTICALL3_ADDRESS, type SignedAuthorization } from './settlement-calls.js';
import { SettlementQueue, type AnswerOn } from './settlement-queue.js';
import { SettlementRisk, type SettlementRiskLimits } from './settlement-risk.js';
import {
  FileUnconfirmedSettlements,
  RedisUnconfirmedSettlements,
  type UnconfirmedSettlements,
} from './unconfirmed-settlements.js';
import { join } from 'node:path';

export interface LocalFacilitatorOptions {
  network: Network;
  rpcUrl: string;
  settlerKey: Hex;
  /** The token every payment is in. */
  asset: Address;
  /** Deadline of one RPC call and of one settlement (receipts and retries included). */
  timeoutMs: number;
  /** Longest authorization the gate accepts, s (how long used nonces are remembered). */
  maxValiditySeconds: number;
  /** Receipt polling and head polling, ms. */
  pollingIntervalMs?: number;
  chainPollMs?: number;
  /** Most authorizations per settlement transaction (1 = no batching). */
  batchMax: number;
  /** Settlement transactions in flight at once. */
  inFlight?: number;
  /** Where the settler's nonce sequence lives: this process, or Redis shared by every replica with this key. */
  nonceStore: { kind: 'memory' } | { kind: 'redis'; url: string; prefix: string };
  /** When answers are released (settlement-queue.ts); `broadcast` needs `risk` and `record`. Default confirmation. */
  answerOn?: AnswerOn;
  risk?: SettlementRiskLimits;
  /** The durable record of answered, unconfirmed settlements (a file in this directory, or Redis as the nonces). */
  recordDir?: string;
  logger?: Logger;
}

export interface LocalFacilitator {
  client: FacilitatorClient;
  settler: Address;
  publicClient: PublicClient;
  chainId: number;
  chain: ChainView;
  queue: SettlementQueue;
  lease: NonceLease;
  /** The caps of answering on broadcast (present when answers go out on broadcast). */
  risk?: SettlementRisk;
  record?: UnconfirmedSettlements;
  /** The payment will not be settled: give its reservation back. */
  release(payload: PaymentPayload): void;
  stop(): Promise<void>;
}

export async function startLocalFacilitator(options: LocalFacilitatorOptions): Promise<LocalFacilitator> {
  const chainId = chainIdOf(options.network);
  const chain = defineChain({
    id: chainId,
    name: options.network,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
  });
  const account = privateKeyToAccount(options.settlerKey);
  // Requests made in the same tick go as one JSON-RPC batch, and contract reads (the payers' balances of a block)
  // as one Multicall3 call: under load the node answers a few large requests instead of many small ones.
  const transport = http(options.rpcUrl, { timeout: options.timeoutMs, retryCount: 1, batch: { wait: 0 } });
  const pollingInterval = options.pollingIntervalMs ?? 500;
  const wallet = createWalletClient({ account, chain, transport, pollingInterval });
  const publicClient = createPublicClient({
    chain,
    transport,
    pollingInterval,
    batch: { multicall: { wait: 0 } },
  }) as PublicClient;
  const asset = getAddress(options.asset);

  // x402's own facilitator: supported kinds, and the verify of what the fast path hands over.
  const reader = wallet.extend(publicActions);
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => reader.readContract(args as Parameters<typeof reader.readContract>[0]),
      verifyTypedData: (args) => reader.verifyTypedData(args as Parameters<typeof reader.verifyTypedData>[0]),
      writeContract: () => Promise.reject(new Error('the settler sends only through the settlement queue')),
      sendTransaction: () => Promise.reject(new Error('the settler sends only through the settlement queue')),
      waitForTransactionReceipt: (args) => reader.waitForTransactionReceipt(args),
      getCode: (args) => reader.getCode(args),
    },
    { confirmationTimeoutMs: options.timeoutMs },
  );
  const library = new x402Facilitator().register(options.network, new ExactEvmFacilitatorScheme(signer));

  const view = new ChainView({
    client: publicClient,
    asset,
    rememberS: options.maxValiditySeconds + 120,
    ...(options.chainPollMs ? { pollMs: options.chainPollMs } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  await view.start();
  const reservations = new Reservations();
  const sweeper = setInterval(() => reservations.sweep(), 60_000).unref();
  const chainNonce = (address: Address) => publicClient.getTransactionCount({ address, blockTag: 'pending' });
  const lease: NonceLease =
    options.nonceStore.kind === 'redis'
      ? new RedisNonceLease(options.nonceStore.url, account.address, chainNonce, { prefix: options.nonceStore.prefix })
      : new MemoryNonceLease(account.address, chainNonce);
  const early = options.answerOn === 'broadcast' && options.risk ? options.risk : undefined;
  const risk = early ? new SettlementRisk(early) : undefined;
  const record = !early
    ? undefined
    : options.nonceStore.kind === 'redis'
      ? new RedisUnconfirmedSettlements(options.nonceStore.url, `${options.nonceStore.prefix}${account.address}:`)
      : new FileUnconfirmedSettlements(
          join(options.recordDir ?? '.', `x402-unconfirmed-settlements-${account.address.toLowerCase()}.jsonl`),
        );
  const queue = new SettlementQueue({
    publicClient,
    wallet,
    asset,
    network: options.network,
    lease,
    batchMax: options.batchMax,
    receiptPollMs: pollingInterval,
    ...(options.inFlight ? { pipeline: options.inFlight } : {}),
    ...(risk && record ? { answerOn: 'broadcast' as const, risk, record } : {}),
    timeoutMs: options.timeoutMs,
    ...(options.logger ? { logger: options.logger } : {}),
    onSettled: (a, block) => {
      view.markUsed(a.from, a.nonce);
      reservations.settled(a.from, a.nonce, block);
    },
    onFailed: (a) => reservations.release(a.from, a.nonce),
  });
  if (risk && record && early) {
    // What a previous run answered and did not see confirmed: followed to its end; its losses count again.
    const left = await record.load(Date.now() - early.holdMs);
    for (const loss of left.losses) risk.restoreLoss(loss);
    // Reserved again: their value is promised away, and their nonces are not verified twice.
    for (const { auth } of left.unconfirmed)
      reservations.reserve(auth.from, auth.nonce, auth.value, Number(auth.validBefore) * 1000);
    queue.recover(left.unconfirmed);
  }

  const client: FacilitatorClient = {
    verify: (payload, requirements) =>
      verifyLocally(payload, requirements, {
        chainId,
        chain: view,
        reservations,
        fallback: (p, r) => library.verify(p, r),
      }),
    settle: async (payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> => {
      const auth = authorizationOf(payload);
      if (!auth || getAddress(requirements.asset) !== asset) {
        return {
          success: false,
          errorReason: 'unsupported_payload_type',
          transaction: '',
          network: requirements.network,
          ...(auth ? { payer: auth.from } : {}),
        };
      }
      return queue.settle(auth);
    },
    getSupported: async () => library.getSupported() as SupportedResponse,
  };

  return {
    client,
    settler: account.address,
    publicClient,
    chainId,
    chain: view,
    queue,
    lease,
    ...(risk ? { risk } : {}),
    ...(record ? { record } : {}),
    release: (payload) => {
      const auth = authorizationOf(payload);
      if (auth) reservations.release(auth.from, auth.nonce);
    },
    stop: async () => {
      clearInterval(sweeper);
      // Answered settlements still retrying are left to the durable record; the rest is waited for, within bounds.
      await queue.stop(options.timeoutMs);
      await view.stop();
      await lease.close();
      await record?.close();
    },
  };
}

/** The EIP-3009 authorization of a payload, ready for the settler; undefined for anything else. */
function authorizationOf(payload: PaymentPayload): SignedAuthorization | undefined {
  const inner = payload.payload as { authorization?: Record<string, string>; signature?: string };
  const a = inner.authorization;
  if (!a || typeof inner.signature !== 'string') return undefined;
  try {
    return {
      from: getAddress(a.from!),
      to: getAddress(a.to!),
      value: BigInt(a.value!),
      validAfter: BigInt(a.validAfter!),
      validBefore: BigInt(a.validBefore!),
      nonce: a.nonce as Hex,
      signature: innerSignature(inner.signature as Hex),
    };
  } catch {
    return undefined;
  }
}

export function chainIdOf(network: string): number {
  const m = /^eip155:([1-9]\d*)$/.exec(network);
  if (!m?.[1]) throw new Error(`not an EVM CAIP-2 network: ${network}`);
  return Number(m[1]);
}
