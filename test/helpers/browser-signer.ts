/**
 * The signing half of an injected test wallet: `window.nodeSignTypedData(json)` signs an EIP-3009
 * TransferWithAuthorization in Node with the given key (the page's `eth_signTypedData_v4` hands its JSON over).
 * Each browser test writes the rest of its wallet (accounts, chains, events) as its case needs.
 */
import type { Page } from 'playwright-core';
import { authorizationTypes } from '@x402/evm';
import { privateKeyToAccount } from 'viem/accounts';

export async function exposeNodeSigner(page: Page, payerKey: `0x${string}`): Promise<void> {
  const payer = privateKeyToAccount(payerKey);
  await page.exposeFunction('nodeSignTypedData', async (json: string) => {
    const t = JSON.parse(json) as { domain: Record<string, unknown>; message: Record<string, string> };
    const m = t.message;
    return payer.signTypedData({
      domain: { ...t.domain, chainId: Number(t.domain.chainId) } as never,
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message: {
        from: m.from,
        to: m.to,
        value: BigInt(m.value!),
        validAfter: BigInt(m.validAfter!),
        validBefore: BigInt(m.validBefore!),
        nonce: m.nonce,
      } as never,
    });
  });
}
