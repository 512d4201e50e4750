/**
 * Paid answers released on broadcast (PAYMENT_ANSWER_ON=broadcast), on a real dev chain whose blocks the test
 * mines by hand, behind the real gate (startPayments in `self` mode against the chain, so the gateway can be
 * restarted while the chain keeps its pending transactions):
 *
 *  - a payer who spends its balance between its answer and the confirmation: the settlement fails, the loss stays
 *    within the per-payer cap, is visible on /health and /metrics, and the payer is put on hold (its next answer
 *    waits for confirmation);
 *  - a payer at its cap: its next answer waits for confirmation;
 *  - a restart with answered, unconfirmed settlements whose transactions the node dropped: the next start follows
 *    them from the durable record and settles every one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { createWalletClient, erc20Abi, http, parseGwei, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startDevChain, type DevChain } from '../../api/dev-chain/dev-chain.js';
import { startPayments, type Payments } from '../../api/payment/payments.js';
import { HealthRegistry } from '../../core/health.js';
import { registry } from '../../core/metrics.js';
import { eventually, testConfig, testLogger } from '../helpers/config.js';
import { GATE_APP_PRICE, startGateApp, type GateApp } from '../helpers/gate-app.js';
import { gateOverCore } from '../../api/paid-call/payment-gate.js';
import { signedPayment } from '../helpers/x402-client.js';

const logger = testLogger();
const PRICE = BigInt(GATE_APP_PRICE);
/** Authorizations valid this long: a failed settlement of an answered payment is retried this long at most. */
const VALIDITY_S = 12;

let chain: DevChain;
let dataDir: string;

interface Gateway {
  payments: Payments;
  health: HealthRegistry;
  app: GateApp;
  required: PaymentRequired;
}

async function startGateway(): Promise<Gateway> {
  const health = new HealthRegistry({ version: 'test', role: 'api' }, 5000);
  const payments = await startPayments(
    testConfig({
      SETTLEMENT: 'self',
      PAYMENT_RPC_URL: chain.rpcUrl,
      PAYMENT_SETTLER_KEY: chain.settlerKey,
      PAYMENT_ASSET: chain.usdc,
      PAYMENT_PAY_TO: chain.payTo,
      DATA_DIR: dataDir,
      PAYMENT_REPLAY_STORE: 'memory',
      PAYMENT_ANSWER_ON: 'broadcast',
      PAYMENT_RISK_MAX_PER_PAYER_ATOMIC: String(3n * PRICE),
      PAYMENT_RISK_MAX_TOTAL_ATOMIC: String(100n * PRICE),
      PAYMENT_MAX_TIMEOUT_SECONDS: String(VALIDITY_S),
      PAYMENT_SETTLE_TIMEOUT_MS: '4000',
    }),
    { logger, health },
  );
  await payments.core.ready();
  const app = await startGateApp(gateOverCore(payments.core), logger, 20);
  const res = await fetch(`${app.url}/api/v1/test/a`);
  return { payments, health, app, required: decodePaymentRequiredHeader(res.headers.get('payment-required')!) };
}

async function stopGateway(g: Gateway | undefined): Promise<void> {
  await g?.app.http.close();
  await g?.payments.stop();
}

const pay = (g: Gateway, header: string) =>
  fetch(`${g.app.url}/api/v1/test/a`, { headers: { 'PAYMENT-SIGNATURE': header } });

async function fundedPayer(atomic: bigint): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.mint(account.address, atomic);
  return account;
}

const test = () => chain.node.testClient;
/** Blocks only when the test mines them. */
async function holdBlocks(): Promise<void> {
  await test().setAutomine(false);
  await test().request({ method: 'evm_setIntervalMining', params: [0] });
}
async function mineEvery(ms: number): Promise<void> {
  // In ms, as hardhat takes it (viem's setIntervalMining takes seconds).
  await test().request({ method: 'evm_setIntervalMining', params: [ms] });
}
const receiptOf = (hash: string) =>
  chain.node.publicClient.getTransactionReceipt({ hash: hash as Hex }).then(
    (r) => r,
    () => undefined,
  );
const settlementOf = (res: Response) => decodePaymentResponseHeader(res.headers.get('payment-response')!);

/** Resolves with the response, or `pending` when it has not answered within `ms`. */
async function within(ms: number, response: Promise<Response>): Promise<Response | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  const first = await Promise.race([response, pending]);
  clearTimeout(timer);
  return first;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'answer-on-broadcast-'));
  chain = await startDevChain({ pollingIntervalMs: 50 });
});

// Whatever a failed test left held, the next one starts with blocks coming.
beforeEach(() => mineEvery(200));

