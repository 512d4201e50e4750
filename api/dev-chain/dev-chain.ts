/**
 * The payment dev chain (SETTLEMENT=devchain, the default when nothing is
 * configured): a local hardhat@2 node on 127.0.0.1, Multicall3 at its canonical
 * address (x402's facilitator diagnoses failed simulations through it, e.g.
 * `invalid_exact_evm_nonce_already_used`), an EIP-3009 test USDC deployed from
 * the committed artifact (never compiled at start-up), and a demo payer funded
 * with test USDC.
 *
 * Two ways of mining (DEVCHAIN_MINING):
 * - `auto` (default): every transaction is mined the instant it is sent, and
 *   a block every `blockIntervalMs` (2 s) beside them, so `latest` follows the
 *   wall clock while idle. Fast for tests and demos, but no settlement ever
 *   waits for a block, which Base never does.
 * - `interval`: as on Base, blocks only every `blockIntervalMs`; a sent
 *   transaction waits in the node's mempool for the next block. Set-up
 *   (Multicall3, the token, the demo payer's funding) still runs automined,
 *   so start-up does not wait a block per transaction; then automine is
 *   switched off (`evm_setAutomine(false)`) and interval mining restarted
 *   (`evm_setIntervalMining`). hardhat@2's mempool holds any number of pending
 *   transactions per sender (queued by nonce; no per-sender cap to configure),
 *   so hundreds of in-flight settlements from one settler key wait for their
 *   block as they would on Base.
 * In both modes the block gas limit is Base's (BASE_BLOCK_GAS_LIMIT), so a
 * block holds what a Base block holds, and same-second blocks are allowed, so
 * a burst of automined settlements does not push block time ahead of the wall
 * clock (by default hardhat adds at least 1 s per block). Authorizations are
 * checked against block time on chain, so a chain that lags or leads the wall
 * clock refuses honest payers.
 *
 * The chain id is the configured network's (eip155:8453 by default), so 402
 * challenges stay spec-exact (`network: eip155:8453`) while the asset is the
 * test token's own address. Its signatures can never move real USDC: the
 * EIP-712 domain binds them to that address. Every key is fresh per start
 * (deployer, settler, payer unless PAYMENT_DEMO_PAYER_KEY is set, payee unless
 * PAYMENT_PAY_TO is set); none of hardhat's well-known keys is used.
 */
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { erc20Abi, getAddress, type Abi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { installMulticall3, startHardhatNode, type HardhatNode } from './hardhat-node.js';

export interface TestUsdcArtifact {
  contractName: 'TestUSDC';
  compiler: string;
  sourceSha256: string;
  abi: Abi;
  bytecode: Hex;
}

let artifactCache: TestUsdcArtifact | undefined;

/** The committed TestUSDC artifact (built by scripts/build-test-usdc.ts). */
export function testUsdcArtifact(): TestUsdcArtifact {
  artifactCache ??= JSON.parse(
    readFileSync(new URL('./contracts/TestUSDC.json', import.meta.url), 'utf8'),
  ) as TestUsdcArtifact;
  return artifactCache;
}

/** DEVCHAIN_MINING: a block per transaction (plus the interval's), or blocks only on the interval (as on Base). */
export type DevChainMining = 'auto' | 'interval';

/**
 * Base Mainnet's full block gas budget, ~400 M gas ("Current limits" in
 * https://docs.base.org/base-chain/network-information/throughput-and-limits,
 * read 2026-11: full block gas budget ~400M gas; per-transaction maximum
 * 16,777,216 gas (EIP-7825), which hardhat's default hardfork (Osaka) also
 * enforces). hardhat's own default is 60 M, which would cap a 2 s block at a
 * fraction of what Base takes in one.
 */
export const BASE_BLOCK_GAS_LIMIT = 400_000_000;

export interface DevChainOptions {
  /** Chain id of the node; default 8453 (Base), so challenges carry `eip155:8453`. */
  chainId?: number;
  /** Demo payer key (PAYMENT_DEMO_PAYER_KEY); default: a fresh random key. */
  payerKey?: Hex;
  /** Receiver of payments (PAYMENT_PAY_TO); default: a fresh random address. */
  payTo?: Address;
  /** Test USDC minted to the demo payer, in atomic units (6 decimals). Default 1,000 USDC. */
  payerFundingAtomic?: bigint;
  /** viem polling interval for receipts; low on a local automining chain. Default 25 ms. */
  pollingIntervalMs?: number;
  /** `auto` (default): automine plus interval blocks; `interval`: blocks only every `blockIntervalMs`. */
  mining?: DevChainMining;
  /** Interval mining, ms (Base: 2 s). Default 2000. */
  blockIntervalMs?: number;
  startTimeoutMs?: number;
}

export interface DevChain {
  rpcUrl: string;
  chainId: number;
  /** CAIP-2 id, e.g. `eip155:8453`. */
  network: `eip155:${number}`;
  /** The deployed EIP-3009 test USDC. */
  usdc: Address;
  payTo: Address;
  payerKey: Hex;
  payer: Address;
  /** Pays gas for settlements (the in-process facilitator's wallet). */
  settlerKey: Hex;
  settler: Address;
  /** Deployed the token and owns it (the only minter). */
  deployer: Address;
  /** How blocks are mined (after set-up, which is always automined). */
  mining: DevChainMining;
  /** Block interval, ms. */
  blockMs: number;
  /** ms from spawn to the first answered RPC call. */
  startMs: number;
  /** ms for Multicall3 + token deployment + funding. */
  deployMs: number;
  node: HardhatNode;
  /** Mints test USDC (signed by the deployer, the token's owner); resolves once mined (in `interval` mining: at the next block). */
  mint(to: Address, amountAtomic: bigint): Promise<void>;
  /** Mints `amountAtomic` to each of `recipients`: all sent first, then their receipts awaited (one block in `interval` mining). */
  mintEach(recipients: readonly Address[], amountAtomic: bigint): Promise<void>;
  balanceOf(owner: Address): Promise<bigint>;
  stop(): Promise<void>;
}

const DEFAULT_FUNDING = 1_000n * 1_000_000n;

export async function startDevChain(options: DevChainOptions = {}): Promise<DevChain> {
  const chainId = options.chainId ?? 8453;
  const mining = options.mining ?? 'auto';
  const blockMs = options.blockIntervalMs ?? 2000;
  const deployerKey = generatePrivateKey();
  const settlerKey = generatePrivateKey();
  const payerKey = options.payerKey ?? generatePrivateKey();
  const payTo = options.payTo ? getAddress(options.payTo) : privateKeyToAccount(generatePrivateKey()).address;
  const payer = privateKeyToAccount(payerKey).address;

  // Only the deployer and the settler hold ETH: the payer signs gasless EIP-3009
  // authorizations. Separate keys keep the settler's nonces to the facilitator alone.
  const node = await startHardhatNode({
    chainId,
    accountKeys: [deployerKey, settlerKey],
    balanceEth: 1000,
    blockIntervalMs: blockMs,
    blockGasLimit: BASE_BLOCK_GAS_LIMIT,
    allowBlocksWithSameTimestamp: true,
    pollingIntervalMs: options.pollingIntervalMs ?? 25,
    ...(options.startTimeoutMs !== undefined ? { startTimeoutMs: options.startTimeoutMs } : {}),
  });
  try {
    const t0 = performance.now();
    const { publicClient, walletClient } = node;
    await installMulticall3(node);
    const artifact = testUsdcArtifact();
    const deployHash = await walletClient.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode });
    const receipt = await publicClient.waitForTransactionReceipt({ hash: deployHash });
    if (receipt.status !== 'success' || !receipt.contractAddress)
      throw new Error(`TestUSDC deployment failed (${receipt.status})`);
    const usdc = getAddress(receipt.contractAddress);

    // Sent one after the other (each send reads the pending nonce), then awaited together: one block for all.
    const mintEach = async (recipients: readonly Address[], amountAtomic: bigint) => {
      const hashes: Hex[] = [];
      for (const to of recipients)
        hashes.push(
          await walletClient.writeContract({
            address: usdc,
            abi: artifact.abi,
            functionName: 'mint',
            args: [to, amountAtomic],
          }),
        );
      const receipts = await Promise.all(hashes.map((hash) => publicClient.waitForTransactionReceipt({ hash })));
      const failed = receipts.find((r) => r.status !== 'success');
      if (failed) throw new Error(`TestUSDC mint failed (${failed.status} in ${failed.transactionHash})`);
    };
    await mintEach([payer], options.payerFundingAtomic ?? DEFAULT_FUNDING);
    if (mining === 'interval') {
      // From here on, as on Base: a transaction waits for the next block; restarting interval mining
      // starts its clock now.
      await node.testClient.setAutomine(false);
      // In ms, as hardhat takes it (viem's setIntervalMining takes seconds).
      await node.testClient.request({ method: 'evm_setIntervalMining', params: [blockMs] });
    }
    const deployMs = Math.round(performance.now() - t0);

    return {
      rpcUrl: node.url,
      chainId,
      network: `eip155:${chainId}`,
      usdc,
      payTo,
      payerKey,
      payer,
      settlerKey,
      settler: privateKeyToAccount(settlerKey).address,
      deployer: privateKeyToAccount(deployerKey).address,
      mining,
      blockMs,
      startMs: node.startMs,
      deployMs,
      node,
      mint: (to, amountAtomic) => mintEach([to], amountAtomic),
      mintEach,
      balanceOf: (owner) =>
        publicClient.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [owner] }),
      stop: () => node.stop(),
    };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

