/**
 * Settlements per second per settler key (bench:capacity, docs/scaling.md):
 * the api role in-process on the dev chain (SETTLEMENT=devchain: hardhat,
 * test USDC, the in-process x402 facilitator over one settler key, as
 * api/payment/settlement.ts builds it), a real 402 challenge from a paid
 * route, payments signed in advance by the real x402 client with the demo
 * payer (one authorization each), then `facilitator.settle()` — what the gate
 * calls after a 200 — with 1 and SETTLE_IN_FLIGHT settlements in flight:
 * verification, the transferWithAuthorization transaction and its receipt.
 * CPU of this process and of the hardhat node per settlement.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { RunningApi } from '../../../api/role.js';
import { createLogger } from '../../../core/logger.js';
import { startProcess } from '../../../roles/process.js';
import { testConfig } from '../../helpers/config.js';
import { cpuMsOf, descendantsMatching } from '../cpu.js';
import { challengeOf, payerClient } from '../x402-load.js';

export interface SettleCapacity {
  inFlight: number;
  settlements: number;
  seconds: number;
  perS: number;
  p50Ms: number;
  appCpuMsEach: number;
  chainCpuMsEach: number;
  failures: number;
  /** The first failure's reason. */
  failure?: string;
}

export async function measureSettlement(options: {
  count: number;
  inFlight: number[];
  log: (s: string) => void;
}): Promise<SettleCapacity[]> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-settle-'));
  const config = testConfig({
    ROLE: 'api',
    STORE: 'duckdb',
    DUCKDB_PATH: ':memory:',
    QUEUE: 'inprocess',
    SETTLEMENT: 'devchain',
    DATA_DIR: dir,
    HTTP_PORT: '0',
    PAYMENT_REPLAY_STORE: 'memory',
  });
  const proc = await startProcess(config, createLogger('silent'));
  const out: SettleCapacity[] = [];
  try {
    const api = proc.roles.find((r) => r.name === 'api') as RunningApi;
    await api.payments.core.ready();
    const settlement = api.payments.settlement;
    const chainPids = descendantsMatching(/hardhat/);
    const challenge = await challengeOf(proc.http.url, {
      method: 'POST',
      path: '/api/v1/code-denoise',
      body: JSON.stringify({ code: '// x\nlet a = 1;\n' }),
    } as Parameters<typeof challengeOf>[1]);
    const requirements = challenge.accepts[0] as PaymentRequirements;
    const client = payerClient(settlement.devChain!.payerKey);
    client.setSpendControls({
      allowedAssets: [
        { network: requirements.network, asset: requirements.asset, maxAmountPerPayment: requirements.amount },
      ],
    });
    for (const inFlight of options.inFlight) {
      const payloads: PaymentPayload[] = [];
      for (let i = 0; i < options.count; i++) payloads.push(await client.createPaymentPayload(challenge));
      await settlement.facilitator.settle(payloads.pop()!, requirements); // warm
      const cpu0 = { app: cpuMsOf(process.pid) ?? 0, chain: chainPids.reduce((a, p) => a + (cpuMsOf(p) ?? 0), 0) };
      const latencies: number[] = [];
      let failures = 0;
      let failure: string | undefined;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          for (let p = payloads.pop(); p; p = payloads.pop()) {
            const s = performance.now();
            const r = await settlement.facilitator
              .settle(p, requirements)
              .catch((err: unknown) => ({ success: false, errorReason: String(err).split('\n')[0] }));
            if (r.success) latencies.push(performance.now() - s);
            else {
              failures++;
              failure ??= `${r.errorReason ?? 'failed'}${'errorMessage' in r && r.errorMessage ? `: ${String(r.errorMessage).split('\n')[0]!.slice(0, 160)}` : ''}`;
            }
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const cpu1 = { app: cpuMsOf(process.pid) ?? 0, chain: chainPids.reduce((a, p) => a + (cpuMsOf(p) ?? 0), 0) };
      latencies.sort((a, b) => a - b);
      const n = latencies.length;
      const row = {
        inFlight,
        settlements: n,
        seconds,
        perS: n / seconds,
        p50Ms: latencies[Math.floor(n / 2)] ?? NaN,
        appCpuMsEach: (cpu1.app - cpu0.app) / Math.max(n, 1),
        chainCpuMsEach: (cpu1.chain - cpu0.chain) / Math.max(n, 1),
        failures,
        ...(failure ? { failure } : {}),
      };
      out.push(row);
      options.log(
        `settle, ${inFlight} in flight: ${row.perS.toFixed(1)}/s, p50 ${row.p50Ms.toFixed(0)} ms, app CPU ${row.appCpuMsEach.toFixed(1)} ms + chain ${row.chainCpuMsEach.toFixed(1)} ms each${failures ? `, ${failures} failed (first: ${failure})` : ''}`,
      );
    }
  } finally {
    await proc.shutdown('bench done');
    await rm(dir, { recursive: true, force: true });
  }
  return out;
}
