/**
 * Settlement throughput of the in-process settler on the dev chain, for
 * bench:api: `count` distinct EIP-3009 authorizations (several payers,
 * signed natively) handed to the facilitator's `settle` at once, settled on
 * chain through the settlement queue, with Multicall3 batching or without
 * (PAYMENT_SETTLE_BATCH_MAX=1). Two chain clocks: automine (the dev chain's
 * default: a block per transaction, plus one every 2 s) and 2 s blocks only
 * (automine off, as on Base, where a transaction waits for its block).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { startSettlement } from '../../api/payment/settlement.js';
import type { Logger } from '../../core/logger.js';
import { testConfig } from '../helpers/config.js';
import { nativePayer, nativePayment } from './native-signer.js';
import { quantile } from './x402-load.js';

export interface SettlementRun {
  blocks: 'automine' | '2 s blocks';
  batchMax: number;
  inFlight: number;
  settlements: number;
  failed: number;
  seconds: number;
  perSecond: number;
  transactions: number;
  gasPerSettlement: number;
  p50Ms: number;
  p99Ms: number;
}

export async function settlementThroughput(options: {
  blocks: SettlementRun['blocks'];
  batchMax: number;
  inFlight?: number;
  count: number;
  payers?: number;
  logger: Logger;
}): Promise<SettlementRun> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-settle-'));
  const inFlight = options.inFlight ?? 8;
  const settlement = await startSettlement(
    testConfig({
      SETTLEMENT: 'devchain',
      DATA_DIR: dataDir,
      PAYMENT_SETTLE_BATCH_MAX: String(options.batchMax),
      PAYMENT_SETTLE_IN_FLIGHT: String(inFlight),
      PAYMENT_SETTLE_TIMEOUT_MS: '280000',
      // The product's own switch (DEVCHAIN_MINING): blocks only every 2 s, as on Base.
      DEVCHAIN_MINING: options.blocks === '2 s blocks' ? 'interval' : 'auto',
      DEVCHAIN_BLOCK_MS: '2000',
      // Settled means mined here: each settle resolves on its receipt, not on broadcast.
      PAYMENT_ANSWER_ON: 'confirmation',
    }),
    { logger: options.logger, writeInfoFile: false },
  );
  try {
    const dc = settlement.devChain!;
    const keys: Hex[] = Array.from({ length: options.payers ?? 8 }, () => generatePrivateKey());
    const payers = keys.map(nativePayer);
    await dc.mintEach(
      payers.map((p) => p.address as Hex),
      10n ** 12n,
    ); // one block for all
    const requirements: PaymentRequirements = {
      scheme: 'exact',
      network: settlement.network,
      amount: '15000',
      asset: settlement.asset,
      payTo: settlement.payTo,
      maxTimeoutSeconds: 300,
      extra: { name: settlement.assetName, version: settlement.assetVersion },
    };
    const required: PaymentRequired = {
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/bench/settle', description: '', mimeType: 'application/json' },
      accepts: [requirements],
    };
    const payloads = Array.from({ length: options.count }, (_, i) =>
      nativePayment(payers[i % payers.length]!, required),
    );

    const latencies: number[] = [];
    const t0 = performance.now();
    const results = await Promise.all(
      payloads.map(async (p) => {
        const s = performance.now();
        const r = await settlement.facilitator.settle(p, requirements);
        latencies.push(performance.now() - s);
        return r;
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const settled = results.filter((r) => r.success);
    const hashes = [...new Set(settled.map((r) => r.transaction as Hex))];
    let gas = 0n;
    for (const hash of hashes) gas += (await dc.node.publicClient.getTransactionReceipt({ hash })).gasUsed;
    return {
      blocks: options.blocks,
      batchMax: options.batchMax,
      inFlight,
      settlements: settled.length,
      failed: results.length - settled.length,
      seconds,
      perSecond: settled.length / seconds,
      transactions: hashes.length,
      gasPerSettlement: settled.length ? Number(gas) / settled.length : Number.NaN,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
    };
  } finally {
    await settlement.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
