/**
 * One table of cases through every door of the paid-call pipeline
 * (api/paid-call/): HTTP (POST with a JSON body, PAYMENT-SIGNATURE), MCP
 * (tools/call with _meta["x402/payment"], the SDK's own client) and A2A
 * (JSON-RPC message/send naming the skill, then a follow-up with the task id
 * and metadata x402.payment.payload; tasks/get must agree with every answer),
 * on the real process (every role, simulated market, payments on the dev
 * chain). Each case is asserted once and must come out the same on every door: the
 * status, the stable code and field, the zero charge of a rejection, the
 * challenge and its reason, the settlement, and the payer's balance on chain.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { x402Client } from '@x402/core/client';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import {
  extractOffersFromPaymentRequired,
  verifyOfferSignatureEIP712,
  verifyReceiptMatchesOffer,
  verifyReceiptSignatureEIP712,
  decodeSignedOffers,
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
} from '@x402/extensions/offer-receipt';
import { createSIWxClientHook, createSIWxPayload, parseSIWxHeader } from '@x402/extensions/sign-in-with-x';
import { component, verifySignature, webcrypto as sigWebcrypto } from 'http-message-sig';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { RunningApi } from '../../api/role.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { spreadSample } from '../helpers/spread-sample.js';
import type { RunningProcess } from '../../roles/process.js';
import { SpreadCandlesOutput } from '../../api/telemetry/spread-candles/handler.js';
import { callTool, paymentRequiredOf, settlementOf } from '../../scripts/mcp-payment-client.js';
import { startPaidApi } from '../helpers/paid-api.js';
import { eventually, testLogger } from '../helpers/config.js';

const ZERO = '0 USDC (pre-flight rejection, no charge)';
const CLOSED = Date.UTC(2025, 2, 10, 9, 15);
const CLOSED_SLICE = { pair: 'ETH/USD', date: '2025-03-10', time: '0915' };
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

/** What a door answered, in the terms both doors share. */
interface Answer {
  status: number;
  code?: string;
  field?: string;
  charged?: string;
  /** The 200 body (MCP: structuredContent). */
  body?: unknown;
  /** The challenge sent with a 402 (HTTP: PAYMENT-REQUIRED; MCP: the PaymentRequired result). */
  challenge?: PaymentRequired;
  settlement?: SettleResponse;
  /** The exact body bytes of a 200 (MCP: content[0].text) and what its answer signature covers. */
  signed?: SignedAnswer;
}

/** A paid answer as an RFC 9421 verifier sees it. */
interface SignedAnswer {
  bytes: Uint8Array;
  /** content-digest, payment-response, signature-input, signature (absent ones missing). */
  fields: { name: string; value: string }[];
  method: string;
  targetUri: string;
}

interface Door {
  name: 'http' | 'mcp' | 'a2a';
  call(
    skuId: string,
    args: Record<string, unknown>,
    payment?: PaymentPayload,
    siwx?: { header: string },
  ): Promise<Answer>;
  /** The URL a sign-in-with-x client signs for (the route's HTTP URL on both doors). */
  siwxUrl(skuId: string): string;
}

const SIGNED_FIELDS = ['content-digest', 'payment-response', 'signature-input', 'signature'];

const http: Door = {
  name: 'http',
  async call(skuId, args, payment, siwx) {
    const sku = api.catalogue.byId(skuId)!;
    const target = `${url}${sku.path}`;
    const res = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(payment ? { 'payment-signature': encodePaymentSignatureHeader(payment) } : {}),
        ...(siwx ? { 'sign-in-with-x': siwx.header } : {}),
      },
      body: JSON.stringify(args),
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const body = JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
    const required = res.headers.get('payment-required');
    const settled = res.headers.get('payment-response');
    const fields = SIGNED_FIELDS.flatMap((name) => {
      const value = res.headers.get(name);
      return value === null ? [] : [{ name, value }];
    });
    if (res.status === 200)
      return {
        status: 200,
        body,
        ...(settled ? { settlement: decodePaymentResponseHeader(settled) } : {}),
        signed: { bytes, fields, method: 'POST', targetUri: target },
      };
    return {
      ...problemOf(body),
      ...(required ? { challenge: decodePaymentRequiredHeader(required) } : {}),
    };
  },
  siwxUrl: (skuId) => `${url}${api.catalogue.byId(skuId)!.path}`,
};

