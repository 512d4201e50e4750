/**
 * The MCP door end to end: the real process (every role, simulated market,
 * payments on the dev chain) and the MCP SDK's own Client over Streamable
 * HTTP. Tools are the catalogue's (schemas equal to /openapi.json's); a free
 * tool answers; a paid tool called unpaid returns the PaymentRequired in both
 * places the x402 MCP transport names; an EIP-3009 authorization built by the
 * real x402 client pays it and the result carries its settlement (balances
 * read on chain). Replay, a payment made for another tool, invalid arguments
 * and windows outside coverage (refused before payment), and a tool that
 * fails after payment (not settled) behave as on the HTTP door.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { validateDiscoveryExtension, type DiscoveryExtension } from '@x402/extensions/bazaar';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { RunningApi } from '../../api/role.js';
import type { RunningProcess } from '../../roles/process.js';
import { inputJsonSchema, outputJsonSchema } from '../../api/sku/json-schema.js';
import { SpreadCandlesOutput } from '../../api/telemetry/spread-candles/handler.js';
import { callTool, paymentRequiredOf, settlementOf } from '../../scripts/mcp-payment-client.js';
import { startPaidApi } from '../helpers/paid-api.js';
import { eventually, testLogger } from '../helpers/config.js';
import { isStreamedSku } from '../../api/sku/streamed-answer.js';

const logger = testLogger();
let dataDir: string;
let proc: RunningProcess;
let api: RunningApi;
let url: string;
let payer: PrivateKeyAccount;
let mcp: Client;
let x402: x402Client;
let failing: Server;
let failingUrl: string;

const balance = () => api.payments.settlement.devChain!.balanceOf(payer.address);
const text = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-door-'));
  ({ proc, api, url, payer } = await startPaidApi(
    dataDir,
    { ROLE: 'all', MARKET_SOURCE: 'simulated', STORE: 'duckdb', FETCH_ALLOW_LOOPBACK: 'true' },
    logger,
  ));
  const chain = api.payments.settlement;
  x402 = new x402Client().register('eip155:*', new ExactEvmScheme(payer));
  x402.setSpendControls({
    allowedAssets: [{ network: chain.network, asset: chain.asset, maxAmountPerPayment: '200000' }],
  });
  mcp = new Client({ name: 'mcp-door-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  // A site that always answers 500: stealth_dom fails after payment.
  failing = createServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('boom'));
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
  failingUrl = `http://127.0.0.1:${(failing.address() as { port: number }).port}/page`;
  // The simulated market has stored a spread sample of ETH/USD (the free coverage tool says so).
  await eventually(
    async () =>
      (await callTool(mcp, 'coverage', { pair: 'ETH/USD' })).structuredContent as
        { latest_timestamp?: string | null } | undefined,
    (c) => Boolean(c?.latest_timestamp),
    60_000,
    500,
  );
}, 180_000);

afterAll(async () => {
  await mcp?.close();
  await new Promise((r) => failing?.close(r));
  await proc?.shutdown('test done');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function unpaidChallenge(name: string, args: Record<string, unknown>): Promise<PaymentRequired> {
  const r = await callTool(mcp, name, args);
  const required = paymentRequiredOf(r);
  expect(required, JSON.stringify(r)).toBeDefined();
  return required!;
}

describe('MCP door: tools and free calls', () => {
  let tools: Tool[];

  it('lists one tool per SKU with the catalogue schemas, plus discovery (the streamed routes are HTTP only)', async () => {
    ({ tools } = await mcp.listTools());
    const skus = api.catalogue.skus.filter((s) => !isStreamedSku(s));
    expect(skus.length).toBe(api.catalogue.skus.length - 2); // the live stream and bulk history
    expect(tools.map((t) => t.name).sort()).toEqual([...skus.map((s) => s.id.replace(/-/g, '_')), 'discovery'].sort());
    for (const sku of skus) {
      const tool = tools.find((t) => t.name === sku.id.replace(/-/g, '_'))!;
      expect(tool.inputSchema).toEqual(inputJsonSchema(sku));
      // The catalogue's output schema, or (isError) the x402 PaymentRequired or the problem.
      const { title: _title, ...result } = (tool.outputSchema as unknown as { anyOf: Record<string, unknown>[] })
        .anyOf[0]!;
      expect(result).toEqual(outputJsonSchema(sku));
      expect((tool.outputSchema as unknown as { anyOf: unknown[] }).anyOf).toHaveLength(sku.free ? 2 : 3);
      expect(tool._meta?.['x402/pricing']).toMatchObject({ free: sku.free, amount: sku.priceAtomic });
      expect(tool.description).toContain(sku.free ? 'Free.' : 'per call');
    }
  });

  it('calls free tools: coverage and discovery', async () => {
    const coverage = await callTool(mcp, 'coverage', {});
    expect(coverage.isError).toBeFalsy();
    expect(coverage.structuredContent).toMatchObject({ slice_interval_minutes: 15 });
    expect(JSON.parse(text(coverage))).toEqual(coverage.structuredContent);
    const discovery = await callTool(mcp, 'discovery', {});
    expect((discovery.structuredContent as { endpoints: unknown[] }).endpoints).toHaveLength(19); // the spec's 17 routes, the stream and bulk history (issue 30)
  });

  it('serves the discovery documents as resources, pointing back to /mcp', async () => {
    const { resources } = await mcp.listResources();
    const agents = resources.find((r) => r.uri.endsWith('/agents.md'))!;
    expect(agents).toBeDefined();
    expect(resources.map((r) => new URL(r.uri).pathname)).toEqual(
      expect.arrayContaining(['/skill.md', '/openapi.json', '/.well-known/mcp.json', '/api/v1/discovery']),
    );
    const read = await mcp.readResource({ uri: agents.uri });
    expect((read.contents[0] as { text: string }).text).toContain(`${url}/mcp`);
    const card = JSON.parse(
      ((await mcp.readResource({ uri: `${url}/.well-known/mcp.json` })).contents[0] as { text: string }).text,
    ) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(card.transport).toMatchObject({ type: 'streamable-http', url: `${url}/mcp` });
    // The card lists exactly what tools/list returns, and the version a current client negotiates.
    const listed = (await mcp.listTools()).tools.map((t) => t.name);
    expect((card.tools as { name: string }[]).map((t) => t.name)).toEqual(listed);
    expect(listed).toContain('discovery');
    const init = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: card.protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }),
    });
    const negotiated = (await init.json()) as { result: { protocolVersion: string } };
    expect(negotiated.result.protocolVersion).toBe(card.protocolVersion);
    expect(card.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  it('an unknown tool is a JSON-RPC InvalidParams error', async () => {
    await expect(callTool(mcp, 'no_such_tool', {})).rejects.toThrow(/Unknown tool/);
  });

  it('GET /mcp is not served (stateless): 405', async () => {
    const res = await fetch(`${url}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
  });
});

describe('MCP door: paying for a tool', () => {
  const candles = { pair: 'ETH/USD' };

  it('unpaid: isError, PaymentRequired in structuredContent and as x402/error JSON in content[0].text', async () => {
    const r = await callTool(mcp, 'spread_candles', candles);
    expect(r.isError).toBe(true);
    const pr = r.structuredContent as unknown as PaymentRequired;
    expect(pr.x402Version).toBe(2);
    expect(pr.resource).toMatchObject({ url: 'mcp://tool/spread_candles', mimeType: 'application/json' });
    expect(pr.accepts).toHaveLength(1);
    expect(pr.accepts[0]).toMatchObject({
      scheme: 'exact',
      amount: '15000',
      network: api.payments.settlement.network,
      asset: api.payments.settlement.asset,
      maxTimeoutSeconds: 300,
    });
    const wrapped = JSON.parse(text(r)) as { 'x402/error': { code: number; message: string; data: unknown } };
    expect(wrapped['x402/error'].code).toBe(402);
    expect(wrapped['x402/error'].data).toEqual(r.structuredContent);
    // The Bazaar declaration is the MCP flavour, and @x402/extensions accepts it.
    const bazaar = pr.extensions?.bazaar as DiscoveryExtension & { info: { input: Record<string, unknown> } };
    expect(bazaar.info.input).toMatchObject({ type: 'mcp', toolName: 'spread_candles', transport: 'streamable-http' });
    expect(validateDiscoveryExtension(bazaar).errors ?? []).toEqual([]);
  });

  it('paid with an EIP-3009 authorization from the x402 client: the result and its settlement; a replay is refused', async () => {
    const before = await balance();
    const payment = await x402.createPaymentPayload(await unpaidChallenge('spread_candles', candles));
    const r = await callTool(mcp, 'spread_candles', candles, payment);
    expect(r.isError, text(r)).toBeFalsy();
    expect(SpreadCandlesOutput.safeParse(r.structuredContent).success).toBe(true);
    expect(r.structuredContent).toMatchObject({ pair: 'ETH/USD', interval: '15m' });
    const settlement = settlementOf(r)!;
    expect(settlement).toMatchObject({ success: true, network: api.payments.settlement.network });
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(before - (await balance())).toBe(15_000n);

    const replay = await callTool(mcp, 'spread_candles', candles, payment);
    expect(replay.isError).toBe(true);
    expect(paymentRequiredOf(replay)?.error).toBe('nonce_already_used');
    expect(settlementOf(replay)).toBeUndefined();
    expect(before - (await balance())).toBe(15_000n);
  });

  it('one replay lock for both doors: a signature spent over HTTP is refused over MCP', async () => {
    const res402 = await fetch(`${url}/api/v1/crypto/spread-candles?pair=ETH/USD`);
    const challenge = decodePaymentRequiredHeader(res402.headers.get('payment-required')!);
    const payment = await x402.createPaymentPayload(challenge);
    const before = await balance();
    const paidOverHttp = await fetch(`${url}/api/v1/crypto/spread-candles?pair=ETH/USD`, {
      headers: { 'payment-signature': encodePaymentSignatureHeader(payment) },
    });
    expect(paidOverHttp.status).toBe(200);
    expect(before - (await balance())).toBe(15_000n);
    const again = await callTool(mcp, 'spread_candles', candles, payment);
    expect(again.isError).toBe(true);
    expect(paymentRequiredOf(again)).toBeDefined();
    expect(before - (await balance())).toBe(15_000n);
  });

  it('a payment made for another tool is refused before anything runs, and stays usable for its own tool', async () => {
    const before = await balance();
    const forCandles = await x402.createPaymentPayload(await unpaidChallenge('spread_candles', candles));
    const wrong = await callTool(mcp, 'dislocations', candles, forCandles);
    expect(wrong.isError).toBe(true);
    const challenge = paymentRequiredOf(wrong)!;
    expect(challenge.accepts[0]!.amount).toBe('45000');
    expect(challenge.resource.url).toBe('mcp://tool/dislocations');
    expect(await balance()).toBe(before);
    const right = await callTool(mcp, 'spread_candles', candles, forCandles);
    expect(right.isError, text(right)).toBeFalsy();
    expect(before - (await balance())).toBe(15_000n);
  });

  it('a payment for another tool at the same price is refused by its binding (payment_resource_mismatch), and no money moves', async () => {
    const impact = { pair: 'ETH/USD', side: 'buy', size_usd: 1000 };
    const latencyChallenge = await eventually(
      async () => paymentRequiredOf(await callTool(mcp, 'execution_latency', {})),
      (c) => c !== undefined,
      60_000,
      500,
    );
    const impactChallenge = await unpaidChallenge('impact_simulation', impact);
    // Same price, same asset, same payee: only the resource tells them apart.
    expect(impactChallenge.accepts[0]!.amount).toBe(latencyChallenge!.accepts[0]!.amount);
    const before = await balance();
    const forImpact = await x402.createPaymentPayload(impactChallenge);
    const wrong = await callTool(mcp, 'execution_latency', {}, forImpact);
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toContain('payment_resource_mismatch');
    expect(paymentRequiredOf(wrong)!.resource.url).toBe('mcp://tool/execution_latency');
    expect(await balance()).toBe(before);
  });

  it('invalid arguments and windows outside coverage are refused before any payment, even with one attached', async () => {
    const before = await balance();
    const payment: PaymentPayload = await x402.createPaymentPayload(await unpaidChallenge('spread_candles', candles));
    const bad = await callTool(mcp, 'spread_candles', { pair: 'NOPE/USD' }, payment);
    expect(bad.isError).toBe(true);
    expect(paymentRequiredOf(bad)).toBeUndefined();
    expect(bad.structuredContent).toMatchObject({ status: 400, code: 'invalid_parameter', field: 'pair' });
    const missing = await callTool(mcp, 'spread_candles', {});
    expect(missing.structuredContent).toMatchObject({ status: 400, code: 'missing_parameter', field: 'pair' });
    const unknown = await callTool(mcp, 'spread_candles', { pair: 'ETH/USD', colour: 'red' });
    expect(unknown.structuredContent).toMatchObject({ code: 'unknown_parameter', field: 'colour' });
    const outside = await callTool(mcp, 'spread_candles', { pair: 'ETH/USD', date: '2001-01-01' }, payment);
    expect(outside.structuredContent).toMatchObject({
      status: 404,
      code: 'outside_coverage',
      field: 'date',
      charged: '0 USDC (pre-flight rejection, no charge)',
    });
    expect(await balance()).toBe(before);
    // The refused calls never touched the signature: it still pays.
    expect((await callTool(mcp, 'spread_candles', candles, payment)).isError).toBeFalsy();
  });

  it('a tool that fails after payment is not settled, and its signature is spent', async () => {
    const args = { url: failingUrl, format: 'text', timeout: 2000 };
    const before = await balance();
    const payment = await x402.createPaymentPayload(await unpaidChallenge('stealth_dom', args));
    const r = await callTool(mcp, 'stealth_dom', args, payment);
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(settlementOf(r)).toBeUndefined();
    expect(await balance()).toBe(before);
    const again = await callTool(mcp, 'stealth_dom', args, payment);
    expect(paymentRequiredOf(again)?.error).toBe('nonce_already_used');
    expect(await balance()).toBe(before);
  });
});

describe('MCP door: the bundled client', () => {
  // A child process (tsx start-up, an MCP session, a payment): seconds when quiet, minutes on a busy machine.
  it(
    'npm run pay:mcp finds the server by HTTP_PORT, pays with the demo payer from devchain.json, and prints the settlement',
    { timeout: 240_000 },
    async () => {
      const before = await balance();
      const port = new URL(url).port;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'scripts/pay-mcp.ts', 'spread_candles', '{"pair":"ETH/USD"}'],
        {
          env: { ...process.env, PAY_SERVER_URL: '', PAYER_KEY: '', HTTP_PORT: port, DATA_DIR: dataDir },
          timeout: 180_000,
        },
      );
      expect(stdout).toContain(
        `server http://127.0.0.1:${port} (from HTTP_PORT; set PAY_SERVER_URL or HTTP_PORT to call another)`,
      );
      expect(stdout).toContain(`1. payment required: 15000 atomic units of ${api.payments.settlement.asset}`);
      expect(stdout).toMatch(/settled: transaction 0x[0-9a-f]{64} on eip155:8453/);
      expect(stdout).toContain('"pair": "ETH/USD"');
      expect(before - (await balance())).toBe(15_000n);
    },
  );
});

describe('MCP door: the Streamable HTTP transport (stateless, JSON answers), as a raw HTTP client sees it', () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-06-18',
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const call = (id: number | string, name: string, args: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  const jsonRpcError = async (res: Response) =>
    (await res.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };

  it('initialize without a session: the server info, no Mcp-Session-Id', async () => {
    const res = await post(
      {
        jsonrpc: '2.0',
        id: 'init-1',
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      },
      { 'mcp-protocol-version': '' },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = (await res.json()) as {
      id: string;
      result: { protocolVersion: string; serverInfo: { name: string }; capabilities: Record<string, unknown> };
    };
    expect(body.id).toBe('init-1');
    expect(body.result.protocolVersion).toBe('2025-06-18');
    expect(body.result.capabilities).toHaveProperty('tools');
  });

  it('one request: one JSON-RPC answer with its id', async () => {
    const res = await post(call(7, 'coverage'));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { jsonrpc: string; id: number; result: CallToolResult };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 7 });
    expect(body.result.structuredContent).toMatchObject({ slice_interval_minutes: 15 });
  });

  it('a batch: the answers in the order of the requests; an unknown tool is an error answer in its place', async () => {
    const res = await post([
      call('b', 'coverage'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call('a', 'no_such_tool'),
      { jsonrpc: '2.0', id: 'c', method: 'tools/list' },
    ]);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; result?: unknown; error?: { code: number } }[];
    expect(body.map((m) => m.id)).toEqual(['b', 'a', 'c']);
    expect(body[0]!.result).toBeDefined();
    expect(body[1]!.error?.code).toBe(-32602);
    expect((body[2]!.result as { tools: unknown[] }).tools.length).toBeGreaterThan(10);
  });

  it('notifications only: 202 with no body', async () => {
    const res = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });

  it('refuses what the transport cannot answer, with a JSON-RPC error and the HTTP status the SDK uses', async () => {
    const notAcceptable = await post(call(1, 'coverage'), { accept: 'application/json' });
    expect(notAcceptable.status).toBe(406);
    expect((await jsonRpcError(notAcceptable)).error.code).toBe(-32000);

    const wrongType = await post(JSON.stringify(call(1, 'coverage')), { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);

    const version = await post(call(1, 'coverage'), { 'mcp-protocol-version': '1999-01-01' });
    expect(version.status).toBe(400);
    expect((await jsonRpcError(version)).error.message).toMatch(/Unsupported protocol version/);

    const notJsonRpc = await post({ hello: 'world' });
    expect(notJsonRpc.status).toBe(400);
    expect((await jsonRpcError(notJsonRpc)).error.code).toBe(-32700);
  });
});