afterAll(async () => {
  await chain?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('answer on broadcast', () => {
  let g: Gateway;
  beforeAll(async () => {
    g = await startGateway();
  });
  afterAll(async () => {
    await mineEvery(200);
    await stopGateway(g);
  });

  it(
    'answers before the block, then: a payer who spends its balance first is a loss within its cap, visible, and put on hold',
    { timeout: 120_000 },
    async () => {
      const payer = await fundedPayer(PRICE);
      await holdBlocks();
      const res = await pay(g, await signedPayment(payer, g.required));
      expect(res.status, await res.clone().text()).toBe(200);
      const { transaction } = settlementOf(res);
      expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await receiptOf(transaction)).toBeUndefined(); // answered, not mined

      // The payer moves its balance away with a higher tip: its transfer is mined before the settlement.
      await test().setBalance({ address: payer.address, value: 10n ** 18n });
      const wallet = createWalletClient({ account: payer, chain: chain.node.chain, transport: http(chain.rpcUrl) });
      await wallet.writeContract({
        address: chain.usdc,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [privateKeyToAccount(generatePrivateKey()).address, PRICE],
        gas: 100_000n, // no estimate: the pending block already spends the balance
        maxPriorityFeePerGas: parseGwei('50'),
        maxFeePerGas: parseGwei('500'),
      });
      await mineEvery(300);

      const local = g.payments.settlement.local!;
      await eventually(
        () => Promise.resolve(local.queue.stats.lost),
        (lost) => lost === 1,
        (VALIDITY_S + 20) * 1000,
        250,
      );
      expect(await chain.balanceOf(chain.payTo)).toBe(0n);
      const settlement = (await g.health.check()).components.settlement as Record<string, unknown>;
      expect(settlement.status).toBe('degraded');
      expect(settlement.reason).toMatch(/answered on broadcast failed/);
      expect(settlement.risk).toMatchObject({
        losses_in_window: 1,
        lost_in_window_atomic: PRICE.toString(),
        payers_on_hold: 1,
        unconfirmed_atomic: '0',
      });
      // The loss is within the payer's cap, and on /metrics.
      expect(PRICE).toBeLessThanOrEqual(local.risk!.limits.perPayerAtomic);
      const metrics = await registry.metrics();
      expect(metrics).toMatch(/x402_settlement_losses_total\{reason="invalid_exact_evm_insufficient_balance"\} 1/);
      expect(metrics).toMatch(new RegExp(`x402_settlement_lost_atomic_total ${PRICE}`));

      // On hold: the payer's next answer waits for its confirmation.
      await chain.mint(payer.address, PRICE);
      await holdBlocks();
      const held = pay(g, await signedPayment(payer, g.required));
      expect(await within(1500, held)).toBe('pending');
      await mineEvery(200);
      const answered = await held;
      expect(answered.status).toBe(200);
      expect((await receiptOf(settlementOf(answered).transaction))?.status).toBe('success');
    },
  );

  it('answers a payer at its cap only once confirmed', { timeout: 120_000 }, async () => {
    const payer = await fundedPayer(10n * PRICE);
    await holdBlocks();
    // The cap is 3 prices: three answers on broadcast, none mined.
    for (let n = 0; n < 3; n++) {
      const res = await pay(g, await signedPayment(payer, g.required));
      expect(res.status).toBe(200);
      expect(await receiptOf(settlementOf(res).transaction)).toBeUndefined();
    }
    expect(g.payments.settlement.local!.risk!.snapshot().unconfirmed_atomic).toBe((3n * PRICE).toString());
    const fourth = pay(g, await signedPayment(payer, g.required));
    expect(await within(1500, fourth)).toBe('pending');
    await mineEvery(200);
    const res = await fourth;
    expect(res.status).toBe(200);
    expect((await receiptOf(settlementOf(res).transaction))?.status).toBe('success');
    await g.payments.settlement.local!.queue.drained();
    expect(await chain.balanceOf(payer.address)).toBe(6n * PRICE);
    expect(g.payments.settlement.local!.risk!.snapshot().unconfirmed_atomic).toBe('0');
  });
});

describe('a restart with unconfirmed settlements', () => {
  it(
    'loses none: the next start settles them from the durable record after the node dropped their transactions',
    { timeout: 120_000 },
    async () => {
      let first: Gateway | undefined = await startGateway();
      let second: Gateway | undefined;
      try {
        const payer = await fundedPayer(5n * PRICE);
        const payToBefore = await chain.balanceOf(chain.payTo);
        await holdBlocks();
        const hashes: string[] = [];
        for (let n = 0; n < 2; n++) {
          const res = await pay(first, await signedPayment(payer, first.required));
          expect(res.status).toBe(200);
          hashes.push(settlementOf(res).transaction);
        }
        // The node forgets them (a restarted node, an evicted mempool), then the gateway stops.
        for (const hash of new Set(hashes)) await test().dropTransaction({ hash: hash as Hex });
        await stopGateway(first);
        first = undefined;
        await mineEvery(200);
        expect(await chain.balanceOf(payer.address)).toBe(5n * PRICE);

        second = await startGateway();
        const recovered = second.payments.settlement.local!;
        await eventually(
          () => chain.balanceOf(chain.payTo),
          (b) => b === payToBefore + 2n * PRICE,
          (VALIDITY_S + 20) * 1000,
          250,
        );
        await recovered.queue.drained();
        expect(await chain.balanceOf(payer.address)).toBe(3n * PRICE);
        expect(recovered.queue.stats.lost).toBe(0);
        expect(recovered.risk!.snapshot().unconfirmed_atomic).toBe('0');
      } finally {
        await stopGateway(first);
        await stopGateway(second);
      }
    },
  );
});
