/**
 * Settlement under real use, on the dev chain (hardhat@2, EIP-3009 test USDC,
 * Multicall3) behind the real gate (startPayments: core, replay guard, the
 * in-process facilitator with its settlement queue), paid over loopback HTTP
 * by payments signed from the spec (not the bundled client). Balances are
 * read on chain.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { createWalletClient, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startPayments, type Payments } from '../../api/payment/payments.js';
import { HealthRegistry } from '../../core/health.js';
import { eventually, testConfig, testLogger } from '../helpers/config.js';
import { GATE_APP_PRICE, startGateApp, type GateApp } from '../helpers/gate-app.js';
import { gateOverCore } from '../../api/paid-call/payment-gate.js';
import { signedPayment } from '../helpers/x402-client.js';

const logger = testLogger();
const PRICE = BigInt(GATE_APP_PRICE);
const SETTLE_TIMEOUT_MS = 5000;

let dataDir: string;
let payments: Payments;
let health: HealthRegistry;
let app: GateApp;
let payer: PrivateKeyAccount;
let required: PaymentRequired;

const dc = () => payments.settlement.devChain!;
const routeA = () => `${app.url}/api/v1/test/a`;
const pay = (header: string, url = routeA()) => fetch(url, { headers: { 'PAYMENT-SIGNATURE': header } });

async function fundedPayer(atomic: bigint): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await dc().mint(account.address, atomic);
  return account;
}

async function settlementComponent(): Promise<Record<string, unknown>> {
  return (await health.check()).components.settlement as Record<string, unknown>;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'payment-settlement-'));
  health = new HealthRegistry({ version: 'test', role: 'api' }, 5000);
  payments = await startPayments(
    testConfig({
      SETTLEMENT: 'devchain',
      DATA_DIR: dataDir,
      PAYMENT_REPLAY_STORE: 'memory',
      PAYMENT_SETTLE_TIMEOUT_MS: String(SETTLE_TIMEOUT_MS),
      PAYMENT_HEAD_STALE_MS: '6000',
    }),
    { logger, health },
  );
  await payments.core.ready();
  app = await startGateApp(gateOverCore(payments.core), logger, 20);
  payer = privateKeyToAccount(dc().payerKey);
  const res = await fetch(routeA());
  required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
});

afterAll(async () => {
  await app?.http.close();
  await payments?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('settlement that never collides', () => {
  it('settles 50 concurrent payments from one payer: every one 200 with its transaction, balances exact, fewer transactions than payments', async () => {
    const before = { payer: await dc().balanceOf(payer.address), payTo: await dc().balanceOf(dc().payTo) };
    const stats0 = { ...payments.settlement.local!.queue.stats };
    const headers = await Promise.all(Array.from({ length: 50 }, () => signedPayment(payer, required)));
    const responses = await Promise.all(headers.map((h) => pay(h)));
    const bodies = await Promise.all(
      responses.map(async (r) => ({
        status: r.status,
        body: await r.text(),
        settled: r.headers.get('payment-response'),
      })),
    );
    for (const b of bodies) expect(b.status, b.body).toBe(200);
    const transactions = new Set(bodies.map((b) => decodePaymentResponseHeader(b.settled!).transaction));
    for (const tx of transactions) {
      const receipt = await dc().node.publicClient.getTransactionReceipt({ hash: tx as `0x${string}` });
      expect(receipt.status).toBe('success');
    }
    expect(await dc().balanceOf(payer.address)).toBe(before.payer - 50n * PRICE);
    expect(await dc().balanceOf(dc().payTo)).toBe(before.payTo + 50n * PRICE);
    // Answered on broadcast: the confirmations follow behind.
    await payments.settlement.local!.queue.drained();
    const stats = payments.settlement.local!.queue.stats;
    expect(stats.settled - stats0.settled).toBe(50);
    expect(transactions.size).toBe(stats.transactions - stats0.transactions);
    expect(transactions.size).toBeLessThan(50); // batched through Multicall3
    expect(stats.batches).toBeGreaterThan(stats0.batches);
  });

  it('settles 20 payers paying at once (2 payments each)', async () => {
    const payers: PrivateKeyAccount[] = [];
    for (let i = 0; i < 20; i++) payers.push(await fundedPayer(5n * PRICE)); // the token owner mints one at a time
    const headers = await Promise.all(payers.flatMap((p) => [signedPayment(p, required), signedPayment(p, required)]));
    const responses = await Promise.all(headers.map((h) => pay(h)));
    const failed = await Promise.all(responses.filter((r) => r.status !== 200).map((r) => r.text()));
    expect(failed).toEqual([]);
    for (const p of payers) expect(await dc().balanceOf(p.address)).toBe(3n * PRICE);
  });

  it('serves a payer only what its balance covers when its payments arrive together (the rest: 402, never settled)', async () => {
    const poor = await fundedPayer(3n * PRICE);
    const runs = app.runs.a;
    const headers = await Promise.all(Array.from({ length: 5 }, () => signedPayment(poor, required)));
    const responses = await Promise.all(headers.map((h) => pay(h)));
    const statuses = responses.map((r) => r.status).sort();
    const refused = await Promise.all(
      responses.filter((x) => x.status === 402).map(async (r) => (await r.json()) as Record<string, unknown>),
    );
    expect(statuses, JSON.stringify(refused)).toEqual([200, 200, 200, 402, 402]);
    for (const body of refused)
      expect(body).toMatchObject({ code: 'payment_invalid', reason: 'invalid_exact_evm_insufficient_balance' });
    expect(app.runs.a - runs).toBe(3);
    expect(await dc().balanceOf(poor.address)).toBe(0n);
  });

  it('recovers when the settler key sent a transaction outside the gateway (stale nonce): the settlement is retried and succeeds', async () => {
    const settlerWallet = createWalletClient({
      account: privateKeyToAccount(dc().settlerKey),
      chain: dc().node.chain,
      transport: http(dc().rpcUrl),
    });
    await pay(await signedPayment(payer, required)); // the lease now knows the next nonce
    const hash = await settlerWallet.sendTransaction({ to: settlerWallet.account.address, value: 0n });
    await dc().node.publicClient.waitForTransactionReceipt({ hash });
    const res = await pay(await signedPayment(payer, required));
    expect(res.status).toBe(200);
    const lastError = payments.settlement.local!.queue.stats.lastError;
    expect(lastError?.message, JSON.stringify(lastError)).toMatch(/nonce/i);
  });

  it(
    'retries a failed settlement while the authorization is valid (settler briefly without gas), and withholds the result once it cannot settle',
    { timeout: 240_000 },
    async () => {
      const settler = payments.settlement.settler as Address;
      const gas = await dc().node.publicClient.getBalance({ address: settler });
      await dc().node.testClient.setBalance({ address: settler, value: 0n });
      const pending = pay(await signedPayment(payer, required));
      await new Promise((r) => setTimeout(r, 800));
      await dc().node.testClient.setBalance({ address: settler, value: gas });
      const res = await pending;
      expect(res.status).toBe(200);

      await dc().node.testClient.setBalance({ address: settler, value: 0n });
      const before = await dc().balanceOf(payer.address);
      const runs = app.runs.a;
      const t0 = Date.now();
      const failed = await pay(await signedPayment(payer, required));
      expect(failed.status).toBe(402);
      const body = (await failed.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ code: 'settlement_failed', reason: 'invalid_exact_evm_transaction_failed' });
      expect(body).not.toHaveProperty('route'); // the handler's body is withheld
      // The buyer reads a stable reason and sentence, not the chain node's own error text.
      const response = JSON.parse(Buffer.from(failed.headers.get('payment-response') ?? '', 'base64').toString()) as {
        success: boolean;
        errorReason: string;
        errorMessage: string;
      };
      expect(response).toMatchObject({
        success: false,
        errorReason: 'invalid_exact_evm_transaction_failed',
        errorMessage: 'the settlement transaction did not succeed on chain',
      });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(SETTLE_TIMEOUT_MS - 1000); // retried until the deadline
      expect(app.runs.a - runs).toBe(1);
      expect(await dc().balanceOf(payer.address)).toBe(before);
      const component = await settlementComponent();
      expect(component.status).toBe('degraded');
      expect(component.last_settlement_error).toMatchObject({
        reason: 'invalid_exact_evm_transaction_failed',
        payer_fault: false,
      });

      await dc().node.testClient.setBalance({ address: settler, value: gas });
      expect((await pay(await signedPayment(payer, required))).status).toBe(200);
      const ok = await eventually(settlementComponent, (c) => c.status === 'ok', 60_000, 250);
      expect(ok).toMatchObject({
        status: 'ok',
        mode: 'devchain',
        network: 'eip155:8453',
        asset: payments.settlement.asset,
      });
    },
  );
});

describe('a dev chain that keeps time', () => {
  it(
    'shows the head age in /health, and reports degraded with the reason when the chain stops producing blocks',
    { timeout: 240_000 },
    async () => {
      const ok = await eventually(settlementComponent, (c) => c.status === 'ok', 60_000, 250);
      expect(ok).toMatchObject({
        status: 'ok',
        mode: 'devchain',
        network: 'eip155:8453',
        asset: payments.settlement.asset,
        pay_to: payments.settlement.payTo,
      });
      expect((ok.head as { age_ms: number }).age_ms).toBeLessThanOrEqual(6000); // PAYMENT_HEAD_STALE_MS: the rule behind `ok`

      const { testClient } = dc().node;
      await testClient.setIntervalMining({ interval: 0 });
      await testClient.setAutomine(false);
      try {
        const stale = await eventually(settlementComponent, (c) => c.status !== 'ok', 60_000, 250);
        expect(stale.status).toBe('degraded');
        expect(String(stale.reason)).toMatch(/chain head \d+ is \d+ s old/);
        expect((await health.check()).status).toBe('degraded');
      } finally {
        await testClient.setAutomine(true);
        await testClient.setIntervalMining({ interval: 2 }); // seconds (viem converts)
      }
      // The next interval block comes up to 2 s after mining resumes.
      const back = await eventually(settlementComponent, (c) => c.status === 'ok', 60_000, 250);
      expect(back.status, JSON.stringify(back)).toBe('ok');
    },
  );
});
