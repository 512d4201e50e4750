/**
 * DEVCHAIN_MINING=interval on a real dev chain (hardhat@2): blocks only every
 * DEVCHAIN_BLOCK_MS, no automine, as on Base. A sent transaction has no
 * receipt until the next block boundary; two sent within one interval land in
 * the same block; blocks arrive an interval apart (with generous slack for a
 * loaded machine); one sender's hundreds of pending transactions all wait in
 * the mempool and are mined; the block gas limit is Base's. Then a paid call
 * through the real gate (startPayments from config) on such a chain is settled
 * on chain, and /health and the chain say which mining mode runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { parseEventLogs, erc20Abi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BASE_BLOCK_GAS_LIMIT, startDevChain, type DevChain } from '../../api/dev-chain/dev-chain.js';
import { startPayments, type Payments } from '../../api/payment/payments.js';
import { loadConfig } from '../../core/config.js';
import { HealthRegistry } from '../../core/health.js';
import { eventually, testConfig, testLogger } from '../helpers/config.js';
import { startGateApp, type GateApp, GATE_APP_PRICE } from '../helpers/gate-app.js';
import { gateOverCore } from '../../api/paid-call/payment-gate.js';
import { signedPayment } from '../helpers/x402-client.js';

const BLOCK_MS = 1000;
const logger = testLogger();

/** Resolves at the first block after the current head: right after a boundary, most of an interval is left. */
async function nextBlock(chain: DevChain): Promise<bigint> {
  const head = await chain.node.publicClient.getBlockNumber({ cacheTime: 0 });
  return eventually(
    () => chain.node.publicClient.getBlockNumber({ cacheTime: 0 }),
    (n) => n > head,
    30 * BLOCK_MS,
    10,
  );
}

describe('DEVCHAIN_MINING and DEVCHAIN_BLOCK_MS', () => {
  it("default to today's automine with 2 s blocks, and refuse what they do not know", () => {
    const config = loadConfig({});
    expect(config.DEVCHAIN_MINING).toBe('auto');
    expect(config.DEVCHAIN_BLOCK_MS).toBe(2000);
    expect(loadConfig({ DEVCHAIN_MINING: 'interval', DEVCHAIN_BLOCK_MS: '500' })).toMatchObject({
      DEVCHAIN_MINING: 'interval',
      DEVCHAIN_BLOCK_MS: 500,
    });
    expect(() => loadConfig({ DEVCHAIN_MINING: 'sometimes' })).toThrow(/DEVCHAIN_MINING/);
    expect(() => loadConfig({ DEVCHAIN_BLOCK_MS: '0' })).toThrow(/DEVCHAIN_BLOCK_MS/);
  });
});

