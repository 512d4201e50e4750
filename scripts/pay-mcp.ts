/**
 * The x402 MCP loop from a terminal: connects to the gateway's MCP server
 * (Streamable HTTP, the SDK's own client), calls a tool, and when it asks for
 * payment signs the PaymentRequired with an x402 client and calls again with
 * `_meta["x402/payment"]`; prints each step, the result and the settlement.
 *
 *   npm run pay:mcp -- list
 *   npm run pay:mcp -- spread_candles '{"pair":"ETH/USD"}'
 *   npm run pay:mcp -- coverage
 *
 * Server (scripts/pay-target.ts, as `npm run pay`): PAY_SERVER_URL, else
 * HTTP_PORT, else the API URL in `$DATA_DIR/devchain.json`, else
 * http://127.0.0.1:4020; the MCP endpoint is its /mcp. Payer: PAYER_KEY, else the dev chain's demo payer from
 * `$DATA_DIR/devchain.json`, whose test USDC is then the allowed asset; the
 * per-payment cap is 0.2 USDC (PAY_MAX_ATOMIC).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { x402Client } from '@x402/core/client';
import type { Network } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { payTarget, type PayTarget } from './pay-target.js';
import { callTool, paymentRequiredOf, settlementOf } from './mcp-payment-client.js';

const USAGE = "usage: npm run pay:mcp -- <tool> ['<json arguments>']   |   npm run pay:mcp -- list";

function payer({ dataDir, devchain }: PayTarget): { client: x402Client; address: string } | { error: string } {
  const key = (process.env.PAYER_KEY || devchain?.payer_key) as Hex | undefined;
  if (!key) return { error: `no payer: set PAYER_KEY, or start the server with SETTLEMENT=devchain so ${dataDir}/devchain.json exists` };
  const account = privateKeyToAccount(key);
  const maxAtomic = process.env.PAY_MAX_ATOMIC ?? '200000';
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
  const allowedAssets = devchain ? [{ network: devchain.network as Network, asset: devchain.asset, maxAmountPerPayment: maxAtomic }] : [];
  client.setSpendControls({ maxAmountPerPayment: `$${Number(maxAtomic) / 1e6}`, ...(allowedAssets.length ? { allowedAssets } : {}) });
  return { client, address: account.address };
}

const show = (label: string, value: unknown) => console.log(`\n${label}:\n${JSON.stringify(value, null, 2)}`);

async function main(): Promise<number> {
  const [tool, json] = process.argv.slice(2);
  if (!tool) {
    console.error(USAGE);
    return 2;
  }
  let args: Record<string, unknown> = {};
  if (json !== undefined) {
    try {
      args = JSON.parse(json) as Record<string, unknown>;
    } catch {
      console.error(`the arguments are not JSON: ${json}\n${USAGE}`);
      return 2;
    }
  }
  const target = await payTarget();
  const { server } = target;
  console.log(`server ${server} (from ${target.from}; set PAY_SERVER_URL or HTTP_PORT to call another)`);
  const client = new Client({ name: 'x402-gateway-pay-mcp', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server}/mcp`)));
  try {
    if (tool === 'list') {
      const { tools } = await client.listTools();
      for (const t of tools) {
        const pricing = t._meta?.['x402/pricing'] as { free?: boolean; readableUsdc?: string } | undefined;
        console.log(`${t.name.padEnd(20)} ${pricing?.free ? 'free' : `${pricing?.readableUsdc} USDC`.padEnd(12)}  ${t.title ?? ''}`);
      }
      return 0;
    }
    console.log(`MCP ${server}/mcp  tools/call ${tool} ${JSON.stringify(args)}`);
    const t0 = performance.now();
    const first = await callTool(client, tool, args);
    const required = paymentRequiredOf(first);
    if (!required) {
      show(first.isError ? 'refused (nothing charged)' : 'result (free)', first.structuredContent ?? first.content);
      return first.isError ? 1 : 0;
    }
    const accepted = required.accepts[0];
    console.log(`\n1. payment required: ${accepted?.amount} atomic units of ${accepted?.asset} on ${accepted?.network} to ${accepted?.payTo}`);
    const who = payer(target);
    if ('error' in who) {
      console.error(who.error);
      return 2;
    }
    const payment = await who.client.createPaymentPayload(required);
    console.log(`2. signed an EIP-3009 authorization as ${who.address}; calling again with _meta["x402/payment"]`);
    const paid = await callTool(client, tool, args, payment);
    const elapsed = Math.round(performance.now() - t0);
    const settlement = settlementOf(paid);
    if (paid.isError) {
      show(`3. refused (${elapsed} ms)`, paid.structuredContent ?? paid.content);
      return 1;
    }
    show(`3. result (${elapsed} ms)`, paid.structuredContent ?? paid.content);
    if (settlement) show('_meta["x402/payment-response"]', settlement);
    if (settlement?.transaction) console.log(`\nsettled: transaction ${settlement.transaction} on ${settlement.network}`);
    return 0;
  } finally {
    await client.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`pay:mcp failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
