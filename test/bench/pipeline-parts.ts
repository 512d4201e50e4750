/**
 * What the paid-call pipeline's added steps (api/paid-call/payment-step.ts) cost the gate per request, part by part,
 * on the real payment core of a running api role (its stores, its signing key): printed by `npm run bench:api`
 * after the gate rows, or alone with `npm run bench:api -- --pipeline-parts` (no ClickHouse data needed).
 *
 *   retries, no identifier   the payload read + `retries.lookup` of a payment without `payment-identifier`
 *                            (every paid request pays this)
 *   retries, first call      `lookup` of a new identifier (claim) + `keep` of a 2 KB answer (memory store)
 *   retries, replay          `lookup` of a re-signed retry of a kept identifier: the payer proof (EIP-3009
 *                            signature recovered natively) and the stored answer
 *   siwx re-read             `access.check` of a fresh proof: parse, validate, EIP-191 recovery, entitlement,
 *                            nonce (what a re-read costs instead of verify + settle)
 *   offers                   `evidence.withOffers` of a challenge whose offer is cached (every 402)
 *   receipt                  `evidence.withReceipt` of a settlement (every settled answer)
 *   answer signature         `evidence.answerHeaders` over a 2 KB body (Content-Digest + RFC 9421, every paid 200)
 *
 * CPU per operation is process CPU time (user + system) over the loop only, inputs (signatures, proofs) made
 * beforehand, so other work on the shared cores does not count; the load average is printed beside it.
 */
import { loadavg } from 'node:os';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { createSIWxClientHook } from '@x402/extensions/sign-in-with-x';
import type { PrivateKeyAccount } from 'viem/accounts';
import { readPaymentHeader } from '../../api/payment/payload.js';
import type { PaidCall, PaymentCore } from '../../api/payment/payment-core.js';
import { base64Json } from '../../api/payment/payload.js';
import type { PricedSku } from '../../api/sku/sku.js';

export interface PipelinePart {
  part: string;
  n: number;
  cpuUs: number;
}

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000; // ms
};

async function timed(part: string, n: number, op: (i: number) => Promise<unknown> | unknown): Promise<PipelinePart> {
  const t0 = cpuNow();
  for (let i = 0; i < n; i++) await op(i);
  return { part, n, cpuUs: ((cpuNow() - t0) * 1000) / n };
}

/**
 * Measures each part on `core` for `sku` (a telemetry SKU: its closed slice `closedInput` qualifies for
 * sign-in-with-x), paid by `payer` (funded or not: nothing settles here).
 */
