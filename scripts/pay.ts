/**
 * Bundled x402 client: pays for one call with @x402/fetch and prints the
 * status, the body and the decoded PAYMENT-RESPONSE (settlement transaction).
 *
 *   npm run pay -- GET /api/v1/crypto/spread-candles?pair=ETH/USD
 *   npm run pay -- POST /api/v1/crypto/impact-simulation '{"pair":"ETH/USD","side":"buy","size_usd":1000}'
 *
 * Server: PAY_SERVER_URL, else http://127.0.0.1:$HTTP_PORT (the variable the server listens on), else the
 * URL the dev chain's server wrote into `$DATA_DIR/devchain.json`, else http://127.0.0.1:4020; the
 * first line printed says which and how to change it. Payer: PAYER_KEY, else
 * the dev chain's demo payer from `$DATA_DIR/devchain.json` (written by the
 * server at start-up in SETTLEMENT=devchain), whose test USDC is then the
 * allowed asset. PAY_ASSET allows one more non-default asset. The per-payment
 * cap is the spec's 0.2 USDC (PAY_MAX_ATOMIC to change it).
 */
import { x402Client, wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { Network } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { payTarget } from './pay-target.js';

const USAGE = 'usage: npm run pay -- <GET|POST> <path> [json-body]';

async function main(): Promise<number> {
  const [methodArg, path, body] = process.argv.slice(2);
  const method = methodArg?.toUpperCase();
  if (!method || !path || !['GET', 'POST'].includes(method)) {
    console.error(USAGE);
    return 2;
  }
  if (body !== undefined) {
    try {
      JSON.parse(body);
    } catch {
      console.error(`the body is not JSON: ${body}\n${USAGE}`);
      return 2;
    }
  }
  const { server, from, dataDir, devchain } = await payTarget();
  console.log(`server ${server} (from ${from}; set PAY_SERVER_URL or HTTP_PORT to pay another)`);
  const key = (process.env.PAYER_KEY || devchain?.payer_key) as Hex | undefined;
  if (!key) {
    console.error(`no payer: set PAYER_KEY, or start the server with SETTLEMENT=devchain so ${dataDir}/devchain.json exists`);
    return 2;
  }
  const account = privateKeyToAccount(key);
  const maxAtomic = process.env.PAY_MAX_ATOMIC ?? '200000';
  const allowedAssets: { network: Network; asset: string; maxAmountPerPayment: string }[] = [];
  if (devchain) allowedAssets.push({ network: devchain.network as Network, asset: devchain.asset, maxAmountPerPayment: maxAtomic });
  if (process.env.PAY_ASSET) {
    allowedAssets.push({ network: (process.env.PAY_NETWORK ?? 'eip155:8453') as Network, asset: process.env.PAY_ASSET, maxAmountPerPayment: maxAtomic });
  }

  const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
  client.setSpendControls({ maxAmountPerPayment: `$${Number(maxAtomic) / 1e6}`, ...(allowedAssets.length ? { allowedAssets } : {}) });
  const payFetch = wrapFetchWithPayment(fetch, client);

  const url = `${server.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
  console.log(`${method} ${url}  (payer ${account.address}${devchain && !process.env.PAYER_KEY ? ', dev chain demo payer' : ''})`);
  const t0 = performance.now();
  let res: Response;
  try {
    res = await payFetch(url, {
      method,
      ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}),
    });
  } catch (err) {
    throw new Error(`${url}: ${err instanceof Error ? err.message : String(err)} (is the server running there? set PAY_SERVER_URL or HTTP_PORT)`);
  }
  const elapsed = Math.round(performance.now() - t0);
  const text = await res.text();
  console.log(`\nstatus: ${res.status} ${res.statusText}  (${elapsed} ms)`);
  console.log('\nbody:');
  try {
    console.log(JSON.stringify(JSON.parse(text), null, 2));
  } catch {
    console.log(text);
  }
  const settlement = res.headers.get('payment-response');
  if (settlement) {
    const decoded = decodePaymentResponseHeader(settlement);
    console.log('\nPAYMENT-RESPONSE:');
    console.log(JSON.stringify(decoded, null, 2));
    if (decoded.transaction) console.log(`\nsettled: transaction ${decoded.transaction} on ${decoded.network}`);
  } else {
    console.log('\nPAYMENT-RESPONSE: none (nothing was charged)');
  }
  const required = res.headers.get('payment-required');
  if (required) {
    console.log('\nPAYMENT-REQUIRED:');
    console.log(JSON.stringify(decodePaymentRequiredHeader(required), null, 2));
  }
  return res.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`pay failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
