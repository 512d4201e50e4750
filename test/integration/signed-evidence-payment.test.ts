/**
 * Signed offers, receipts and answers around a real paid call: the real x402
 * gate (api/paid-call/payment-gate.ts) over the dev chain (hardhat, test USDC,
 * in-process facilitator), paid by the real @x402/fetch client. A thin Koa
 * middleware in front of the gate applies the building blocks where the
 * paid-call pipeline will call them (the 402 challenge -> withOffers; the
 * settled 200 -> withReceipt, then the answer signature), so this shows,
 * before the pipeline calls them itself, that:
 *
 *   - a real x402 client pays a challenge that carries signed offers (it
 *     copies them into its payment's extensions, and the gate's echo check
 *     accepts that), and the payment settles on chain;
 *   - the receipt and the answer signature of that settled call verify with
 *     @x402/extensions and Cloudflare's http-message-sig.
 */
import { createHash, webcrypto } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { Router } from '@koa/router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import {
  decodeSignedOffers,
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  verifyOfferSignatureEIP712,
  verifyReceiptMatchesOffer,
  verifyReceiptSignatureEIP712,
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
} from '@x402/extensions/offer-receipt';
import { component, verifySignature, webcrypto as sigWebcrypto } from 'http-message-sig';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { listen, type HttpServer } from '../../api/http-server.js';
import { problemErrors } from '../../api/middleware/problem-errors.js';
import { requestContext } from '../../api/middleware/request-context.js';
import { encodeChallenge } from '../../api/payment/challenge.js';
import { readDevChainInfo } from '../../api/dev-chain/dev-chain.js';
import { base64Json } from '../../api/payment/payload.js';
import { createPaymentGate, type PaidRoute } from '../../api/paid-call/payment-gate.js';
import { PaidCallEvidence } from '../../api/payment/receipts/paid-call-evidence.js';
import { serverSigningKey } from '../../api/payment/receipts/signing-key.js';
import { MemoryReplayGuard } from '../../api/payment/replay-guard.js';
import { startSettlement, type PaymentSettlement } from '../../api/payment/settlement.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { payingFetch } from '../helpers/x402-client.js';

const ROUTE: PaidRoute = {
  method: 'GET',
  path: '/api/v1/test/evidence',
  description: 'A paid route whose answers are signed',
  priceAtomic: '15000',
  mimeType: 'application/json',
  inputSchemaJson: { type: 'object', properties: { pair: { type: 'string' } }, required: ['pair'] },
  inputExample: { pair: 'ETH/USD' },
};

const logger = testLogger();
const key = serverSigningKey(generatePrivateKey());
const evidence = new PaidCallEvidence({ key, offerValiditySeconds: 3600, includeTransaction: true });
let dataDir: string;
let settlement: PaymentSettlement;
let http: HttpServer;
let payer: PrivateKeyAccount;
const guard = new MemoryReplayGuard();

/** What the pipeline will do at its two places, done here from the outside of the gate. */
const evidenceAroundGate: Koa.Middleware = async (ctx, next) => {
  await next();
  const challenge = ctx.response.get('PAYMENT-REQUIRED');
  if (ctx.status === 402 && challenge) {
    const offered = await evidence.withOffers(decodePaymentRequiredHeader(challenge));
    ctx.set('PAYMENT-REQUIRED', encodeChallenge(offered, 3500));
    return;
  }
  const settled = ctx.response.get('PAYMENT-RESPONSE');
  if (ctx.status === 200 && settled) {
    const resourceUrl = `${ctx.protocol}://${ctx.host}${ctx.originalUrl}`;
    const paymentResponse = base64Json(await evidence.withReceipt(decodePaymentResponseHeader(settled), resourceUrl));
    const body = Buffer.from(JSON.stringify(ctx.body));
    ctx.body = body; // the exact bytes signed are the bytes sent (Content-Type stays JSON)
    ctx.set('PAYMENT-RESPONSE', paymentResponse);
    const signed = evidence.answerHeaders({
      status: 200,
      method: ctx.method,
      targetUri: resourceUrl,
      body,
      paymentResponse,
    });
    if (signed) ctx.set(signed);
  }
};

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'signed-evidence-'));
  settlement = await startSettlement(testConfig({ SETTLEMENT: 'devchain', DATA_DIR: dataDir }), { logger });
  payer = privateKeyToAccount((await readDevChainInfo(dataDir)).payer_key);
  const gate = createPaymentGate({ ...settlement, facilitator: settlement.facilitator, replayGuard: guard, logger });
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  router.get(
    ROUTE.path,
    async (ctx, next) => {
      ctx.state.paidRoute = ROUTE;
      await next();
    },
    evidenceAroundGate,
    gate,
    (ctx) => {
      ctx.body = { pair: ctx.query.pair, spread_bps: 4.2, payer: ctx.state.payment?.payer };
    },
  );
  app.use(requestContext(logger));
  app.use(problemErrors());
  app.use(router.routes());
  http = await listen(app, { HTTP_HOST: '127.0.0.1', HTTP_PORT: 0 });
  await gate.ready();
}, 180_000);

afterAll(async () => {
  await http?.close();
  await guard.close();
  await settlement?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a real paid call with signed offers, receipt and answer', () => {
  it('the x402 client pays a challenge carrying offers; the settled answer carries a verifiable receipt and signature', async () => {
    const url = `${http.url}${ROUTE.path}?pair=ETH%2FUSD`;
    const unpaid = await fetch(url);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const offers = extractOffersFromPaymentRequired(required);
    expect(offers).toHaveLength(1);
    expect((await verifyOfferSignatureEIP712(offers[0] as EIP712SignedOffer)).signer).toBe(key.address);

    const before = await settlement.devChain!.balanceOf(payer.address);
    const { fetch: pay, sent } = payingFetch(payer, { network: settlement.network, asset: settlement.asset });
    const res = await pay(url);
    expect(res.status).toBe(200);
    const body = new Uint8Array(await res.arrayBuffer());
    // The client echoed the offers in its payment, and the gate took it.
    const payment = JSON.parse(Buffer.from(sent.at(-1)!, 'base64').toString('utf8')) as {
      extensions?: Record<string, unknown>;
    };
    expect(payment.extensions?.['offer-receipt']).toBeDefined();
    expect(await settlement.devChain!.balanceOf(payer.address)).toBe(before - 15000n);

    const receipt = extractReceiptFromResponse(res) as EIP712SignedReceipt;
    const verified = await verifyReceiptSignatureEIP712(receipt);
    expect(verified.signer).toBe(key.address);
    expect(verified.payload.payer.toLowerCase()).toBe(payer.address.toLowerCase());
    expect(verified.payload.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(verifyReceiptMatchesOffer(receipt, decodeSignedOffers(offers)[0]!, [payer.address])).toBe(true);

    expect(res.headers.get('content-digest')).toBe(`sha-256=:${createHash('sha256').update(body).digest('base64')}:`);
    const publicKey = await webcrypto.subtle.importKey('jwk', { ...key.answerPublicJwk }, { name: 'Ed25519' }, false, [
      'verify',
    ]);
    const fields = ['content-digest', 'payment-response', 'signature-input', 'signature'].map((name) => ({
      name,
      value: res.headers.get(name)!,
    }));
    const verify = (status: number, targetUri: string) =>
      verifySignature(
        { kind: 'response', status, fields, request: { kind: 'request', method: 'GET', targetUri, fields: [] } },
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
    await expect(verify(200, url)).resolves.toBeDefined();
    await expect(verify(200, url.replace('ETH', 'BTC'))).rejects.toThrow();
  }, 120_000);
});
