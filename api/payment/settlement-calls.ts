/**
 * The calls a settlement transaction makes, and how to read what became of
 * them: one `transferWithAuthorization` to the token, or several inside one
 * Multicall3 `aggregate3` with `allowFailure` per call (EIP-3009's
 * transferWithAuthorization does not look at msg.sender, so the Multicall3
 * contract may submit it); a failed call does not revert the others.
 * Whether an authorization was settled is read from the receipt: the token's
 * `AuthorizationUsed(authorizer, nonce)` log.
 *
 * Revert reasons (FiatToken's texts) map to x402's reasons, and say whether
 * trying again can help. Hand-written: x402's own mapping
 * (parseEip3009TransferError) is not exported.
 */
import {
  decodeErrorResult,
  decodeFunctionResult,
  encodeFunctionData,
  multicall3Abi,
  parseAbiItem,
  parseErc6492Signature,
  parseEventLogs,
  parseSignature,
  type Address,
  type Hex,
  type Log,
} from 'viem';
import { eip3009ABI } from '@x402/evm';
import { base } from 'viem/chains';

/** Multicall3's canonical address (the same on Base and every EVM chain it is deployed to; the dev chain installs it there). */
export const MULTICALL3_ADDRESS: Address = base.contracts.multicall3.address;

export interface SignedAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  /** The payer's signature (an ERC-6492 wrapper already removed). */
  signature: Hex;
}

export const AUTHORIZATION_USED = parseAbiItem(
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
);

/** Calldata of `transferWithAuthorization` (v, r, s for a 65-byte ECDSA signature; the `bytes` overload otherwise). */
export function transferCalldata(a: SignedAuthorization): Hex {
  const head = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;
  if (a.signature.length === 132) {
    const { v, yParity, r, s } = parseSignature(a.signature);
    const vv = Number(v ?? BigInt(yParity + 27));
    return encodeFunctionData({
      abi: eip3009ABI,
      functionName: 'transferWithAuthorization',
      args: [...head, vv, r, s],
    });
  }
  return encodeFunctionData({
    abi: eip3009ABI,
    functionName: 'transferWithAuthorization',
    args: [...head, a.signature],
  });
}

/** The inner signature of a payload signature (ERC-6492 wrappers of deployed wallets unwrapped). */
export function innerSignature(signature: Hex): Hex {
  return parseErc6492Signature(signature).signature;
}

/** One transaction settling `items`: direct for one, aggregate3 for several. */
export function settlementTransaction(
  asset: Address,
  items: readonly SignedAuthorization[],
): { to: Address; data: Hex } {
  if (items.length === 1) return { to: asset, data: transferCalldata(items[0]!) };
  const calls = items.map((a) => ({ target: asset, allowFailure: true, callData: transferCalldata(a) }));
  return {
    to: MULTICALL3_ADDRESS,
    data: encodeFunctionData({ abi: multicall3Abi, functionName: 'aggregate3', args: [calls] }),
  };
}

/** Per-call outcome of a simulated aggregate3 (eth_call of the batch): undefined = would succeed, else the revert text. */
export function aggregate3Failures(result: Hex): (string | undefined)[] {
  const decoded = decodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', data: result }) as readonly {
    success: boolean;
    returnData: Hex;
  }[];
  return decoded.map((r) => (r.success ? undefined : revertText(r.returnData)));
}

function revertText(data: Hex): string {
  try {
    const decoded = decodeErrorResult({ data });
    return decoded.args?.length ? String(decoded.args[0]) : decoded.errorName;
  } catch {
    return data === '0x' ? 'reverted without a reason' : `reverted (${data.slice(0, 10)})`;
  }
}

/** Keys `<authorizer>:<nonce>` of the authorizations a receipt's logs show settled by `asset`. */
export function settledAuthorizations(asset: Address, logs: readonly Log[]): Set<string> {
  const out = new Set<string>();
  const mine = logs.filter((l) => l.address.toLowerCase() === asset.toLowerCase());
  for (const log of parseEventLogs({ abi: [AUTHORIZATION_USED], logs: mine, strict: true })) {
    out.add(authorizationKey(log.args.authorizer, log.args.nonce));
  }
  return out;
}

export const authorizationKey = (authorizer: string, nonce: string) =>
  `${authorizer.toLowerCase()}:${nonce.toLowerCase()}`;

/** The text of a chain error worth keeping: viem's short message plus the node's own words (e.g. "Nonce too low ..."). */
export function failureText(err: unknown): string {
  const e = err as { shortMessage?: unknown; message?: unknown };
  const parts = [
    typeof e?.shortMessage === 'string'
      ? e.shortMessage
      : typeof e?.message === 'string'
        ? e.message.split('\n')[0]!
        : String(err),
  ];
  // The node's words sit in `details` somewhere down the cause chain.
  for (let c: unknown = err, depth = 0; c && depth < 6; c = (c as { cause?: unknown }).cause, depth++) {
    const details = (c as { details?: unknown }).details;
    if (typeof details === 'string' && details && !parts.some((p) => p.includes(details))) parts.push(details);
  }
  return parts.join(': ').replace(/\s*\n\s*/g, ' ');
}

export interface Classified {
  /** x402 reason. */
  reason: string;
  /** Whether a later attempt (a later block, another nonce) can succeed. */
  retry: boolean;
}

/**
 * The caller-facing text of a failed settlement (`errorMessage` of the SettleResponse): one fixed sentence per
 * reason, never the node's own words (those name internals and change between node versions; they stay in the
 * log and /health).
 */
const FAILURE_MESSAGES: Readonly<Record<string, string>> = {
  invalid_exact_evm_nonce_already_used: 'the authorization was already used or cancelled on chain',
  invalid_exact_evm_payload_authorization_valid_before: 'the authorization expired before it could be settled',
  invalid_exact_evm_payload_authorization_valid_after: 'the authorization was not valid yet when it was settled',
  invalid_exact_evm_insufficient_balance: "the payer's balance does not cover the amount",
  invalid_exact_evm_signature: 'the token contract refused the authorization signature',
  invalid_exact_evm_transaction_failed: 'the settlement transaction did not succeed on chain',
};

export const failureMessage = (reason: string): string => FAILURE_MESSAGES[reason] ?? 'the settlement did not succeed';

/** What a revert or RPC error text means for the settlement. */
export function classifyFailure(text: string): Classified {
  if (/authorization is used or canceled|AuthorizationUsedOrCanceled|authorization.*used/i.test(text))
    return { reason: 'invalid_exact_evm_nonce_already_used', retry: false };
  if (/authorization is expired|AuthorizationExpired/i.test(text))
    return { reason: 'invalid_exact_evm_payload_authorization_valid_before', retry: false };
  // Block time not yet past validAfter: the next block will be.
  if (/authorization is not yet valid|AuthorizationNotYetValid/i.test(text))
    return { reason: 'invalid_exact_evm_payload_authorization_valid_after', retry: true };
  if (/exceeds balance|insufficient balance|ERC20InsufficientBalance/i.test(text))
    return { reason: 'invalid_exact_evm_insufficient_balance', retry: false };
  if (/invalid signature|SignerMismatch|InvalidSignature/i.test(text))
    return { reason: 'invalid_exact_evm_signature', retry: false };
  return { reason: 'invalid_exact_evm_transaction_failed', retry: true };
}
