/**
 * Signed offers, signed receipts and signed answers (api/payment/receipts/),
 * checked the way an agent would, with code the project did not write:
 *
 *   - the key document is fetched from the real app (createApp) on loopback,
 *     and the discovery document and the agent card point to it;
 *   - a tiny node:http server on loopback answers like a paid route: a 402
 *     whose PAYMENT-REQUIRED carries the signed offers, and a paid 200 with
 *     PAYMENT-RESPONSE (the settlement and its signed receipt), Content-Digest,
 *     Signature-Input and Signature;
 *   - offers and receipts are read and verified with @x402/extensions' own
 *     client helpers and verifiers; the answer signature with two independent
 *     RFC 9421 implementations from npm (Cloudflare's `http-message-sig` and
 *     `http-message-signatures`), the digest recomputed from the body bytes;
 *   - tampered receipts, bodies, statuses and payment responses are refused.
 */
import { createHash, createPublicKey, verify as verifyEd25519, webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Middleware } from 'koa';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import {
  decodeSignedOffers,
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  findAcceptsObjectFromSignedOffer,
  verifyOfferSignatureEIP712,
  verifyReceiptMatchesOffer,
  verifyReceiptSignatureEIP712,
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
} from '@x402/extensions/offer-receipt';
import { component, verifySignature, webcrypto as sigWebcrypto, type ResponseDescriptor } from 'http-message-sig';
import { httpbis } from 'http-message-signatures';
import { generatePrivateKey } from 'viem/accounts';
import { loadConfig } from '../../core/config.js';
import { HealthRegistry } from '../../core/health.js';
import { loadPairs } from '../../core/markets/pairs.js';
import type { Store } from '../../core/store/store.js';
import { createApp } from '../../api/app.js';
import { listen, type HttpServer } from '../../api/http-server.js';
import { buildCatalogue } from '../../api/catalogue/catalogue.js';
import { SERVICE_VERSION } from '../../api/discovery/context.js';
import { SIGNING_KEYS_DOCUMENT } from '../../api/discovery/signing-keys.js';
import { base64Json } from '../../api/payment/payload.js';
import { PaidCallEvidence, offersHeaderBytes } from '../../api/payment/receipts/paid-call-evidence.js';
import { MAX_RESOURCE_URL, encodeChallenge } from '../../api/payment/challenge.js';
import { checkExtensionEcho } from '../../api/payment/extension-echo.js';
import { ANSWER_META_KEY } from '../../api/payment/receipts/answer-signature.js';
import { serverSigningKey, type ServerSigningKey } from '../../api/payment/receipts/signing-key.js';
import { createLogger } from '../../core/logger.js';
import { testLogger } from '../helpers/config.js';
import { TEST_PAYMENT_INFO } from '../helpers/x402-client.js';

const PAYER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const TX = `0x${'5a'.repeat(32)}`;
const ROUTE = '/api/v1/crypto/spread-candles';

interface KeyDocument {
  keys: { kty: string; crv: string; x: string; kid: string; alg: string }[];
  x402: { offerReceipt: { signer: string; format: string }; answerSignature: { keyid: string; components: string[] } };
}

let key: ServerSigningKey;
let evidence: PaidCallEvidence;
let app: HttpServer;
let paidServer: Server;
let paidUrl: string;
let keyDoc: KeyDocument;
/** The price the paid route asks now (atomic USDC): the test changes it to see the offer re-signed. */
let price = '15000';
let signedOffers = 0;

function challengeFor(resourceUrl: string): PaymentRequired {
  return {
    x402Version: 2,
    error: 'Payment required',
    resource: { url: resourceUrl, description: 'spread candles', mimeType: 'application/json' },
    accepts: [
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: price,
        asset: TEST_PAYMENT_INFO.asset,
        payTo: TEST_PAYMENT_INFO.payTo,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ],
    extensions: { bazaar: { info: { input: { type: 'http', method: 'GET' } } } },
  };
}