describe('dev chain with DEVCHAIN_MINING=interval', () => {
  let chain: DevChain;

  beforeAll(async () => {
    chain = await startDevChain({ mining: 'interval', blockIntervalMs: BLOCK_MS });
  });
  afterAll(async () => {
    await chain?.stop();
  });

  it("says how it mines, and its blocks hold Base's gas", async () => {
    expect(chain.mining).toBe('interval');
    expect(chain.blockMs).toBe(BLOCK_MS);
    const block = await chain.node.publicClient.getBlock();
    expect(block.gasLimit).toBe(BigInt(BASE_BLOCK_GAS_LIMIT));
    // Set-up was automined and then handed over to the interval: the demo payer is funded.
    expect(await chain.balanceOf(chain.payer)).toBeGreaterThan(0n);
  });

  it('gives no receipt before the next block boundary, and two sends within one interval share that block', async () => {
    // Retried when the machine is so slow that a boundary fell between the sends and the check.
    for (let attempt = 0; ; attempt++) {
      const head = await nextBlock(chain);
      const wallet = chain.node.walletClient;
      const a = await wallet.sendTransaction({ to: chain.payTo, value: 1n });
      const b = await wallet.sendTransaction({ to: chain.payTo, value: 2n });
      const receiptNow = await Promise.all(
        [a, b].map((hash) => chain.node.publicClient.getTransactionReceipt({ hash }).catch(() => undefined)),
      );
      const stillHead = (await chain.node.publicClient.getBlockNumber({ cacheTime: 0 })) === head;
      if (!stillHead && attempt < 3) continue;
      expect(stillHead).toBe(true);
      expect(receiptNow).toEqual([undefined, undefined]);
      const [ra, rb] = await Promise.all(
        [a, b].map((hash) => chain.node.publicClient.waitForTransactionReceipt({ hash, timeout: 30 * BLOCK_MS })),
      );
      expect(ra!.status).toBe('success');
      expect(ra!.blockNumber).toBe(head + 1n);
      expect(rb!.blockNumber).toBe(head + 1n);
      break;
    }
  });

  it('mines a block per interval and none in between, however many transactions are sent', async () => {
    const arrivals: number[] = [];
    let head = await nextBlock(chain);
    arrivals.push(Date.now());
    // Transactions keep coming while blocks are observed: with automine each would make a block at once.
    const wallet = chain.node.walletClient;
    const until = Date.now() + 5 * BLOCK_MS;
    let sent = 0;
    while (Date.now() < until) {
      await wallet.sendTransaction({ to: chain.payTo, value: 1n });
      sent += 1;
      const n = await chain.node.publicClient.getBlockNumber({ cacheTime: 0 });
      if (n > head) {
        expect(n).toBe(head + 1n); // one block at a time
        head = n;
        arrivals.push(Date.now());
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(sent).toBeGreaterThan(10);
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]!);
    expect(gaps.length).toBeGreaterThanOrEqual(2);
    // Observed by polling on a shared machine: never a block within half an interval of the last one.
    for (const gap of gaps) expect(gap).toBeGreaterThan(BLOCK_MS / 2);
    // Blocks land in order, each timestamped from the wall clock (same-second blocks allowed).
    const last = await chain.node.publicClient.getBlock({ blockNumber: head });
    expect(Math.abs(Number(last.timestamp) * 1000 - Date.now())).toBeLessThan(10_000);
  });

  it("holds hundreds of one sender's pending transactions and mines them all", async () => {
    const wallet = chain.node.walletClient;
    const from = wallet.account.address;
    await nextBlock(chain);
    const nonce = await chain.node.publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
    const fees = await chain.node.publicClient.estimateFeesPerGas();
    // All at once, each with its own nonce: they reach the node in any order and wait for the block together.
    const t0 = Date.now();
    const hashes: Hex[] = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        wallet.sendTransaction({
          to: chain.payTo,
          value: 1n,
          nonce: nonce + i,
          gas: 21_000n,
          maxFeePerGas: fees.maxFeePerGas * 2n,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        }),
      ),
    );
    const sendMs = Date.now() - t0;
    const receipts = await Promise.all(
      hashes.map((hash) => chain.node.publicClient.waitForTransactionReceipt({ hash, timeout: 60 * BLOCK_MS })),
    );
    expect(receipts.every((r) => r.status === 'success')).toBe(true);
    // 300 x 21,000 gas fit one Base block: each waits only for the first boundary after it was sent.
    const blocks = new Set(receipts.map((r) => r.blockNumber));
    expect(blocks.size).toBeLessThanOrEqual(Math.ceil(sendMs / BLOCK_MS) + 1);
  });
});

describe('a paid call on an app started with DEVCHAIN_MINING=interval', () => {
  let dataDir: string;
  let payments: Payments;
  let health: HealthRegistry;
  let app: GateApp;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'devchain-interval-'));
    health = new HealthRegistry({ version: 'test', role: 'api' }, 5000);
    payments = await startPayments(
      testConfig({
        SETTLEMENT: 'devchain',
        DATA_DIR: dataDir,
        PAYMENT_REPLAY_STORE: 'memory',
        DEVCHAIN_MINING: 'interval',
        DEVCHAIN_BLOCK_MS: String(BLOCK_MS),
        PAYMENT_SETTLE_TIMEOUT_MS: '30000',
      }),
      { logger, health },
    );
    await payments.core.ready();
    app = await startGateApp(gateOverCore(payments.core), logger);
  });
  afterAll(async () => {
    await app?.http.close();
    await payments?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('is settled on chain, in a block of the interval', async () => {
    const chain = payments.settlement.devChain!;
    expect(chain.mining).toBe('interval');
    const payer = privateKeyToAccount(generatePrivateKey());
    await chain.mint(payer.address, 1_000_000n);
    const url = `${app.url}/api/v1/test/a`;
    const required = decodePaymentRequiredHeader((await fetch(url)).headers.get('payment-required')!);
    const res = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': await signedPayment(payer, required) } });
    expect(res.status).toBe(200);
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settled.success).toBe(true);
    const hash = settled.transaction as Hex;
    // Answered on broadcast or on confirmation: either way the transaction is mined at a block boundary.
    const receipt = await chain.node.publicClient.waitForTransactionReceipt({ hash, timeout: 30 * BLOCK_MS });
    expect(receipt.status).toBe('success');
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).filter(
      (l) => l.args.from === payer.address && l.args.to === chain.payTo,
    );
    expect(transfers.map((t) => t.args.value)).toEqual([BigInt(GATE_APP_PRICE)]);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - BigInt(GATE_APP_PRICE));

    const component = (await health.check()).components.settlement as Record<string, unknown>;
    expect(component.devchain_mining).toEqual({ mode: 'interval', block_ms: BLOCK_MS });
    await eventually(
      async () => ((await health.check()).components.settlement as { status: string }).status,
      (s) => s === 'ok',
      30_000,
    );
  });
});