const mcpDoor: Door = {
  name: 'mcp',
  async call(skuId, args, payment, siwx) {
    const name = skuId.replace(/-/g, '_');
    const r = siwx
      ? ((await mcp.callTool({
          name,
          arguments: args,
          _meta: {
            'sign-in-with-x': parseSIWxHeader(siwx.header),
            ...(payment ? { 'x402/payment': payment } : {}),
          },
        })) as Awaited<ReturnType<typeof callTool>>)
      : await callTool(mcp, name, args, payment);
    const settlement = settlementOf(r);
    const text = (r.content?.[0] as { text?: string } | undefined)?.text ?? '';
    const meta = (r._meta?.['x402/answer-signature'] ?? {}) as Record<string, string>;
    const fields = SIGNED_FIELDS.flatMap((field) => (meta[field] ? [{ name: field, value: meta[field] }] : []));
    if (!r.isError)
      return {
        status: 200,
        body: r.structuredContent,
        ...(settlement ? { settlement } : {}),
        signed: { bytes: Buffer.from(text, 'utf8'), fields, method: 'POST', targetUri: `mcp://tool/${name}` },
      };
    const challenge = paymentRequiredOf(r);
    if (challenge) return { status: 402, challenge };
    return problemOf(r.structuredContent as Record<string, unknown>);
  },
  siwxUrl: (skuId) => `${url}${api.catalogue.byId(skuId)!.path}`,
};

/** An A2A task as this suite reads it (api/a2a/a2a-protocol.ts). */
interface A2aTask {
  kind: 'task';
  id: string;
  contextId: string;
  status: {
    state: string;
    message?: { parts: { kind: string; data?: Record<string, unknown> }[]; metadata?: Record<string, unknown> };
  };
  artifacts?: {
    name: string;
    parts: { kind: string; data?: unknown; text?: string }[];
    metadata?: Record<string, unknown>;
  }[];
}

let rpcId = 0;
async function a2aRpc(
  method: string,
  params: unknown,
): Promise<{ result?: A2aTask; error?: { data?: Record<string, unknown> } }> {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { result?: A2aTask; error?: { data?: Record<string, unknown> } };
}

/** message/send, then tasks/get of the task it answered, which must be the same task. */
async function a2aSend(message: Record<string, unknown>) {
  const sent = await a2aRpc('message/send', {
    message: { kind: 'message', messageId: `m-${++rpcId}`, role: 'user', ...message },
  });
  if (sent.result) expect((await a2aRpc('tasks/get', { id: sent.result.id })).result).toEqual(sent.result);
  return sent;
}

function a2aAnswerOf(sent: Awaited<ReturnType<typeof a2aRpc>>): Answer {
  if (!sent.result) return problemOf(sent.error?.data ?? {});
  const { status, artifacts } = sent.result;
  const metadata = status.message?.metadata ?? {};
  const required = metadata['x402.payment.required'] as PaymentRequired | undefined;
  const receipt = (metadata['x402.payment.receipts'] as SettleResponse[] | undefined)?.find((r) => r.success);
  if (status.state === 'completed') {
    const artifact = artifacts?.[0];
    const text = artifact?.parts.find((p) => p.kind === 'text')?.text;
    const signature = (artifact?.metadata?.['x402.answer.signature'] ?? {}) as Record<string, string>;
    const fields = SIGNED_FIELDS.flatMap((field) =>
      signature[field] ? [{ name: field, value: signature[field] }] : [],
    );
    return {
      status: 200,
      body: artifact?.parts.find((p) => p.kind === 'data')?.data,
      ...(receipt ? { settlement: receipt } : {}),
      ...(text === undefined
        ? {}
        : {
            signed: {
              bytes: Buffer.from(text, 'utf8'),
              fields,
              method: 'POST',
              targetUri: `a2a://skill/${artifact!.name}`,
            },
          }),
    };
  }
  if (required) return { status: 402, challenge: required };
  return problemOf(status.message?.parts.find((p) => p.kind === 'data')?.data ?? {});
}