export async function measurePipelineParts(options: {
  core: PaymentCore;
  call: PaidCall;
  sku: PricedSku;
  closedInput: Record<string, unknown>;
  origin: string;
  payer: PrivateKeyAccount;
  n?: number;
}): Promise<PipelinePart[]> {
  const { core, call, sku, closedInput, origin, payer } = options;
  const n = options.n ?? 300;
  const { retries, access, evidence } = core;
  if (!retries || !access || !evidence) throw new Error('pipeline parts: the core has no retries, access or evidence');
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(payer));
  // A copy: x402's appendPaymentIdentifierToExtensions sets `info.id` in place, and the core's declaration is shared.
  const challenge: PaymentRequired = structuredClone(await core.paymentRequired(call, 'Payment required'));
  client.setSpendControls({ allowedAssets: true });
  const sign = async (id?: string): Promise<string> => {
    const payload: PaymentPayload = await client.createPaymentPayload(challenge);
    if (id) payload.extensions = appendPaymentIdentifierToExtensions(structuredClone(payload.extensions ?? {}), id);
    return base64Json(payload);
  };
  const body = Buffer.from(JSON.stringify({ data: 'x'.repeat(2000) }));
  const subject = { sku, input: closedInput };
  const request = (header: string) => {
    const read = readPaymentHeader(header);
    if (!read.ok) throw new Error('pipeline parts: unreadable payment');
    return { payload: read.payload, payer: read.facts.payer, method: 'GET', route: sku.path, input: closedInput };
  };
  const parts: PipelinePart[] = [];

  const plain = await Promise.all(Array.from({ length: n }, () => sign()));
  parts.push(await timed('retries, no identifier (read + lookup)', n, (i) => retries.lookup(request(plain[i]!))));

  const run = Date.now().toString(36);
  const firsts = await Promise.all(Array.from({ length: n }, (_, i) => sign(`bench_${run}_${i}_first_call`)));
  const network = challenge.accepts[0]!.network;
  const settlement = { success: true, transaction: `0x${'1'.repeat(64)}`, network, payer: payer.address };
  parts.push(
    await timed('retries, first call (claim + keep 2 KB)', n, async (i) => {
      const decision = await retries.lookup(request(firsts[i]!));
      if (decision.kind !== 'first') throw new Error(`pipeline parts: ${decision.kind}`);
      await decision.call.keep({ status: 200, contentType: 'application/json', body, settlement }, 'sig');
    }),
  );
  const resigned = await Promise.all(Array.from({ length: n }, (_, i) => sign(`bench_${run}_${i}_first_call`)));
  parts.push(
    await timed('retries, replay of a re-signed retry', n, async (i) => {
      const decision = await retries.lookup(request(resigned[i]!));
      if (decision.kind !== 'replay') throw new Error(`pipeline parts: ${decision.kind}`);
    }),
  );

  await access.record({ payer: payer.address, subject });
  const hook = createSIWxClientHook(payer);
  const proofs = await Promise.all(
    Array.from({ length: n }, async () => {
      const declared = await access.challenge({ origin, resourceUrl: `${origin}${sku.path}`, subject });
      const hooked = await hook({
        paymentRequired: { ...challenge, extensions: declared } as PaymentRequired,
        requestUrl: `${origin}${sku.path}`,
      } as Parameters<typeof hook>[0]);
      return hooked!.headers['sign-in-with-x']!;
    }),
  );
  parts.push(
    await timed('siwx re-read (check a proof)', n, async (i) => {
      const decision = await access.check({ proof: { header: proofs[i]! }, origin, resourcePath: sku.path, subject });
      if (decision.kind !== 'granted') throw new Error(`pipeline parts: siwx ${JSON.stringify(decision)}`);
    }),
  );

  await evidence.withOffers(challenge); // signs once; every later 402 reads the cache
  parts.push(await timed('offers (cached, per 402)', n * 10, () => evidence.withOffers(challenge)));
  const settled: SettleResponse = {
    success: true,
    transaction: `0x${'2'.repeat(64)}`,
    network,
    payer: payer.address,
  };
  parts.push(
    await timed('receipt (per settled answer)', n * 10, () => evidence.withReceipt(settled, call.resourceUrl)),
  );
  const paymentResponse = base64Json(settled);
  parts.push(
    await timed('answer signature, 2 KB body (per paid 200)', n * 10, () =>
      evidence.answerHeaders({
        status: 200,
        method: 'GET',
        targetUri: `${call.resourceUrl}?pair=ETH%2FUSD`,
        body,
        paymentResponse,
      }),
    ),
  );
  return parts;
}

export function printPipelineParts(parts: readonly PipelinePart[]): void {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  console.log(
    `\nThe paid-call pipeline's added steps, CPU per operation on the api role's own core (load average ${load}):`,
  );
  console.log('| part | operations | CPU µs/op |');
  console.log('|---|---|---|');
  for (const p of parts) console.log(`| ${p.part} | ${p.n} | ${p.cpuUs.toFixed(1)} |`);
  const perPaid = ['retries, no identifier', 'receipt', 'answer signature'].map(
    (name) => parts.find((p) => p.part.startsWith(name))?.cpuUs ?? 0,
  );
  const total = perPaid.reduce((a, b) => a + b, 0);
  console.log(
    `Added per paid request (identifier lookup + receipt + answer signature): ${total.toFixed(1)} µs (target <= 300 µs: ${total <= 300 ? 'met' : 'NOT met'}).`,
  );
}

export interface DoorRow {
  label: string;
  n: number;
  concurrency: number;
  rps: number;
  p50: number;
  p99: number;
  non200: number;
}

