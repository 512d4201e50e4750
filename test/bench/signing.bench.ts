/**
 * `npm run bench:signing`: what signed offers, signed receipts and signed
 * answers (api/payment/receipts/) add to the gate's CPU per paid request,
 * part by part, against the gate's budget of 0.3 ms per paid request; each
 * part next to the off-the-shelf way of doing it, measured in the same run:
 *
 *   offer lookup      PaidCallEvidence.withOffers on a route whose offer is
 *                     cached (every 402 after the first per change of terms)
 *                     | baseline: signing the offer on every 402 (what
 *                     @x402/extensions' createOfferReceiptExtension does)
 *   receipt           PaidCallEvidence.withReceipt: createReceiptEIP712 over the
 *                     hand-encoded digest, native secp256k1
 *                     | baseline: createReceiptEIP712 with viem's signTypedData
 *   PAYMENT-RESPONSE  base64 of the settlement with its receipt | without
 *   content digest    sha-256 of the body, BENCH_SIGNING_BODY_BYTES (2,048)
 *   answer signature  the RFC 9421 base + Ed25519 (answer-signature.ts)
 *                     | baseline: http-message-signatures' signMessage
 *   offers echo       the gate's echo check of a payment whose payer copied the
 *                     challenge's extensions, offers included (x402 clients
 *                     do): the verbatim path, offers left out
 *                     (extension-echo.ts) | x402's validateExtensions
 *
 * CPU per operation is process CPU time (user + system) over
 * BENCH_SIGNING_N (20,000) operations after a warm-up, so other work on the
 * shared cores does not count; the load average is printed beside it.
 */
import { loadavg } from 'node:os';
import { generateKeyPairSync, sign as ed25519Sign } from 'node:crypto';
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import { createOfferEIP712, createReceiptEIP712 } from '@x402/extensions/offer-receipt';
import { httpbis } from 'http-message-signatures';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { base64Json } from '../../api/payment/payload.js';
import { checkExtensionEcho } from '../../api/payment/extension-echo.js';
import { PaidCallEvidence } from '../../api/payment/receipts/paid-call-evidence.js';
import { contentDigest } from '../../api/payment/receipts/answer-signature.js';
import { serverSigningKey } from '../../api/payment/receipts/signing-key.js';

const N = Number(process.env.BENCH_SIGNING_N ?? 20_000);
const BODY_BYTES = Number(process.env.BENCH_SIGNING_BODY_BYTES ?? 2048);
const BUDGET_MS = 0.3;

/** CPU ms per call of `op`, over `n` calls after a warm-up of n / 10. */
async function cpuPerOp(op: () => unknown, n = N): Promise<number> {
  for (let i = 0; i < Math.max(50, n / 10); i++) await op();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await op();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / n;
}

const hex = generatePrivateKey();
const key = serverSigningKey(hex);
const evidence = new PaidCallEvidence({ key, offerValiditySeconds: 3600, includeTransaction: true });
const account = privateKeyToAccount(hex);
const viemSignTypedData = (args: Parameters<typeof account.signTypedData>[0]) => account.signTypedData(args);

const resourceUrl = 'https://gateway.example.com/api/v1/crypto/spread-candles?pair=BTC-USD&from=2026-01-01';
const accept = {
  scheme: 'exact',
  network: 'eip155:8453',
  amount: '15000',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  maxTimeoutSeconds: 300,
  extra: { name: 'USD Coin', version: '2' },
} as const;
const bazaar = {
  bazaar: {
    info: { input: { type: 'http', method: 'GET', queryParams: { pair: 'BTC-USD' } }, output: { type: 'json' } },
    schema: { type: 'object' },
  },
};
const challenge: PaymentRequired = {
  x402Version: 2,
  error: 'Payment required',
  resource: { url: resourceUrl, description: 'spread candles', mimeType: 'application/json' },
  accepts: [{ ...accept, network: 'eip155:8453' }],
  extensions: bazaar,
};
const settled: SettleResponse = {
  success: true,
  payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
  transaction: `0x${'5a'.repeat(32)}`,
  network: 'eip155:8453',
};
const body = Buffer.alloc(BODY_BYTES, '{"t":1,"spread_bps":4.2},');
const paymentResponse = base64Json(await evidence.withReceipt(settled, resourceUrl));
const { privateKey: libraryKey } = generateKeyPairSync('ed25519');

interface Row {
  part: string;
  ms: number;
  baseline?: { name: string; ms: number };
  /** Counted in the per-request sum (a baseline-only row is not). */
  perRequest: boolean;
}
const rows: Row[] = [];
const load0 = loadavg()[0]!;