beforeAll(async () => {
  key = serverSigningKey(generatePrivateKey());
  const counting: ServerSigningKey = {
    ...key,
    signTypedData: (args) => {
      if (args.primaryType === 'Offer') signedOffers += 1;
      return key.signTypedData(args);
    },
  };
  evidence = new PaidCallEvidence({ key: counting, offerValiditySeconds: 3600, includeTransaction: true });

  // The real app's documents, with the server key's public half in the payment terms.
  const config = loadConfig({ LOG_LEVEL: 'silent', NODE_ENV: 'test' });
  const pairs = loadPairs();
  const stubGate: Middleware = async (ctx) => {
    ctx.status = 402;
  };
  app = await listen(
    createApp({
      logger: testLogger(),
      health: new HealthRegistry({ version: SERVICE_VERSION, role: 'api' }),
      gateway: {
        runtime: {
          store: {} as Store,
          config,
          pairs,
          catalogue: buildCatalogue({ config, pairs }),
          now: () => Date.now(),
        },
        gate: stubGate,
        payment: { ...TEST_PAYMENT_INFO, signing: key },
      },
    }),
    { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 },
  );

  // A paid route as the pipeline will answer it: the building blocks' two calls.
  paidServer = createServer((req, res) => {
    void (async () => {
      const origin = `http://${req.headers.host}`;
      const resourceUrl = `${origin}${req.url}`;
      if (!req.headers['payment-signature']) {
        const challenge = await evidence.withOffers(challengeFor(resourceUrl));
        res.writeHead(402, { 'PAYMENT-REQUIRED': base64Json(challenge), 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      const settled: SettleResponse = { success: true, payer: PAYER, transaction: TX, network: 'eip155:8453' };
      const paymentResponse = base64Json(await evidence.withReceipt(settled, resourceUrl));
      const body = Buffer.from(JSON.stringify({ candles: [{ t: 1, spread_bps: 4.2 }], note: 'é' }));
      const signed = evidence.answerHeaders({
        status: 200,
        method: req.method ?? 'GET',
        targetUri: resourceUrl,
        body,
        paymentResponse,
      });
      res.writeHead(200, { 'content-type': 'application/json', 'PAYMENT-RESPONSE': paymentResponse, ...signed });
      res.end(body);
    })();
  });
  await new Promise<void>((resolve) => paidServer.listen(0, '127.0.0.1', resolve));
  paidUrl = `http://127.0.0.1:${(paidServer.address() as AddressInfo).port}`;

  const res = await fetch(`${app.url}${SIGNING_KEYS_DOCUMENT}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/http-message-signatures-directory+json');
  keyDoc = (await res.json()) as KeyDocument;
});

afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => paidServer?.close(resolve));
});

async function challenge(path = `${ROUTE}?pair=BTC-USD`) {
  const res = await fetch(`${paidUrl}${path}`);
  expect(res.status).toBe(402);
  return decodePaymentRequiredHeader(res.headers.get('payment-required')!);
}

async function paid(path = `${ROUTE}?pair=BTC-USD&from=2026-01-01`) {
  const url = `${paidUrl}${path}`;
  const res = await fetch(url, { headers: { 'payment-signature': 'stub' } });
  expect(res.status).toBe(200);
  const body = Buffer.from(await res.arrayBuffer());
  return { res, url, body };
}

describe('the key document', () => {
  it('publishes the Ed25519 answer key (JWKS, kid = keyid) and the EIP-712 signer, linked from discovery and the agent card', async () => {
    expect(keyDoc.keys).toHaveLength(1);
    expect(keyDoc.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid: key.answerKeyId, alg: 'EdDSA' });
    expect(keyDoc.x402.offerReceipt).toMatchObject({ signer: key.address, format: 'eip712' });
    expect(keyDoc.x402.answerSignature.keyid).toBe(key.answerKeyId);
    expect(JSON.stringify(keyDoc)).not.toMatch(/"d"\s*:/); // no private member

    const discovery = (await (await fetch(`${app.url}/api/v1/discovery`)).json()) as {
      payment: { signing: { keys: string; offerReceiptSigner: string } };
      documents: { signingKeys: string };
    };
    expect(discovery.payment.signing.keys).toBe(`${app.url}${SIGNING_KEYS_DOCUMENT}`);
    expect(discovery.payment.signing.offerReceiptSigner).toBe(key.address);
    expect(discovery.documents.signingKeys).toBe(`${app.url}${SIGNING_KEYS_DOCUMENT}`);
    const card = (await (await fetch(`${app.url}/.well-known/agent-card.json`)).json()) as {
      'x-x402-signing': { keys: string; answerKeyId: string };
    };
    expect(card['x-x402-signing']).toMatchObject({
      keys: `${app.url}${SIGNING_KEYS_DOCUMENT}`,
      answerKeyId: key.answerKeyId,
    });
  });
});

describe('signed offers', () => {
  it('every 402 carries an offer per accepts[] entry, verified by @x402/extensions as signed by the published key', async () => {
    const required = await challenge();
    const offers = extractOffersFromPaymentRequired(required);
    expect(offers).toHaveLength(1);
    const [decoded] = decodeSignedOffers(offers);
    expect(findAcceptsObjectFromSignedOffer(decoded!, required.accepts)).toBe(required.accepts[0]);
    const { signer, payload } = await verifyOfferSignatureEIP712(offers[0] as EIP712SignedOffer);
    expect(signer).toBe(keyDoc.x402.offerReceipt.signer);
    expect(payload).toMatchObject({ resourceUrl: `${paidUrl}${ROUTE}`, amount: '15000', scheme: 'exact' });
    const now = Date.now() / 1000;
    expect(payload.validUntil).toBeGreaterThan(now + 1700);
    expect(payload.validUntil).toBeLessThanOrEqual(now + 3601);
    expect(required.extensions?.bazaar).toBeDefined(); // the other extensions stay
  });

  it('are signed once per change of terms, not per request', async () => {
    const before = signedOffers;
    const first = extractOffersFromPaymentRequired(await challenge(`${ROUTE}?pair=ETH-USD`));
    const again = extractOffersFromPaymentRequired(await challenge(`${ROUTE}?pair=SOL-USD`));
    expect(again).toEqual(first); // another query, same resource and terms: the same signed offer
    const signedForThese = signedOffers - before;
    expect(signedForThese).toBeLessThanOrEqual(1);

    price = '16000';
    try {
      const repriced = extractOffersFromPaymentRequired(await challenge());
      expect(signedOffers - before).toBe(signedForThese + 1);
      const { signer, payload } = await verifyOfferSignatureEIP712(repriced[0] as EIP712SignedOffer);
      expect(payload.amount).toBe('16000');
      expect(signer).toBe(key.address);
    } finally {
      price = '15000';
    }
  });

  it('are signed again once half their validity has passed, and the cache of them is bounded', async () => {
    let nowMs = Date.now();
    let signatures = 0;
    const clocked = new PaidCallEvidence({
      key: {
        ...key,
        signTypedData: (args) => {
          signatures += 1;
          return key.signTypedData(args);
        },
      },
      offerValiditySeconds: 600,
      includeTransaction: true,
      maxOffers: 2,
      now: () => nowMs,
    });
    const at = (path: string) => clocked.withOffers(challengeFor(`${paidUrl}${path}`));
    await at('/a');
    nowMs += 299_000;
    await at('/a?q=1');
    expect(signatures).toBe(1);
    nowMs += 2_000; // past half of 600 s
    await at('/a');
    expect(signatures).toBe(2);
    await at('/b');
    await at('/c'); // the third resource evicts the least recently used (/a)
    await at('/a');
    expect(signatures).toBe(5);
  });

  it('fit the header room kept for them, and outlast the Bazaar declaration when the header budget is short', async () => {
    const longUrl = `${paidUrl}/${'p'.repeat(MAX_RESOURCE_URL - paidUrl.length - 1)}`;
    const offered = await evidence.withOffers(challengeFor(longUrl));
    const added = base64Json(offered).length - base64Json(challengeFor(longUrl)).length;
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThanOrEqual(offersHeaderBytes(MAX_RESOURCE_URL));

    const full = base64Json(offered).length;
    const kept = decodePaymentRequiredHeader(encodeChallenge(offered, full - 1));
    expect(Object.keys(kept.extensions ?? {})).toEqual(['offer-receipt']);
    const { signer } = await verifyOfferSignatureEIP712(extractOffersFromPaymentRequired(kept)[0] as EIP712SignedOffer);
    expect(signer).toBe(key.address);
    expect(decodePaymentRequiredHeader(encodeChallenge(offered, full)).extensions?.bazaar).toBeDefined();
  });

  it("a payer's echo of the offers keeps the echo check on its verbatim path, and a changed declaration is still caught", async () => {
    const declared = challengeFor(`${paidUrl}${ROUTE}`).extensions!;
    const offered = await evidence.withOffers(challengeFor(`${paidUrl}${ROUTE}`));
    const echo = (extensions: unknown) =>
      ({ x402Version: 2, accepted: offered.accepts[0], payload: {}, extensions }) as unknown as PaymentPayload;
    let slowPath = 0;
    const server = {
      validateExtensions: () => {
        slowPath += 1;
        return { valid: false, invalidReason: 'extension_echo_mismatch' };
      },
    } as unknown as x402ResourceServer;
    const copied = JSON.parse(JSON.stringify(offered.extensions)) as Record<string, unknown>;
    expect(checkExtensionEcho(server, declared, echo(copied), offered.accepts, offered.resource.url)).toEqual({
      valid: true,
    });
    expect(slowPath).toBe(0);
    const changed = { ...copied, bazaar: { info: { input: { type: 'http', method: 'POST' } } } };
    expect(checkExtensionEcho(server, declared, echo(changed), offered.accepts, offered.resource.url).valid).toBe(
      false,
    );
    expect(slowPath).toBe(1);
  });
});

describe('signed receipts', () => {
  it('every paid answer carries a receipt that @x402/extensions verifies and matches to the offer and the payer', async () => {
    const offer = decodeSignedOffers(extractOffersFromPaymentRequired(await challenge()))[0]!;
    const { res } = await paid();
    const receipt = extractReceiptFromResponse(res) as EIP712SignedReceipt;
    expect(receipt.format).toBe('eip712');
    const { signer, payload } = await verifyReceiptSignatureEIP712(receipt);
    expect(signer).toBe(keyDoc.x402.offerReceipt.signer);
    expect(payload).toMatchObject({ payer: PAYER, network: 'eip155:8453', transaction: TX });
    expect(verifyReceiptMatchesOffer(receipt, offer, [PAYER])).toBe(true);
    expect(verifyReceiptMatchesOffer(receipt, offer, ['0x0000000000000000000000000000000000000001'])).toBe(false);
    // The settlement the agent already read is still there beside the receipt.
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!)).toMatchObject({
      success: true,
      transaction: TX,
      payer: PAYER,
    });
  });

  it('a tampered receipt is refused: another payer, time or transaction, or a changed signature', async () => {
    const receipt = extractReceiptFromResponse((await paid()).res) as EIP712SignedReceipt;
    const signerOf = async (r: EIP712SignedReceipt) =>
      verifyReceiptSignatureEIP712(r).then(
        (v) => v.signer,
        () => 'unverifiable',
      );
    expect(await signerOf(receipt)).toBe(key.address);
    for (const payload of [
      { ...receipt.payload, payer: '0x0000000000000000000000000000000000000bad' },
      { ...receipt.payload, issuedAt: receipt.payload.issuedAt + 1 },
      { ...receipt.payload, transaction: `0x${'00'.repeat(32)}` },
      { ...receipt.payload, resourceUrl: `${receipt.payload.resourceUrl}/other` },
    ])
      expect(await signerOf({ ...receipt, payload })).not.toBe(key.address);
    const flipped = `${receipt.signature.slice(0, 10)}${receipt.signature[10] === 'a' ? 'b' : 'a'}${receipt.signature.slice(11)}`;
    expect(await signerOf({ ...receipt, signature: flipped })).not.toBe(key.address);
  });

  it('no receipt for a failed settlement', async () => {
    const failed: SettleResponse = { success: false, errorReason: 'x', transaction: '', network: 'eip155:8453' };
    expect(await evidence.withReceipt(failed, `${paidUrl}${ROUTE}`)).toBe(failed);
  });
});

/** The published Ed25519 key as WebCrypto and node keys. */
async function publishedAnswerKey() {
  const jwk = keyDoc.keys.find((k) => k.kid === keyDoc.x402.answerSignature.keyid)!;
  const cryptoKey = await webcrypto.subtle.importKey('jwk', jwk, { name: 'Ed25519' }, false, ['verify']);
  return { cryptoKey, nodeKey: createPublicKey({ key: jwk, format: 'jwk' }) };
}

const digestOf = (body: Uint8Array) => `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;

/** What the agent kept: status, headers and the URL it called, checked with Cloudflare's http-message-sig. */
async function cloudflareVerifies(answer: {
  status: number;
  headers: Record<string, string>;
  url: string;
  method?: string;
}): Promise<boolean> {
  const { cryptoKey } = await publishedAnswerKey();
  const message: ResponseDescriptor = {
    kind: 'response',
    status: answer.status,
    fields: Object.entries(answer.headers).map(([name, value]) => ({ name, value })),
    request: { kind: 'request', method: answer.method ?? 'GET', targetUri: answer.url, fields: [] },
  };
  try {
    await verifySignature(message, {
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
        maxAge: 600,
      },
      resolveVerifier: (candidate) => {
        if (candidate.parameters.keyid !== keyDoc.x402.answerSignature.keyid) throw new Error('unknown keyid');
        return sigWebcrypto.verifier(cryptoKey);
      },
    });
    return true;
  } catch {
    return false;
  }
}

/** The same, with the `http-message-signatures` package (another implementation). */
async function httpbisVerifies(answer: {
  status: number;
  headers: Record<string, string>;
  url: string;
  method?: string;
}): Promise<boolean> {
  const { nodeKey } = await publishedAnswerKey();
  try {
    const ok = await httpbis.verifyMessage(
      {
        keyLookup: async (params) =>
          params.keyid === keyDoc.x402.answerSignature.keyid
            ? {
                id: params.keyid,
                algs: ['ed25519'],
                verify: async (data, signature) => verifyEd25519(null, data, nodeKey, signature),
              }
            : null,
        requiredFields: ['@status', 'content-digest', 'payment-response'],
        requiredParams: ['created', 'keyid', 'alg'],
      },
      { status: answer.status, headers: answer.headers },
      { method: answer.method ?? 'GET', url: answer.url, headers: {} },
    );
    return ok === true;
  } catch {
    return false;
  }
}

const headersOf = (res: Response) => ({
  'content-digest': res.headers.get('content-digest')!,
  'payment-response': res.headers.get('payment-response')!,
  'signature-input': res.headers.get('signature-input')!,
  signature: res.headers.get('signature')!,
});

describe('signed answers', () => {
  it('a paid 200 carries Content-Digest of its exact body and an RFC 9421 signature two independent verifiers accept', async () => {
    const { res, url, body } = await paid();
    const headers = headersOf(res);
    expect(headers['content-digest']).toBe(digestOf(body));
    expect(headers['signature-input']).toMatch(
      /^x402-answer=\("@status" "content-digest" "payment-response" "@method";req "@target-uri";req\);created=\d+;keyid="[A-Za-z0-9_-]{43}";alg="ed25519"$/,
    );
    expect(await cloudflareVerifies({ status: res.status, headers, url })).toBe(true);
    expect(await httpbisVerifies({ status: res.status, headers, url })).toBe(true);
  });

  it('is refused after one byte of the body, the status, the payment response (receipt), the method or the URL changed', async () => {
    const { res, url, body } = await paid();
    const headers = headersOf(res);
    const both = async (a: Parameters<typeof cloudflareVerifies>[0]) => [
      await cloudflareVerifies(a),
      await httpbisVerifies(a),
    ];

    // One byte of the body: the digest no longer matches the body...
    const tampered = Buffer.from(body);
    tampered[5] = tampered[5]! ^ 0x01;
    expect(digestOf(tampered)).not.toBe(headers['content-digest']);
    // ...and a forger who recomputes the digest breaks the signature.
    expect(await both({ status: 200, headers: { ...headers, 'content-digest': digestOf(tampered) }, url })).toEqual([
      false,
      false,
    ]);
    expect(await both({ status: 203, headers, url })).toEqual([false, false]);

    // The receipt inside PAYMENT-RESPONSE: another payer, re-encoded.
    const settlement = decodePaymentResponseHeader(headers['payment-response']) as SettleResponse & {
      extensions: { 'offer-receipt': { info: { receipt: EIP712SignedReceipt } } };
    };
    settlement.extensions['offer-receipt'].info.receipt.payload.payer = '0x0000000000000000000000000000000000000bad';
    expect(
      await both({ status: 200, headers: { ...headers, 'payment-response': base64Json(settlement) }, url }),
    ).toEqual([false, false]);
    expect(await both({ status: 200, headers, url, method: 'POST' })).toEqual([false, false]);
    expect(await both({ status: 200, headers, url: url.replace('BTC-USD', 'ETH-USD') })).toEqual([false, false]);
    // Untouched, it still verifies (the checks above failed for the change, not the setup).
    expect(await both({ status: 200, headers, url })).toEqual([true, true]);
  });

  it('MCP: the same signature in the tool result _meta, over status 200, POST, the tool URL and the result text', async () => {
    const settled: SettleResponse = { success: true, payer: PAYER, transaction: TX, network: 'eip155:8453' };
    const toolResourceUrl = 'mcp://tool/spread-candles';
    const paymentResponse = base64Json(await evidence.withReceipt(settled, toolResourceUrl));
    const text = JSON.stringify({ candles: [] });
    const meta = { [ANSWER_META_KEY]: evidence.mcpAnswerMeta({ toolResourceUrl, text, paymentResponse })! };
    const fields = meta[ANSWER_META_KEY];
    expect(fields['content-digest']).toBe(digestOf(Buffer.from(text)));
    const answer = {
      status: 200,
      method: 'POST',
      url: toolResourceUrl,
      headers: {
        'content-digest': fields['content-digest'],
        'payment-response': fields['payment-response'],
        'signature-input': fields['signature-input'],
        signature: fields.signature,
      },
    };
    expect(await cloudflareVerifies(answer)).toBe(true);
    expect(await cloudflareVerifies({ ...answer, url: 'mcp://tool/other' })).toBe(false);
    const receipt = (decodePaymentResponseHeader(fields['payment-response']).extensions as Record<string, unknown>)[
      'offer-receipt'
    ] as { info: { receipt: EIP712SignedReceipt } };
    expect((await verifyReceiptSignatureEIP712(receipt.info.receipt)).payload.resourceUrl).toBe(toolResourceUrl);
  });

  it('does not sign a target or header with a line break (the signature base would be ambiguous), nor throws', () => {
    const answer = { status: 200, method: 'GET', body: '{}', paymentResponse: 'e30=' };
    expect(evidence.answerHeaders({ ...answer, targetUri: 'https://x.example/a\n"@status": 500' })).toBeUndefined();
    expect(
      evidence.answerHeaders({ ...answer, targetUri: 'https://x.example/a', paymentResponse: 'e30=\r\nx: y' }),
    ).toBeUndefined();
    expect(evidence.answerHeaders({ ...answer, targetUri: 'https://x.example/a' })).toBeDefined();
  });

  it('a settled answer never fails for its evidence: a signer that fails leaves the receipt and offers out, logged', async () => {
    const lines: string[] = [];
    const failing = new PaidCallEvidence({
      key: { ...key, signTypedData: () => Promise.reject(new Error('signer down')) },
      offerValiditySeconds: 3600,
      includeTransaction: true,
      logger: createLogger('info', {}, { format: 'json', destination: { write: (line: string) => lines.push(line) } }),
    });
    const settled: SettleResponse = { success: true, payer: PAYER, transaction: TX, network: 'eip155:8453' };
    expect(await failing.withReceipt(settled, `${paidUrl}${ROUTE}`)).toBe(settled);
    const required = challengeFor(`${paidUrl}${ROUTE}`);
    expect(await failing.withOffers(required)).toBe(required);
    expect(lines.join('')).toContain('x402: receipt not signed');
    expect(lines.join('')).toContain('x402: offers not signed');
    expect(lines).toHaveLength(2);
  });
});
