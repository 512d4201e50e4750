/**
 * The dev chain keeps wall-clock time under the gate, as Base does: after a
 * long idle (no settlement mines a block) a payment signed with
 * `validAfter = now - 60` is accepted and settles, and a long run of paid
 * calls does not push block time ahead of the wall clock. Payments are signed
 * from the spec (not the bundled client), over loopback HTTP, on the
 * `npm start` defaults (SETTLEMENT=devchain).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startPayments, type Payments } from '../../api/payment/payments.js';
import { HealthRegistry } from '../../core/health.js';
import { eventually, testConfig, testLogger } from '../helpers/config.js';
import { GATE_APP_PRICE, startGateApp, type GateApp } from '../helpers/gate-app.js';
import { gateOverCore } from '../../api/paid-call/payment-gate.js';
import { signedPayment } from '../helpers/x402-client.js';

const logger = testLogger();
let dataDir: string;
let payments: Payments;
let health: HealthRegistry;
let app: GateApp;
let payer: PrivateKeyAccount;
let required: PaymentRequired;

const dc = () => payments.settlement.devChain!;
const headLeadS = async () => {
  const block = await dc().node.publicClient.getBlock();
  return Number(block.timestamp) - Date.now() / 1000;
};

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'payment-clock-'));
  health = new HealthRegistry({ version: 'test', role: 'api' }, 5000);
  payments = await startPayments(
    testConfig({ SETTLEMENT: 'devchain', DATA_DIR: dataDir, PAYMENT_REPLAY_STORE: 'memory' }),
    { logger, health },
  );
  await payments.core.ready();
  app = await startGateApp(gateOverCore(payments.core), logger);
  payer = privateKeyToAccount(dc().payerKey);
  required = decodePaymentRequiredHeader((await fetch(`${app.url}/api/v1/test/a`)).headers.get('payment-required')!);
});

afterAll(async () => {
  await app?.http.close();
  await payments?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a dev chain that keeps time', () => {
  it('accepts validAfter = now - 60 after 90 s without any settlement', { timeout: 240_000 }, async () => {
    await new Promise((r) => setTimeout(r, 90_000)); // the idle spell under test: nothing mines a block but the clock
    // A block every 2 s, read every second: the head is seconds old. The chain and the reader are timers, late on a busy
    // machine, so the head is polled; a chain that stood still during the idle spell stays 90 s old and never passes.
    const settlement = await eventually(
      async () =>
        (await health.check()).components.settlement as unknown as { status: string; head?: { age_ms: number } },
      (c) => c.status === 'ok' && (c.head?.age_ms ?? Infinity) < 5000,
      30_000,
      250,
    );
    expect(settlement.status).toBe('ok');
    const before = await dc().balanceOf(payer.address);
    const res = await fetch(`${app.url}/api/v1/test/a`, {
      headers: {
        'PAYMENT-SIGNATURE': await signedPayment(payer, required, { validAfter: Math.floor(Date.now() / 1000) - 60 }),
      },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!).success).toBe(true);
    expect(before - (await dc().balanceOf(payer.address))).toBe(BigInt(GATE_APP_PRICE));
  });

  it(
    'serves 1,000 sequential paid calls, every one 200, and ends with the chain head within 5 s of the wall clock',
    { timeout: 600_000 },
    async () => {
      const before = await dc().balanceOf(payer.address);
      const statuses = new Map<number, number>();
      for (let i = 0; i < 1000; i++) {
        const header = await signedPayment(payer, required, { validAfter: Math.floor(Date.now() / 1000) - 60 });
        const res = await fetch(`${app.url}/api/v1/test/a?i=${i}`, { headers: { 'PAYMENT-SIGNATURE': header } });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
      expect(Object.fromEntries(statuses)).toEqual({ 200: 1000 });
      // Not ahead: settlements must not push block time past the wall clock (a slow machine only makes this easier).
      expect(await headLeadS()).toBeLessThan(5);
      // Not behind for long: interval mining catches up with the wall clock (a timer, late on a busy machine: polled).
      await eventually(headLeadS, (lead) => lead > -5, 30_000, 250);
      expect(before - (await dc().balanceOf(payer.address))).toBe(1000n * BigInt(GATE_APP_PRICE));
    },
  );
});
