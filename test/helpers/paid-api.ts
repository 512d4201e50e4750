/**
 * The api role in-process for gateway tests: in-memory bus and queue, x402 on
 * the dev chain (hardhat + test USDC + in-process facilitator), loopback on a
 * free port, the catalogue's default prices. `overrides` picks the store and
 * whatever else a suite needs. Returns the running process, the api role, its
 * URL and the dev chain's demo payer, once the payment gate is ready.
 * `wiring` replaces what the process wires into its roles (e.g. the SKU list).
 */
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { RunningApi } from '../../api/role.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import { startProcess, type ProcessWiring, type RunningProcess } from '../../roles/process.js';
import { testConfig } from './config.js';

export interface PaidApi {
  config: Config;
  proc: RunningProcess;
  api: RunningApi;
  url: string;
  payer: PrivateKeyAccount;
}

export async function startPaidApi(
  dataDir: string,
  overrides: Record<string, string>,
  logger: Logger,
  wiring: ProcessWiring = {},
): Promise<PaidApi> {
  const config = testConfig({
    ROLE: 'api',
    BUS: 'memory',
    QUEUE: 'inprocess',
    SETTLEMENT: 'devchain',
    PAYMENT_REPLAY_STORE: 'memory',
    DATA_DIR: dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    PRICE_OVERRIDES: '',
    ...overrides,
  });
  const proc = await startProcess(config, logger, wiring);
  const api = proc.roles.find((r) => r.name === 'api') as RunningApi;
  await api.payments.core.ready();
  return {
    config,
    proc,
    api,
    url: proc.http.url,
    payer: privateKeyToAccount(api.payments.settlement.devChain!.payerKey),
  };
}
