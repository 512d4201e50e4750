/**
 * Two API replicas sharing one settler key: two real `roles/main.ts` processes
 * (ROLE=api, SETTLEMENT=self) against one local chain (hardhat@2 with the
 * EIP-3009 test USDC), one ClickHouse database, and one Redis (replay guard
 * and the settler's nonce lease). 50 concurrent paid calls on each at once
 * all settle: the replicas never send two transactions with one nonce.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { Redis } from 'ioredis';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startDevChain, type DevChain } from '../../api/dev-chain/dev-chain.js';
import { createStore } from '../../core/ports.js';
import { ident, sql } from '../../core/store/sql.js';
import { insertSpreadSamples } from '../../core/store/tables/spread-samples.js';
import { spreadSample } from '../helpers/spread-sample.js';
import { startApp, type AppProcess } from '../helpers/app-process.js';
import { testConfig, testLogger, uniqueName } from '../helpers/config.js';
import { signedPayment } from '../helpers/x402-client.js';

const logger = testLogger();
const SLICE = Date.UTC(2025, 2, 10, 9, 15);
const ROUTE = '/api/v1/crypto/spread-candles?pair=ETH/USD&date=2025-03-10&time=0915';
const database = uniqueName('x402_replicas');
const prefix = uniqueName('x402replicas');
const config = testConfig({ STORE: 'clickhouse', CLICKHOUSE_DATABASE: database });

let chain: DevChain;
let dataDir: string;
let payer: PrivateKeyAccount;
const replicas: AppProcess[] = [];

async function challengeOf(url: string): Promise<PaymentRequired> {
  const until = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${url}${ROUTE}`).catch(() => undefined);
    if (res?.status === 402) return decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    if (Date.now() > until) throw new Error(`no challenge from ${url}: ${res?.status} ${await res?.text()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'payment-replicas-'));
  const store = await createStore(config, logger);
  try {
    await store.migrate();
    await insertSpreadSamples(store, [
      spreadSample(1, SLICE + 10_000),
      spreadSample(2, SLICE + 60_000),
      spreadSample(3, SLICE + 600_000),
    ]);
  } finally {
    await store.close();
  }
  chain = await startDevChain({});
  payer = privateKeyToAccount(chain.payerKey);
  const settlerKey = generatePrivateKey();
  await chain.node.testClient.setBalance({ address: privateKeyToAccount(settlerKey).address, value: 10n ** 19n });
  const env = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ROLE: 'api',
    BUS: 'memory',
    QUEUE: 'inprocess',
    STORE: 'clickhouse',
    CLICKHOUSE_URL: config.CLICKHOUSE_URL,
    CLICKHOUSE_USER: config.CLICKHOUSE_USER,
    CLICKHOUSE_PASSWORD: config.CLICKHOUSE_PASSWORD,
    CLICKHOUSE_DATABASE: database,
    MARKET_SOURCE: 'simulated',
    SETTLEMENT: 'self',
    PAYMENT_RPC_URL: chain.rpcUrl,
    PAYMENT_SETTLER_KEY: settlerKey,
    PAYMENT_ASSET: chain.usdc,
    PAYMENT_PAY_TO: chain.payTo,
    PAYMENT_REPLAY_STORE: 'redis',
    REDIS_URL: config.REDIS_URL,
    QUEUE_PREFIX: prefix,
  };
  for (const n of [1, 2]) replicas.push(await startApp({ ...env, DATA_DIR: join(dataDir, `replica-${n}`) }));
}, 120_000);

afterAll(async () => {
  for (const r of replicas) {
    if (r.child.exitCode === null) {
      r.child.kill('SIGTERM');
      await Promise.race([r.exited, new Promise((res) => setTimeout(res, 10_000))]);
      if (r.child.exitCode === null) r.child.kill('SIGKILL');
    }
  }
  await chain?.stop();
  const store = await createStore(config, logger);
  await store.command(sql`DROP DATABASE IF EXISTS ${ident(database)}`).finally(() => store.close());
  const redis = new Redis(config.REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('two API replicas, one settler key', () => {
  it(
    'settles 50 concurrent payments on each replica at once, every one 200, balances exact',
    { timeout: 120_000 },
    async () => {
      const challenges = await Promise.all(replicas.map((r) => challengeOf(r.url)));
      const signed = await Promise.all(
        challenges.map((c) => Promise.all(Array.from({ length: 50 }, () => signedPayment(payer, c)))),
      );
      const price = BigInt(challenges[0]!.accepts[0]!.amount);
      const before = { payer: await chain.balanceOf(payer.address), payTo: await chain.balanceOf(chain.payTo) };

      const responses = await Promise.all(
        replicas.flatMap((r, i) =>
          signed[i]!.map((header) => fetch(`${r.url}${ROUTE}`, { headers: { 'PAYMENT-SIGNATURE': header } })),
        ),
      );
      const failures = await Promise.all(
        responses.filter((r) => r.status !== 200).map(async (r) => `${r.status} ${await r.text()}`),
      );
      expect(failures).toEqual([]);
      const transactions = new Set(
        responses.map((r) => decodePaymentResponseHeader(r.headers.get('payment-response')!).transaction as Hex),
      );
      for (const hash of transactions)
        expect((await chain.node.publicClient.getTransactionReceipt({ hash })).status).toBe('success');
      expect(await chain.balanceOf(payer.address)).toBe(before.payer - 100n * price);
      expect(await chain.balanceOf(chain.payTo)).toBe(before.payTo + 100n * price);
      for (const r of replicas) expect(r.output()).not.toMatch(/nonce too (low|high)/i);
    },
  );
});
