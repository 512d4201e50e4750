/**
 * The x402 side of gateway tests: the real @x402/fetch client (exact EVM
 * scheme) that records every PAYMENT-SIGNATURE it sends, a payment signed by
 * hand from the spec, and the payment terms of suites that render challenges
 * without a chain.
 */
import { randomBytes } from 'node:crypto';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { authorizationTypes } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { getAddress, toHex, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { PaymentInfo } from '../../api/discovery/context.js';

/** Base USDC terms with a burn address as payee: for challenges and discovery documents, nothing is paid. */
export const TEST_PAYMENT_INFO: PaymentInfo = {
  network: 'eip155:8453',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  assetName: 'USD Coin',
  assetVersion: '2',
  payTo: '0x000000000000000000000000000000000000dEaD',
  maxTimeoutSeconds: 300,
};

/** A real x402 client paying with `account`, allowed only `asset` on `network` (up to 0.2 USDC a call). */
export function payingFetch(account: PrivateKeyAccount, allowed: { network: `${string}:${string}`; asset: string }) {
  const sent: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const signature = request.headers.get('payment-signature');
    if (signature) sent.push(signature);
    return fetch(request);
  };
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
  client.setSpendControls({
    allowedAssets: [{ network: allowed.network, asset: allowed.asset, maxAmountPerPayment: '200000' }],
  });
  return { fetch: wrapFetchWithPayment(recording, client), client, sent };
}

/**
 * A PAYMENT-SIGNATURE written from the spec by hand (not the bundled client): an EIP-3009
 * TransferWithAuthorization for `required.accepts[0]`, each field overridable, so a test can sign what a
 * careless or hostile client would (a far validBefore, a future validAfter, another resource...).
 */
export async function signedPayment(
  account: PrivateKeyAccount,
  required: PaymentRequired,
  over: {
    validAfter?: number;
    validBefore?: number;
    value?: string;
    to?: string;
    nonce?: Hex;
    accepted?: Partial<PaymentRequirements>;
    resource?: PaymentRequired['resource'];
    extensions?: Record<string, unknown>;
  } = {},
): Promise<string> {
  const req = required.accepts[0]!;
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: account.address,
    to: getAddress(over.to ?? req.payTo),
    value: over.value ?? req.amount,
    validAfter: String(over.validAfter ?? now - 60),
    validBefore: String(over.validBefore ?? now + req.maxTimeoutSeconds),
    nonce: over.nonce ?? toHex(randomBytes(32)),
  };
  const chainId = Number(req.network.split(':')[1]);
  const signature = await account.signTypedData({
    domain: {
      name: String(req.extra.name),
      version: String(req.extra.version),
      chainId,
      verifyingContract: getAddress(req.asset),
    },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: authorization.from,
      to: authorization.to,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce,
    },
  });
  const payload: PaymentPayload = {
    x402Version: 2,
    resource: over.resource ?? required.resource,
    accepted: { ...req, ...over.accepted },
    payload: { authorization, signature },
    ...((over.extensions ?? required.extensions) ? { extensions: over.extensions ?? required.extensions } : {}),
  };
  return encodePaymentSignatureHeader(payload);
}