await evidence.withOffers(challenge); // signed once
rows.push({
  part: 'offer lookup (cached signed offer, every 402)',
  ms: await cpuPerOp(() => evidence.withOffers(challenge)),
  baseline: {
    name: 'sign the offer per 402',
    ms: await cpuPerOp(
      () =>
        createOfferEIP712(resourceUrl, { acceptIndex: 0, ...accept, offerValiditySeconds: 3600 }, key.signTypedData),
      N / 4,
    ),
  },
  perRequest: false, // on a 402, not on the paid request
});
rows.push({
  part: 'receipt (EIP-712, native secp256k1)',
  ms: await cpuPerOp(() => evidence.withReceipt(settled, resourceUrl)),
  baseline: {
    name: "viem's signTypedData",
    ms: await cpuPerOp(
      () =>
        createReceiptEIP712(
          { resourceUrl, payer: settled.payer!, network: settled.network, transaction: settled.transaction },
          viemSignTypedData as never,
        ),
      Math.max(200, N / 50),
    ),
  },
  perRequest: true,
});
const receipted = await evidence.withReceipt(settled, resourceUrl);
rows.push({
  part: 'PAYMENT-RESPONSE base64 with the receipt',
  ms: await cpuPerOp(() => base64Json(receipted)),
  baseline: { name: 'without the receipt', ms: await cpuPerOp(() => base64Json(settled)) },
  perRequest: true,
});
rows.push({
  part: `content digest (sha-256, ${BODY_BYTES} B body)`,
  ms: await cpuPerOp(() => contentDigest(body)),
  perRequest: true,
});
const signing = await cpuPerOp(() =>
  evidence.answerHeaders({ status: 200, method: 'GET', targetUri: resourceUrl, body, paymentResponse }),
);
rows.push({
  part: 'answer signature (RFC 9421 base + Ed25519)',
  ms: signing - rows[rows.length - 1]!.ms,
  baseline: {
    name: 'http-message-signatures signMessage',
    ms: await cpuPerOp(() =>
      httpbis.signMessage(
        {
          key: {
            id: key.answerKeyId,
            alg: 'ed25519',
            sign: async (data: Buffer) => ed25519Sign(null, data, libraryKey),
          },
          fields: ['@status', 'content-digest', 'payment-response', '@method;req', '@target-uri;req'],
          params: ['created', 'keyid', 'alg'],
        },
        {
          status: 200,
          headers: { 'content-digest': contentDigest(body), 'payment-response': paymentResponse },
        },
        { method: 'GET', url: resourceUrl, headers: {} },
      ),
    ),
  },
  perRequest: true,
});

// The echo check of a paid request whose payer copied the challenge's extensions (offers included).
const resourceServer = new x402ResourceServer({} as FacilitatorClient);
const offered = await evidence.withOffers(challenge);
const payload = {
  x402Version: 2,
  resource: challenge.resource,
  accepted: challenge.accepts[0],
  payload: {},
  extensions: JSON.parse(JSON.stringify(offered.extensions)) as unknown, // as the gate reads it: parsed JSON
} as unknown as PaymentPayload;
const echoed = await cpuPerOp(() =>
  checkExtensionEcho(resourceServer, bazaar, payload, challenge.accepts, resourceUrl),
);
const slowPath = await cpuPerOp(() =>
  resourceServer.validateExtensions(
    { x402Version: 2, resource: challenge.resource, accepts: challenge.accepts, extensions: bazaar },
    payload,
  ),
);
rows.push({
  part: 'echo check of a payment that copied the offers (verbatim path, offers left out)',
  ms: echoed,
  baseline: { name: "x402's validateExtensions (the path it would take)", ms: slowPath },
  perRequest: true,
});

const total = rows.filter((r) => r.perRequest).reduce((sum, r) => sum + r.ms, 0);
const f = (ms: number) => (ms * 1000).toFixed(1);
console.log(
  `\n## bench:signing (${new Date().toISOString()}; ${N} operations per row, process CPU; load average ${load0.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)})`,
);
console.log(
  '\n| part | CPU µs / op | baseline (same run) | baseline µs / op | ours / baseline | on each paid request |',
);
console.log('|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.part} | ${f(r.ms)} | ${r.baseline?.name ?? ''} | ${r.baseline ? f(r.baseline.ms) : ''} | ${r.baseline ? (r.ms / r.baseline.ms).toFixed(2) : ''} | ${r.perRequest ? 'yes' : 'no (402 only)'} |`,
  );
console.log(
  `\nAdded to a paid request: ${f(total)} µs = ${((100 * total) / BUDGET_MS).toFixed(0)} % of the gate's ${BUDGET_MS} ms budget per paid request ` +
    '(the gate\'s own CPU without them is bench:api\'s "Gate CPU per paid request"; both together must stay <= 0.3 ms).',
);
