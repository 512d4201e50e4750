/**
 * Fail closed in production: the real entry point (`roles/main.ts`) started
 * with NODE_ENV=production refuses to serve paid routes on the dev chain or on
 * anything but real USDC on Base, and says what to set; an explicit, loudly
 * named override starts it anyway and says so in the log and in /health.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, settlementSafetyProblems } from '../../core/config.js';
import { startApp, type AppProcess } from '../helpers/app-process.js';

const dirs: string[] = [];
const apps: AppProcess[] = [];

afterAll(async () => {
  for (const app of apps) if (app.child.exitCode === null) app.child.kill('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function launch(env: Record<string, string>): Promise<AppProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'payment-production-'));
  dirs.push(dir);
  const app = await startApp({ DATA_DIR: dir, ...env });
  apps.push(app);
  return app;
}

describe('production start-up', () => {
  it(
    'exits with a clear message when NODE_ENV=production has no settlement configured',
    { timeout: 60_000 },
    async () => {
      const app = await launch({ NODE_ENV: 'production' });
      const exit = await app.exited;
      expect(exit.code).toBe(2);
      const out = app.output();
      expect(out).toContain('Refusing to start');
      expect(out).toContain('SETTLEMENT=devchain is refused with NODE_ENV=production');
      expect(out).toContain('SETTLEMENT=remote with FACILITATOR_URL and PAYMENT_PAY_TO');
      expect(out).not.toContain('listening');
    },
  );

  it('refuses a settlement on another network or asset than USDC on Base', async () => {
    const base = {
      NODE_ENV: 'production',
      SETTLEMENT: 'remote',
      FACILITATOR_URL: 'https://facilitator.example',
      PAYMENT_PAY_TO: '0x000000000000000000000000000000000000dEaD',
    };
    expect(settlementSafetyProblems(loadConfig(base))).toEqual([]);
    expect(settlementSafetyProblems(loadConfig({ ...base, PAYMENT_NETWORK: 'eip155:84532' }))[0]).toMatch(
      /PAYMENT_NETWORK=eip155:84532 is refused/,
    );
    expect(
      settlementSafetyProblems(loadConfig({ ...base, PAYMENT_ASSET: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' }))[0],
    ).toMatch(/PAYMENT_ASSET=.* is refused .* USDC on eip155:8453 is 0x833589/);
    expect(
      settlementSafetyProblems(
        loadConfig({ ...base, NODE_ENV: 'development', PAYMENT_ASSET: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' }),
      ),
    ).toEqual([]);
    // Only processes that serve paid routes are concerned.
    const app = await launch({
      NODE_ENV: 'production',
      PAYMENT_NETWORK: 'eip155:84532',
      SETTLEMENT: 'remote',
      FACILITATOR_URL: 'http://127.0.0.1:1',
      PAYMENT_PAY_TO: base.PAYMENT_PAY_TO,
    });
    expect((await app.exited).code).toBe(2);
    expect(app.output()).toContain('PAYMENT_NETWORK=eip155:84532 is refused with NODE_ENV=production');
  });

  it(
    'starts on the dev chain with the loud override, saying so in the log and in /health',
    { timeout: 90_000 },
    async () => {
      const app = await launch({
        NODE_ENV: 'production',
        ROLE: 'api',
        PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION: 'true',
        MARKET_SOURCE: 'simulated',
      });
      let health: { components?: Record<string, Record<string, unknown>> } = {};
      const until = Date.now() + 60_000;
      while (Date.now() < until && !health.components?.settlement) {
        if (app.child.exitCode !== null) throw new Error(app.output());
        health = (await fetch(`${app.url}/health`).then(
          (r) => r.json(),
          () => ({}),
        )) as typeof health;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(health.components?.settlement).toMatchObject({
        mode: 'devchain',
        network: 'eip155:8453',
        unsafe_test_payments: true,
      });
      expect(app.output()).toMatch(/x402 UNSAFE: PAYMENT_UNSAFE_ACCEPT_TEST_PAYMENTS_IN_PRODUCTION=true/);
      expect(app.output()).toMatch(/x402 payments live: devchain settlement on eip155:8453, asset 0x[0-9a-fA-F]{40}/);
      app.child.kill('SIGTERM');
      await app.exited;
    },
  );
});
