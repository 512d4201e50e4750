/**
 * The x402 side of gateway tests: the real @x402/fetch client (exact EVM
 * scheme) that records every PAYMENT-SIGNATURE it sends, and the payment
 * terms of suites that render challenges without a chain.
 */
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
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
  client.setSpendControls({ allowedAssets: [{ network: allowed.network, asset: allowed.asset, maxAmountPerPayment: '200000' }] });
  return { fetch: wrapFetchWithPayment(recording, client), client, sent };
}
