/**
 * Where `npm run pay` and `npm run pay:mcp` send their calls, and who pays: one rule for both.
 *
 * Server: PAY_SERVER_URL, else http://127.0.0.1:$HTTP_PORT (the variable the server listens on), else the API URL
 * that the dev chain's info file (`$DATA_DIR/devchain.json`) names, else http://127.0.0.1:4020. The scripts print
 * which one they use and how to change it.
 *
 * Payer: PAYER_KEY, else the dev chain's demo payer from that file, whose test USDC is then an allowed asset;
 * PAY_ASSET (on PAY_NETWORK, default eip155:8453) allows one more. The per-payment cap is the spec's 0.2 USDC
 * (PAY_MAX_ATOMIC to change it).
 */
import { x402Client } from '@x402/core/client';
import type { Network } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readDevChainInfo, type DevChainInfo } from '../api/dev-chain/dev-chain.js';

export interface PayTarget {
  /** The server's base URL, without a trailing slash. */
  server: string;
  /** Where that URL came from, for the first line the scripts print. */
  from: string;
  dataDir: string;
  /** The dev chain's info file of DATA_DIR, when a server with SETTLEMENT=devchain runs from it. */
  devchain?: DevChainInfo;
}

export async function payTarget(env: NodeJS.ProcessEnv = process.env): Promise<PayTarget> {
  const dataDir = env.DATA_DIR ?? './data';
  let devchain: DevChainInfo | undefined;
  try {
    devchain = await readDevChainInfo(dataDir);
  } catch {
    // no dev chain running from this folder
  }
  const [server, from] = env.PAY_SERVER_URL
    ? [env.PAY_SERVER_URL, 'PAY_SERVER_URL']
    : env.HTTP_PORT
      ? [`http://127.0.0.1:${env.HTTP_PORT}`, 'HTTP_PORT']
      : devchain?.api_url
        ? [devchain.api_url, `${dataDir}/devchain.json`]
        : ['http://127.0.0.1:4020', 'the default port'];
  return { server: server.replace(/\/+$/, ''), from, dataDir, ...(devchain ? { devchain } : {}) };
}

export interface Payer {
  client: x402Client;
  address: string;
  /** The dev chain's demo payer (no PAYER_KEY). */
  demo: boolean;
}

/** The x402 client that signs for the scripts, with its spend controls; an error text when there is no key. */
export function payer(
  { dataDir, devchain }: PayTarget,
  env: NodeJS.ProcessEnv = process.env,
): Payer | { error: string } {
  const key = (env.PAYER_KEY || devchain?.payer_key) as Hex | undefined;
  if (!key)
    return {
      error: `no payer: set PAYER_KEY, or start the server with SETTLEMENT=devchain so ${dataDir}/devchain.json exists`,
    };
  const account = privateKeyToAccount(key);
  const maxAtomic = env.PAY_MAX_ATOMIC ?? '200000';
  const allowedAssets: { network: Network; asset: string; maxAmountPerPayment: string }[] = [];
  if (devchain)
    allowedAssets.push({ network: devchain.network as Network, asset: devchain.asset, maxAmountPerPayment: maxAtomic });
  if (env.PAY_ASSET)
    allowedAssets.push({
      network: (env.PAY_NETWORK ?? 'eip155:8453') as Network,
      asset: env.PAY_ASSET,
      maxAmountPerPayment: maxAtomic,
    });
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
  client.setSpendControls({
    maxAmountPerPayment: `$${Number(maxAtomic) / 1e6}`,
    ...(allowedAssets.length ? { allowedAssets } : {}),
  });
  return { client, address: account.address, demo: Boolean(devchain && !env.PAYER_KEY) };
}