const a2aDoor: Door = {
  name: 'a2a',
  async call(skuId, args, payment, siwx) {
    const proof = siwx ? { 'sign-in-with-x': parseSIWxHeader(siwx.header) } : {};
    const first = await a2aSend({ metadata: { skill: skuId, ...proof }, parts: [{ kind: 'data', data: args }] });
    if (!payment || first.result?.status.state !== 'input-required') return a2aAnswerOf(first);
    const paid = await a2aSend({
      taskId: first.result.id,
      contextId: first.result.contextId,
      parts: [{ kind: 'text', text: 'Here is the payment authorization.' }],
      metadata: { 'x402.payment.status': 'payment-submitted', 'x402.payment.payload': payment, ...proof },
    });
    return a2aAnswerOf(paid);
  },
  siwxUrl: (skuId) => `${url}${api.catalogue.byId(skuId)!.path}`,
};

function problemOf(body: Record<string, unknown>): Answer {
  return {
    status: body.status as number,
    code: body.code as string,
    ...(typeof body.field === 'string' ? { field: body.field } : {}),
    ...(typeof body.charged === 'string' ? { charged: body.charged } : {}),
  };
}

const balance = () => api.payments.settlement.devChain!.balanceOf(payer.address);

/** A payment for `skuId` signed against the door's own challenge (each door names the resource its own way). */
async function paymentFor(door: Door, skuId: string, args: Record<string, unknown>): Promise<PaymentPayload> {
  const unpaid = await door.call(skuId, args);
  expect(unpaid.challenge, `${door.name}: ${JSON.stringify(unpaid)}`).toBeDefined();
  return x402.createPaymentPayload(unpaid.challenge!);
}

/** The case through one door: its answer and what the payer was charged (atomic USDC). */
async function through(
  door: Door,
  skuId: string,
  args: Record<string, unknown>,
  payment?: PaymentPayload,
): Promise<{ answer: Answer; charged: bigint }> {
  const before = await balance();
  const answer = await door.call(skuId, args, payment);
  return { answer, charged: before - (await balance()) };
}

