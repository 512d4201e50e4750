/**
 * A hardhat@2 JSON-RPC node (EDR engine, shipped in npm) as a child process on
 * 127.0.0.1, on a port the node picks itself (`--port 0`, read back from its
 * banner: no free-port race), with viem clients around it. Product code: the
 * payment dev chain (api/dev-chain/dev-chain.ts) runs on it, and the tests'
 * devchain helper (test/helpers/devchain.ts) re-exports it. Its config is
 * written into a temp dir; accounts are either given private keys or derived
 * from hardhat's public test mnemonic. Nothing here is payment-specific.
 */
import { base } from 'viem/chains';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  toHex,
  type Address,
  type Chain,
  type Hex,
  type HttpTransport,
  type PrivateKeyAccount,
  type PublicClient,
  type TestClient,
  type WalletClient,
} from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';

/** Hardhat's default mnemonic: public, never use these keys anywhere real. */
export const DEVCHAIN_MNEMONIC = 'test test test test test test test test test test test junk';

/** Multicall3's address on every chain that has it (Base included). */
/** Multicall3's canonical address, where the node installs it (viem's chain data, as the settler reads it). */
export const MULTICALL3_ADDRESS: Address = base.contracts.multicall3.address;

export interface HardhatNodeOptions {
  /** Default 31337 (hardhat's). */
  chainId?: number;
  /** Mine a block for every transaction. Default true. */
  automine?: boolean;
  /** Also mine a block every this many ms (interval mining), e.g. to emulate Base's 2 s blocks. Default: off. */
  blockIntervalMs?: number;
  /**
   * Let consecutive blocks share a timestamp (hardhat's `allowBlocksWithSameTimestamp`): block time then
   * follows the wall clock under bursts, instead of moving at least 1 s ahead per automined block. Default false.
   */
  allowBlocksWithSameTimestamp?: boolean;
  /** Funded accounts derived from DEVCHAIN_MNEMONIC. Default 10. Ignored when `accountKeys` is given. */
  accounts?: number;
  /** Fund exactly these private keys instead of the mnemonic's (e.g. fresh random keys). */
  accountKeys?: Hex[];
  /** Balance of each account in ETH. Default 10000. */
  balanceEth?: number;
  /** Lift EIP-170's 24 KB code size limit (Uniswap's NonfungiblePositionManager is ~25 KB). Default false. */
  allowUnlimitedContractSize?: boolean;
  /** Gas limit of every block; default: hardhat's own (60 M). */
  blockGasLimit?: number;
  /** Hardhat hardfork name; default: hardhat's own default. */
  hardfork?: string;
  /** Polling interval of the returned viem clients (watchers, waitForTransactionReceipt). Default 100 ms. */
  pollingIntervalMs?: number;
  /** How long to wait for the node to answer. Default 30 s. */
  startTimeoutMs?: number;
}

export interface DevAccount {
  address: Address;
  privateKey: Hex;
  account: PrivateKeyAccount;
}

export interface HardhatNode {
  url: string;
  chain: Chain;
  chainId: number;
  publicClient: PublicClient<HttpTransport, Chain>;
  /** Signs with accounts[0] locally (viem), so it behaves like a real wallet, not the node's unlocked accounts. */
  walletClient: WalletClient<HttpTransport, Chain, PrivateKeyAccount>;
  /** hardhat_* / evm_* helpers (mine, setCode, setStorageAt, snapshot, impersonate...). */
  testClient: TestClient<'hardhat', HttpTransport, Chain>;
  accounts: DevAccount[];
  /** Wall time from spawn to the first answered RPC call. */
  startMs: number;
  /** Last ~64 KB of the node's stdout/stderr, for failure messages. */
  output(): string;
  /** A wallet client for another account (index into `accounts`). */
  walletFor(index: number): WalletClient<HttpTransport, Chain, PrivateKeyAccount>;
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);
const OUTPUT_LIMIT = 64 * 1024;

