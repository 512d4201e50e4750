/**
 * The official x402 stack as a test-only baseline for the end-to-end paid
 * bench (paid-end-to-end.ts): Express 5 + `@x402/express`'s paymentMiddleware
 * over an `x402ResourceServer` whose facilitator is x402's own, in process
 * (`x402Facilitator` from `@x402/core/facilitator` with `ExactEvmScheme` from
 * `@x402/evm/exact/facilitator` over a viem wallet): every paid request is
 * verified by the library, its handler answers a fixed body (the gateway's own
 * answer to the same closed slice, captured beforehand, so both sides serve
 * the same bytes from memory), and the middleware settles it with one
 * transferWithAuthorization transaction from its own settler key before the
 * answer leaves, as the library does. Same dev chain, same test USDC and
 * price as the gateway; its own payTo, so the two sides' settlements are
 * reconciled apart. Listens on 127.0.0.1 only.
 *
 * The settler wallet is built as x402's own facilitator example builds it
 * (`privateKeyToAccount` + `createWalletClient(...).extend(publicActions)`, no
 * nonce manager): settlements that overlap read the same pending nonce, and
 * all but one fail (`invalid_exact_evm_transaction_failed`: "Nonce provided
 * for the transaction is lower than the current nonce"), so the payer gets a
 * 402 with an empty body; that, not the handler, is most of its failures
 * under concurrent load.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { Network } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { createWalletClient, http, publicActions, type Address, type Chain, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

export interface OfficialBaselineOptions {
  rpcUrl: string;
  chain: Chain;
  network: Network;
  /** The test USDC and its EIP-712 domain. */
  asset: Address;
  assetName: string;
  assetVersion: string;
  payTo: Address;
  /** Pays the gas of the baseline's settlements (funded by the caller). */
  settlerKey: Hex;
  priceAtomic: string;
  maxTimeoutSeconds: number;
  /** The paid route (GET), e.g. `/api/v1/crypto/spread-candles`. */
  path: string;
  description: string;
  /** What the route answers (JSON text). */
  body: string;
}

export interface OfficialBaseline {
  url: string;
  payTo: Address;
  settler: Address;
  close(): Promise<void>;
}

export async function startOfficialBaseline(options: OfficialBaselineOptions): Promise<OfficialBaseline> {
  const account = privateKeyToAccount(options.settlerKey);
  const wallet = createWalletClient({
    account,
    chain: options.chain,
    transport: http(options.rpcUrl, { retryCount: 0 }),
    pollingInterval: 25,
  }).extend(publicActions);
  // The signer as x402's examples build it from a viem wallet + public actions.
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => wallet.readContract(args as Parameters<typeof wallet.readContract>[0]),
    verifyTypedData: (args) => wallet.verifyTypedData(args as Parameters<typeof wallet.verifyTypedData>[0]),
    writeContract: (args) => wallet.writeContract(args as Parameters<typeof wallet.writeContract>[0]),
    sendTransaction: (args) => wallet.sendTransaction(args as Parameters<typeof wallet.sendTransaction>[0]),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
    getCode: (args) => wallet.getCode(args),
  });
  const facilitator = new x402Facilitator().register(options.network, new ExactEvmFacilitatorScheme(signer));
  const resourceServer = new x402ResourceServer(facilitator as unknown as FacilitatorClient).register(
    options.network,
    new ExactEvmServerScheme(),
  );
  const app = express();
  app.use(
    paymentMiddleware(
      {
        [`GET ${options.path}`]: {
          accepts: {
            scheme: 'exact',
            network: options.network,
            payTo: options.payTo,
            price: {
              amount: options.priceAtomic,
              asset: options.asset,
              extra: { name: options.assetName, version: options.assetVersion },
            },
            maxTimeoutSeconds: options.maxTimeoutSeconds,
          },
          description: options.description,
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  app.get(options.path, (_req, res) => {
    res.type('application/json').send(options.body);
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  server.keepAliveTimeout = 60_000;
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    payTo: options.payTo,
    settler: account.address,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