/**
 * The same closed slice through the HTTP door, closed loop at `concurrency`: paid (each request its own signature
 * and payment identifier, verified and settled on the dev chain), then each of those retried with the same
 * identifier and a new signature (the stored answer, nothing settled), then re-read with a sign-in-with-x proof
 * (nothing paid). Request inputs are made beforehand.
 */
export async function measureDoorRows(options: {
  core: PaymentCore;
  call: PaidCall;
  sku: PricedSku;
  closedInput: Record<string, unknown>;
  url: string;
  payer: PrivateKeyAccount;
  n?: number;
  concurrency?: number;
}): Promise<DoorRow[]> {
  const { core, call, sku, closedInput, url, payer } = options;
  const n = options.n ?? 200;
  const concurrency = options.concurrency ?? 8;
  const access = core.access!;
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(payer));
  client.setSpendControls({ allowedAssets: true });
  const target = `${url}${sku.path}?${new URLSearchParams(closedInput as Record<string, string>)}`;
  const unpaid = await fetch(target);
  const header = unpaid.headers.get('payment-required');
  if (unpaid.status !== 402 || !header)
    throw new Error(`door rows: the closed slice answered ${unpaid.status}, not a challenge`);
  const challenge = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentRequired;
  const run = Date.now().toString(36);
  const sign = async (i: number) => {
    const payload: PaymentPayload = await client.createPaymentPayload(challenge);
    payload.extensions = appendPaymentIdentifierToExtensions(
      structuredClone(payload.extensions ?? {}),
      `door_${run}_${i}_bench`,
    );
    return base64Json(payload);
  };
  const loop = async (label: string, headers: Record<string, string>[]): Promise<DoorRow> => {
    const latencies: number[] = [];
    let non200 = 0;
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < headers.length) {
          const h = headers[next++]!;
          const s = performance.now();
          const res = await fetch(target, { headers: h });
          const text = Buffer.from(await res.arrayBuffer()).toString('utf8');
          if (res.status !== 200 && non200 === 0) console.log(`  ${label}: ${text.slice(0, 300)}`);
          latencies.push(performance.now() - s);
          if (res.status !== 200 && non200++ === 0)
            console.log(`  ${label}: first non-200: ${res.status} ${res.headers.get('content-type')}`);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return {
      label,
      n: headers.length,
      concurrency,
      rps: headers.length / seconds,
      p50: at(0.5),
      p99: at(0.99),
      non200,
    };
  };
  const rows: DoorRow[] = [];
  const paid = await Promise.all(Array.from({ length: n }, (_, i) => sign(i)));
  rows.push(
    await loop(
      'paid (verify + settle on the dev chain)',
      paid.map((p) => ({ 'payment-signature': p })),
    ),
  );
  const retried = await Promise.all(Array.from({ length: n }, (_, i) => sign(i)));
  rows.push(
    await loop(
      'retry, same identifier, new signature',
      retried.map((p) => ({ 'payment-signature': p })),
    ),
  );
  const hook = createSIWxClientHook(payer);
  const origin = new URL(url).origin;
  const proofs = await Promise.all(
    Array.from({ length: n }, async () => {
      const declared = await access.challenge({
        origin,
        resourceUrl: `${origin}${sku.path}`,
        subject: { sku, input: closedInput },
      });
      const hooked = await hook({
        paymentRequired: { ...challenge, extensions: declared } as PaymentRequired,
        requestUrl: `${origin}${sku.path}`,
      } as Parameters<typeof hook>[0]);
      return { 'sign-in-with-x': hooked!.headers['sign-in-with-x']! };
    }),
  );
  rows.push(await loop('sign-in-with-x re-read (nothing paid)', proofs));
  void call;
  return rows;
}

export function printDoorRows(rows: readonly DoorRow[]): void {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  console.log(`\nOne closed slice through the HTTP door, closed loop (load average ${load}):`);
  console.log('| request | n | connections | req/s | p50 ms | p99 ms | non-200 |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.label} | ${r.n} | ${r.concurrency} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.non200} |`,
    );
}