export async function startHardhatNode(options: HardhatNodeOptions = {}): Promise<HardhatNode> {
  const chainId = options.chainId ?? 31337;
  const accountCount = options.accounts ?? 10;
  const balanceWei = BigInt(Math.round((options.balanceEth ?? 10000) * 1e6)) * 10n ** 12n;
  const keys: Hex[] =
    options.accountKeys ??
    Array.from({ length: accountCount }, (_, addressIndex) => {
      const key = mnemonicToAccount(DEVCHAIN_MNEMONIC, { addressIndex }).getHdKey().privateKey;
      if (!key) throw new Error('could not derive a private key');
      return toHex(key);
    });
  const accounts: DevAccount[] = keys.map((privateKey) => {
    const account = privateKeyToAccount(privateKey);
    return { address: account.address, privateKey, account };
  });

  const dir = await mkdtemp(join(tmpdir(), 'devchain-'));
  const network = {
    chainId,
    allowUnlimitedContractSize: options.allowUnlimitedContractSize ?? false,
    ...(options.hardfork ? { hardfork: options.hardfork } : {}),
    ...(options.blockGasLimit ? { blockGasLimit: options.blockGasLimit } : {}),
    mining: { auto: options.automine ?? true, interval: options.blockIntervalMs ?? 0 },
    allowBlocksWithSameTimestamp: options.allowBlocksWithSameTimestamp ?? false,
    accounts: accounts.map((a) => ({ privateKey: a.privateKey, balance: balanceWei.toString() })),
  };
  const config = {
    networks: { hardhat: network },
    paths: { root: dir, cache: join(dir, 'cache'), artifacts: join(dir, 'artifacts'), sources: join(dir, 'contracts') },
  };
  const configFile = join(dir, 'hardhat.config.cjs');
  await writeFile(configFile, `module.exports = ${JSON.stringify(config, null, 2)};\n`);

  // Hardhat refuses to run from a directory that has no local hardhat (HH12), so
  // the child runs where hardhat is installed and reads its config from the temp dir.
  const hardhatDir = dirname(require.resolve('hardhat/package.json'));
  const cli = join(hardhatDir, 'internal', 'cli', 'bootstrap.js');
  const cwd = dirname(dirname(hardhatDir));

  const t0 = performance.now();
  const env: NodeJS.ProcessEnv = { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', DO_NOT_TRACK: '1' };
  delete env.NODE_OPTIONS; // the test runner's loaders are of no use to the node and slow its start
  const child = spawn(
    process.execPath,
    [cli, 'node', '--hostname', '127.0.0.1', '--port', '0', '--config', configFile],
    {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const append = (d: Buffer) => {
    out += d.toString();
    if (out.length > OUTPUT_LIMIT * 2) out = out.slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  let url: string;
  try {
    url = await waitForBanner(child, () => out, options.startTimeoutMs ?? 30000);
    await waitForRpc(url, chainId, options.startTimeoutMs ?? 30000);
  } catch (err) {
    await stop();
    throw err;
  }
  const startMs = Math.round(performance.now() - t0);

  const chain = defineChain({
    id: chainId,
    name: `devchain-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
    testnet: true,
  });
  const pollingInterval = options.pollingIntervalMs ?? 100;
  const transport = http(url, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval });
  const walletFor = (index: number) => {
    const a = accounts[index];
    if (!a) throw new Error(`no devchain account ${index}`);
    return createWalletClient({ chain, transport, account: a.account, pollingInterval });
  };
  const testClient = createTestClient({ chain, transport, mode: 'hardhat', pollingInterval });

  return {
    url,
    chain,
    chainId,
    publicClient,
    walletClient: walletFor(0),
    testClient,
    accounts,
    startMs,
    output: () => out,
    walletFor,
    stop,
  };
}

/**
 * Puts Multicall3 at its canonical address (hardhat_setCode), so viem's
 * multicall works on the devchain as it does on Base. The bytecode is the
 * creation code viem itself embeds for deployless multicalls (not exported by
 * viem's public entry points, hence read from its file); an eth_call of it
 * returns the runtime code.
 */
export async function installMulticall3(devchain: Pick<HardhatNode, 'publicClient' | 'testClient'>): Promise<Address> {
  const file = join(dirname(require.resolve('viem/package.json')), '_esm', 'constants', 'contracts.js');
  const creation = /multicall3Bytecode\s*=\s*'(0x[0-9a-fA-F]+)'/.exec(readFileSync(file, 'utf8'))?.[1] as
    Hex | undefined;
  if (!creation) throw new Error(`Multicall3 bytecode not found in ${file} (viem's layout changed?)`);
  const { data: runtime } = await devchain.publicClient.call({ data: creation });
  if (!runtime || runtime === '0x') throw new Error('Multicall3 creation code returned no runtime code');
  await devchain.testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: runtime });
  return MULTICALL3_ADDRESS;
}

async function waitForBanner(child: ChildProcess, output: () => string, timeoutMs: number): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const m = /JSON-RPC server at (http:\/\/127\.0\.0\.1:\d+)\//.exec(output());
    if (m?.[1]) return m[1];
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`hardhat node exited (${child.exitCode ?? child.signalCode}):\n${output().slice(-4000)}`);
    if (Date.now() > until)
      throw new Error(`hardhat node did not start within ${timeoutMs} ms:\n${output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function waitForRpc(url: string, chainId: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      const body = (await res.json()) as { result?: string };
      if (body.result !== undefined) {
        if (Number(body.result) !== chainId)
          throw new Error(`devchain answers chainId ${Number(body.result)}, expected ${chainId}`);
        return;
      }
      last = JSON.stringify(body);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('devchain answers')) throw err;
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`devchain at ${url} did not answer within ${timeoutMs} ms: ${last}`);
}