/** The parts of an answer every door must agree on (the resource URL differs: a path, mcp://tool/<name>, a2a://skill/<id>). */
function comparable({ answer, charged }: { answer: Answer; charged: bigint }) {
  return {
    status: answer.status,
    // A 402's problem code is HTTP's alone (MCP answers the PaymentRequired itself): the challenge is compared.
    code: answer.status === 402 ? undefined : answer.code,
    field: answer.field,
    charged: answer.charged,
    challenge: answer.challenge && {
      error: answer.challenge.error,
      amount: answer.challenge.accepts[0]?.amount,
      payTo: answer.challenge.accepts[0]?.payTo,
    },
    settled: answer.settlement?.success,
    balanceDelta: charged,
  };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'doors-'));
  ({ proc, api, url, payer } = await startPaidApi(
    dataDir,
    {
      ROLE: 'all',
      MARKET_SOURCE: 'simulated',
      STORE: 'duckdb',
      FETCH_ALLOW_LOOPBACK: 'true',
      SKUS_DISABLED: 'summarize',
    },
    logger,
  ));
  const chain = api.payments.settlement;
  x402 = new x402Client().register('eip155:*', new ExactEvmScheme(payer));
  x402.setSpendControls({
    allowedAssets: [{ network: chain.network, asset: chain.asset, maxAmountPerPayment: '200000' }],
  });
  mcp = new Client({ name: 'doors-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  // A site that always answers 500: stealth-dom fails after payment.
  failing = createServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('boom'));
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
  failingUrl = `http://127.0.0.1:${(failing.address() as { port: number }).port}/page`;
  // A closed day of ETH/USD (long ended): its slices qualify for sign-in-with-x re-reads.
  await insertSpreadSamples(proc.ctx.store!, [
    spreadSample(900_001, CLOSED + 10_000),
    spreadSample(900_002, CLOSED + 60_000),
  ]);
  // The simulated market has stored a spread sample of ETH/USD.
  await eventually(
    async () => (await http.call('coverage', { pair: 'ETH/USD' })).body as { latest_timestamp?: string | null },
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

const doors = [http, mcpDoor, a2aDoor];

/** Runs the case through every door; every door's answer equals the first's, which is returned for the case's own checks. */
async function sameOnEveryDoor(
  run: (door: Door) => Promise<{ answer: Answer; charged: bigint }>,
): Promise<ReturnType<typeof comparable>> {
  const seen = [];
  for (const door of doors) seen.push({ door: door.name, ...comparable(await run(door)) });
  const [first, ...rest] = seen;
  for (const other of rest) expect({ ...other, door: first!.door }, `${other.door} vs ${first!.door}`).toEqual(first);
  return first!;
}

describe('every door: refused before payment, never charged', () => {
  it('an SKU that is not served: 503 sku_unavailable', async () => {
    const example = api.catalogue.byId('summarize')!.exampleInput as Record<string, unknown>;
    const outcome = await sameOnEveryDoor((door) => through(door, 'summarize', example));
    expect(outcome).toMatchObject({ status: 503, code: 'sku_unavailable', charged: ZERO, balanceDelta: 0n });
    expect(outcome.challenge).toBeUndefined();
  });

  it.each([
    ['an invalid parameter', { pair: 'NOPE/USD' }, 'invalid_parameter', 'pair'],
    ['an unknown parameter', { pair: 'ETH/USD', colour: 'red' }, 'unknown_parameter', 'colour'],
    ['a missing parameter', {}, 'missing_parameter', 'pair'],
  ])('%s: 400 with its code and field', async (_, args, code, field) => {
    const outcome = await sameOnEveryDoor((door) => through(door, 'spread-candles', args));
    expect(outcome).toMatchObject({ status: 400, code, field, balanceDelta: 0n });
    expect(outcome.challenge).toBeUndefined();
  });

  it('a window outside coverage: 404 outside_coverage with the zero charge, even with a payment attached, which stays usable', async () => {
    const outside = { pair: 'ETH/USD', date: '2001-01-01' };
    const kept = new Map<string, PaymentPayload>();
    const outcome = await sameOnEveryDoor(async (door) => {
      const payment = await paymentFor(door, 'spread-candles', { pair: 'ETH/USD' });
      kept.set(door.name, payment);
      return through(door, 'spread-candles', outside, payment);
    });
    expect(outcome).toMatchObject({ status: 404, code: 'outside_coverage', field: 'date', charged: ZERO });
    expect(outcome.balanceDelta).toBe(0n);
    // The rejection never touched the signature: it still pays, once, on its own door.
    for (const door of doors) {
      const paid = await through(door, 'spread-candles', { pair: 'ETH/USD' }, kept.get(door.name));
      expect(paid.answer.status, door.name).toBe(200);
      expect(paid.charged, door.name).toBe(15_000n);
    }
  });
});

describe('every door: paying', () => {
  it('no payment: the challenge at the catalogue price, nothing charged', async () => {
    const outcome = await sameOnEveryDoor((door) => through(door, 'spread-candles', { pair: 'ETH/USD' }));
    expect(outcome).toMatchObject({
      status: 402,
      challenge: { error: 'Payment required', amount: '15000', payTo: api.payments.settlement.payTo },
      balanceDelta: 0n,
    });
  });

  it('a payment made for another resource: refused with a fresh challenge for this one, nothing charged', async () => {
    const outcome = await sameOnEveryDoor(async (door) =>
      through(door, 'dislocations', { pair: 'ETH/USD' }, await paymentFor(door, 'spread-candles', { pair: 'ETH/USD' })),
    );
    expect(outcome).toMatchObject({ status: 402, challenge: { amount: '45000' }, balanceDelta: 0n });
    expect(outcome.challenge?.error).not.toBe('Payment required');
    expect(outcome.settled).toBeUndefined();
  });

  it('paid: the answer with its settlement, charged the price once; the same signature again is refused', async () => {
    const payments = new Map<string, PaymentPayload>();
    const outcome = await sameOnEveryDoor(async (door) => {
      const payment = await paymentFor(door, 'spread-candles', { pair: 'ETH/USD' });
      payments.set(door.name, payment);
      const paid = await through(door, 'spread-candles', { pair: 'ETH/USD' }, payment);
      expect(SpreadCandlesOutput.safeParse(paid.answer.body).success, door.name).toBe(true);
      expect(paid.answer.settlement?.transaction, door.name).toMatch(/^0x[0-9a-f]{64}$/);
      return paid;
    });
    expect(outcome).toMatchObject({ status: 200, settled: true, balanceDelta: 15_000n });
    const replay = await sameOnEveryDoor(async (door) =>
      through(door, 'spread-candles', { pair: 'ETH/USD' }, payments.get(door.name)),
    );
    expect(replay).toMatchObject({ status: 402, challenge: { error: 'nonce_already_used' }, balanceDelta: 0n });
  });

  it('a handler that fails after payment: its error, not settled, nothing charged, and the signature is spent', async () => {
    const args = { url: failingUrl, format: 'text', timeout: 2000 };
    const payments = new Map<string, PaymentPayload>();
    const outcome = await sameOnEveryDoor(async (door) => {
      const payment = await paymentFor(door, 'stealth-dom', args);
      payments.set(door.name, payment);
      return through(door, 'stealth-dom', args, payment);
    });
    expect(outcome).toMatchObject({ status: 502, code: 'upstream_error', balanceDelta: 0n });
    expect(outcome.settled).toBeUndefined();
    const again = await sameOnEveryDoor(async (door) => through(door, 'stealth-dom', args, payments.get(door.name)));
    expect(again).toMatchObject({ status: 402, challenge: { error: 'nonce_already_used' }, balanceDelta: 0n });
  });

  it('a free route: the answer, no challenge, no settlement', async () => {
    const outcome = await sameOnEveryDoor((door) => through(door, 'coverage', { pair: 'ETH/USD' }));
    expect(outcome).toMatchObject({ status: 200, balanceDelta: 0n });
    expect(outcome.challenge).toBeUndefined();
    expect(outcome.settled).toBeUndefined();
  });
});

/** A payment for the door's challenge carrying the payment identifier `id` (signed anew each time: a new nonce). */
async function paymentWithId(door: Door, skuId: string, args: Record<string, unknown>, id: string) {
  const payment = await paymentFor(door, skuId, args);
  payment.extensions = appendPaymentIdentifierToExtensions({ ...payment.extensions }, id);
  return payment;
}

const newPaymentId = () => `pay_${randomBytes(12).toString('hex')}`;

/** The answer's RFC 9421 signature, checked by Cloudflare's http-message-sig against the served key document. */
async function verifyAnswerSignature(signed: SignedAnswer, targetUri = signed.targetUri) {
  const keys = (await (await fetch(`${url}/.well-known/http-message-signatures-directory`)).json()) as {
    keys: (JsonWebKey & { kid: string })[];
  };
  const publicKey = await webcrypto.subtle.importKey('jwk', keys.keys[0]!, { name: 'Ed25519' }, false, ['verify']);
  return verifySignature(
    {
      kind: 'response',
      status: 200,
      fields: signed.fields,
      request: { kind: 'request', method: signed.method, targetUri, fields: [] },
    },
    {
      policy: {
        algorithms: ['ed25519'],
        requiredComponents: [
          '@status',
          'content-digest',
          'payment-response',
          component('@method', { req: true }),
          component('@target-uri', { req: true }),
        ],
        requiredParameters: ['created', 'keyid', 'alg'],
      },
      resolveVerifier: () => sigWebcrypto.verifier(publicKey),
    },
  );
}

describe('every door: signed offers, receipts and answers', () => {
  it('the challenge carries signed offers; the settled answer a receipt that matches them and a verifiable signature', async () => {
    const args = { pair: 'ETH/USD' };
    for (const door of doors) {
      const unpaid = await door.call('spread-candles', args);
      const offers = extractOffersFromPaymentRequired(unpaid.challenge!);
      expect(offers, door.name).toHaveLength(1);
      const signer = (await verifyOfferSignatureEIP712(offers[0] as EIP712SignedOffer)).signer;
      expect(unpaid.challenge!.extensions?.['payment-identifier'], door.name).toMatchObject({
        info: { required: false },
      });

      const paid = await through(door, 'spread-candles', args, await x402.createPaymentPayload(unpaid.challenge!));
      expect(paid.answer.status, door.name).toBe(200);
      expect(paid.charged, door.name).toBe(15_000n);
      const receipt = (paid.answer.settlement as { extensions?: Record<string, { info: { receipt: unknown } }> })
        .extensions?.['offer-receipt']?.info.receipt as EIP712SignedReceipt;
      const verified = await verifyReceiptSignatureEIP712(receipt);
      expect(verified.signer, door.name).toBe(signer);
      expect(verified.payload.payer.toLowerCase(), door.name).toBe(payer.address.toLowerCase());
      expect(verifyReceiptMatchesOffer(receipt, decodeSignedOffers(offers)[0]!, [payer.address]), door.name).toBe(true);

      const signed = paid.answer.signed!;
      const digest = `sha-256=:${createHash('sha256').update(signed.bytes).digest('base64')}:`;
      expect(signed.fields.find((f) => f.name === 'content-digest')?.value, door.name).toBe(digest);
      await expect(verifyAnswerSignature(signed), door.name).resolves.toBeDefined();
      // Another URL (or a tampered body) does not verify.
      await expect(verifyAnswerSignature(signed, `${signed.targetUri}x`), door.name).rejects.toThrow();
    }
  }, 120_000);

  it('the key document is served and linked from discovery', async () => {
    const discovery = (await (await fetch(`${url}/api/v1/discovery`)).json()) as {
      documents?: { signingKeys?: string };
    };
    expect(discovery.documents?.signingKeys).toBe(`${url}/.well-known/http-message-signatures-directory`);
  });
});

describe('every door: retries with a payment identifier', () => {
  it('a lost answer retried with the same identifier (signed anew): the same body, charged once', async () => {
    const args = { pair: 'ETH/USD' };
    for (const door of doors) {
      const id = newPaymentId();
      const first = await through(door, 'spread-candles', args, await paymentWithId(door, 'spread-candles', args, id));
      expect(first.answer.status, door.name).toBe(200);
      expect(first.charged, door.name).toBe(15_000n);
      // The answer was lost: the payer signs again (a new nonce) with the same identifier.
      const retry = await through(door, 'spread-candles', args, await paymentWithId(door, 'spread-candles', args, id));
      expect(retry.answer.status, door.name).toBe(200);
      expect(retry.charged, door.name).toBe(0n);
      expect(Buffer.from(retry.answer.signed!.bytes).toString('utf8'), door.name).toBe(
        Buffer.from(first.answer.signed!.bytes).toString('utf8'),
      );
      expect(retry.answer.settlement, door.name).toEqual(first.answer.settlement);
      await expect(verifyAnswerSignature(retry.answer.signed!), door.name).resolves.toBeDefined();
    }
  }, 120_000);

  it('20 concurrent retries of one identifier: one charge, the same answer to all', async () => {
    const args = { pair: 'ETH/USD' };
    for (const door of doors) {
      const id = newPaymentId();
      const payments = await Promise.all(
        Array.from({ length: 20 }, () => paymentWithId(door, 'spread-candles', args, id)),
      );
      const before = await balance();
      const answers = await Promise.all(payments.map((p) => door.call('spread-candles', args, p)));
      const after = await balance();
      expect(
        answers.map((a) => a.status),
        door.name,
      ).toEqual(Array(20).fill(200));
      expect(before - after, door.name).toBe(15_000n);
      const bodies = new Set(answers.map((a) => Buffer.from(a.signed!.bytes).toString('utf8')));
      expect(bodies.size, door.name).toBe(1);
      expect(new Set(answers.map((a) => a.settlement?.transaction)).size, door.name).toBe(1);
    }
  }, 180_000);

  it('the same identifier for another request: 409 payment_identifier_conflict, nothing charged', async () => {
    const outcome = await sameOnEveryDoor(async (door) => {
      const id = newPaymentId();
      const paid = await through(
        door,
        'spread-candles',
        { pair: 'ETH/USD' },
        await paymentWithId(door, 'spread-candles', { pair: 'ETH/USD' }, id),
      );
      expect(paid.answer.status, door.name).toBe(200);
      const other = { pair: 'ETH/USD', interval: '1h' };
      return through(door, 'spread-candles', other, await paymentWithId(door, 'spread-candles', other, id));
    });
    expect(outcome).toMatchObject({
      status: 409,
      code: 'payment_identifier_conflict',
      field: 'extensions.payment-identifier.info.id',
      balanceDelta: 0n,
    });
  }, 120_000);
});

describe('every door: paying once, reading a closed slice again (sign-in-with-x)', () => {
  /** A sign-in-with-x proof by `account`, made by x402's client hook from the door's own challenge. */
  async function proof(door: Door, account: Parameters<typeof createSIWxClientHook>[0]) {
    const unpaid = await door.call('spread-candles', CLOSED_SLICE);
    expect(unpaid.challenge?.extensions?.['sign-in-with-x'], door.name).toBeDefined();
    const hooked = await createSIWxClientHook(account)({
      paymentRequired: unpaid.challenge!,
      requestUrl: door.siwxUrl('spread-candles'),
    });
    return { header: hooked!.headers['sign-in-with-x']! };
  }

  it('after paying, a re-read with a proof is 200 without payment; the open window declares no sign-in-with-x', async () => {
    for (const door of doors) {
      const paid = await through(
        door,
        'spread-candles',
        CLOSED_SLICE,
        await paymentFor(door, 'spread-candles', CLOSED_SLICE),
      );
      expect(paid.answer.status, door.name).toBe(200);
      expect(paid.charged, door.name).toBe(15_000n);
      const reread = await (async () => {
        const before = await balance();
        const answer = await door.call('spread-candles', CLOSED_SLICE, undefined, await proof(door, payer));
        return { answer, charged: before - (await balance()) };
      })();
      expect(reread.answer.status, door.name).toBe(200);
      expect(reread.charged, door.name).toBe(0n);
      expect(reread.answer.settlement, door.name).toBeUndefined();
      expect(reread.answer.body, door.name).toEqual(paid.answer.body);
      const open = await door.call('spread-candles', { pair: 'ETH/USD' });
      expect(open.challenge?.extensions?.['sign-in-with-x'], door.name).toBeUndefined();
    }
  }, 120_000);

  it('a forged proof (another wallet, or a signature that is not the signer): refused with a challenge, nothing served', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey());
    for (const door of doors) {
      // A wallet that never paid.
      const notPaid = await door.call('spread-candles', CLOSED_SLICE, undefined, await proof(door, stranger));
      expect(notPaid.status, door.name).toBe(402);
      expect(notPaid.body, door.name).toBeUndefined();
      expect(notPaid.challenge?.error, door.name).toBe('siwx_not_entitled');
      // The payer's address claimed, signed by the stranger.
      const { header } = await proof(door, payer);
      const claimed = parseSIWxHeader(header);
      const unpaid = await door.call('spread-candles', CLOSED_SLICE);
      const info = unpaid.challenge!.extensions!['sign-in-with-x'] as { info: Parameters<typeof createSIWxPayload>[0] };
      const forged = await createSIWxPayload(
        { ...info.info, chainId: claimed.chainId, type: 'eip191' },
        stranger,
        door.siwxUrl('spread-candles'),
      );
      const tampered = { ...forged, address: payer.address };
      const refused = await door.call('spread-candles', CLOSED_SLICE, undefined, {
        header: Buffer.from(JSON.stringify(tampered)).toString('base64'),
      });
      expect(refused.status, door.name).toBe(402);
      expect(refused.body, door.name).toBeUndefined();
      expect(refused.challenge?.error, door.name).toMatch(/^invalid_siwx_/);
    }
  }, 120_000);
});