/** What `$DATA_DIR/devchain.json` holds for the bundled client (`npm run pay`). */
export interface DevChainInfo {
  rpc_url: string;
  chain_id: number;
  network: string;
  asset: Address;
  asset_name: string;
  asset_version: string;
  pay_to: Address;
  payer: Address;
  /** A throwaway key that only ever holds test USDC on this local chain (the start log names it `payer_key` too). */
  payer_key: Hex;
  /**
   * The settler's throwaway key on this local chain: more api replicas settle on the same chain with the same key
   * (SETTLEMENT=self, the Redis nonce lease orders their transactions), as `npm run cluster -- up --api N` starts them.
   */
  settler_key: Hex;
  /** Where the server that runs this chain answers, once it listens (for `npm run pay`). */
  api_url?: string;
  started_at: string;
  pid: number;
}

export const devChainInfoPath = (dataDir: string) => join(dataDir, 'devchain.json');

/** Writes the demo payer's facts for `npm run pay` (file mode 0600: it holds a key). */
export async function writeDevChainInfo(dataDir: string, info: DevChainInfo): Promise<string> {
  const file = devChainInfoPath(dataDir);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return file;
}

export async function readDevChainInfo(dataDir: string): Promise<DevChainInfo> {
  return JSON.parse(await readFile(devChainInfoPath(dataDir), 'utf8')) as DevChainInfo;
}

/** Adds the server's URL to `$DATA_DIR/devchain.json` once it listens (only if this process wrote the file). */
export async function announceApiUrl(dataDir: string, pid: number, url: string): Promise<void> {
  const info = await readDevChainInfo(dataDir);
  if (info.pid === pid)
    await writeDevChainInfo(dataDir, {
      ...info,
      api_url: url.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://127.0.0.1:'),
    });
}

/** Removes `$DATA_DIR/devchain.json` if it was written by process `pid`. */
export async function removeDevChainInfo(dataDir: string, pid: number): Promise<void> {
  const info = await readDevChainInfo(dataDir);
  if (info.pid === pid) await rm(devChainInfoPath(dataDir), { force: true });
}
