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
 * Server and payer as `npm run pay` (scripts/pay-target.ts): PAY_SERVER_URL,
 * else HTTP_PORT, else `$DATA_DIR/devchain.json`; the MCP endpoint is its
 * /mcp. PAYER_KEY, else the dev chain's demo payer; PAY_ASSET, PAY_MAX_ATOMIC.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { payer, payTarget } from './pay-target.js';
import { callTool, paymentRequiredOf, settlementOf } from './mcp-payment-client.js';

const USAGE = "usage: npm run pay:mcp -- <tool> ['<json arguments>']   |   npm run pay:mcp -- list";

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
        console.log(
          `${t.name.padEnd(20)} ${pricing?.free ? 'free' : `${pricing?.readableUsdc} USDC`.padEnd(12)}  ${t.title ?? ''}`,
        );
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
    console.log(
      `\n1. payment required: ${accepted?.amount} atomic units of ${accepted?.asset} on ${accepted?.network} to ${accepted?.payTo}`,
    );
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
    if (settlement?.transaction)
      console.log(`\nsettled: transaction ${settlement.transaction} on ${settlement.network}`);
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
