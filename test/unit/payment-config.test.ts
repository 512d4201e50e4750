/**
 * Payment configuration: the dev chain is the default, and the cross-field
 * rules of `remote` and `self` are reported in the same single start-up
 * message as every other configuration problem.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('payment configuration', () => {
  it('defaults to the dev chain on eip155:8453 with Base USDC terms', () => {
    expect(loadConfig({})).toMatchObject({
      SETTLEMENT: 'devchain',
      PAYMENT_NETWORK: 'eip155:8453',
      PAYMENT_ASSET: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      PAYMENT_ASSET_NAME: 'USD Coin',
      PAYMENT_ASSET_VERSION: '2',
      PAYMENT_MAX_TIMEOUT_SECONDS: 300,
      PAYMENT_REPLAY_STORE: 'auto',
    });
  });

  it('remote needs FACILITATOR_URL and PAYMENT_PAY_TO, listed with the other problems in one error', () => {
    const problems = problemsOf({ SETTLEMENT: 'remote', HTTP_PORT: '99999' });
    expect(problems.some((p) => p.startsWith('HTTP_PORT='))).toBe(true);
    expect(problems).toContain('FACILITATOR_URL="": required when SETTLEMENT=remote');
    expect(problems).toContain('PAYMENT_PAY_TO="": required when SETTLEMENT=remote');
  });

  it('self needs PAYMENT_SETTLER_KEY, PAYMENT_RPC_URL and PAYMENT_PAY_TO; an invalid one is reported once', () => {
    const problems = problemsOf({ SETTLEMENT: 'self', PAYMENT_SETTLER_KEY: '0x1234' });
    expect(problems.filter((p) => p.startsWith('PAYMENT_SETTLER_KEY='))).toHaveLength(1);
    expect(problems).toContain('PAYMENT_RPC_URL="": required when SETTLEMENT=self');
    expect(problems).toContain('PAYMENT_PAY_TO="": required when SETTLEMENT=self');
  });

  it('accepts a complete remote and self configuration', () => {
    const payTo = '0x1111111111111111111111111111111111111111';
    expect(
      loadConfig({ SETTLEMENT: 'remote', FACILITATOR_URL: 'https://x402.org/facilitator', PAYMENT_PAY_TO: payTo })
        .FACILITATOR_URL,
    ).toBe('https://x402.org/facilitator');
    const self = loadConfig({
      SETTLEMENT: 'self',
      PAYMENT_SETTLER_KEY: `0x${'ab'.repeat(32)}`,
      PAYMENT_RPC_URL: 'https://mainnet.base.org',
      PAYMENT_PAY_TO: payTo,
    });
    expect(self.SETTLEMENT).toBe('self');
  });

  it('rejects malformed payment values', () => {
    const problems = problemsOf({ PAYMENT_NETWORK: 'base', PAYMENT_ASSET: 'usdc', PAYMENT_PAY_TO: '0x12' });
    for (const name of ['PAYMENT_NETWORK', 'PAYMENT_ASSET', 'PAYMENT_PAY_TO'])
      expect(problems.some((p) => p.startsWith(`${name}=`))).toBe(true);
  });
});
