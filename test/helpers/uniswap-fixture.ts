/**
 * Real Uniswap v3 on a devchain, deployed with viem from the npm packages'
 * compiled artifacts: UniswapV3Factory (@uniswap/v3-core), NonfungiblePositionManager,
 * QuoterV2 and SwapRouter (@uniswap/v3-periphery), one pool per requested pair,
 * initialised at a chosen price and given full-range liquidity through the
 * position manager (optionally a second, concentrated position around the price).
 *
 * Test tokens: the Uniswap packages ship no test ERC20 (v3-core's TestERC20 is
 * not in its npm artifacts), so the tokens are OpenZeppelin 3.4's
 * ERC20PresetMinterPauser, whose compiled artifact is installed with
 * @uniswap/v3-periphery (its dependency @openzeppelin/contracts@3.4.2-solc-0.7).
 * That preset always has 18 decimals; the 6-decimal test USDC gets its
 * `_decimals` storage byte rewritten with hardhat_setStorageAt right after
 * deployment (checked by reading `decimals()` back).
 *
 * NonfungiblePositionManager's bytecode exceeds EIP-170's 24 KB limit (Uniswap
 * deploys it with the optimizer settings of its own repo): the devchain needs
 * `allowUnlimitedContractSize: true`.
 */
import { getAddress, maxUint256, type Abi, type Address, type Hash, type Hex } from 'viem';
import UniswapV3FactoryArtifact from '@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json' with { type: 'json' };
import NonfungiblePositionManagerArtifact from '@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json' with { type: 'json' };
import QuoterV2Artifact from '@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json' with { type: 'json' };
import SwapRouterArtifact from '@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json' with { type: 'json' };
import ERC20PresetArtifact from '@openzeppelin/contracts/build/contracts/ERC20PresetMinterPauser.json' with { type: 'json' };
import type { ChainSpec, PoolSpec, TokenSpec } from '../../core/markets/pairs.js';
import { uniswapV3FactoryAbi, uniswapV3PoolAbi } from '../../ingest/dex/abis.js';
import { priceToSqrtPriceX96, sortsBefore, toRawAmount } from '../../ingest/dex/uniswap-v3-pricing.js';
import { installMulticall3, type Devchain } from './devchain.js';

const erc20Abi = ERC20PresetArtifact.abi as Abi;
const positionManagerAbi = NonfungiblePositionManagerArtifact.abi as Abi;
const swapRouterAbi = SwapRouterArtifact.abi as Abi;

const TICK_SPACING: Record<number, number> = { 500: 10, 3000: 60, 10000: 200 };
const MAX_TICK = 887272;
const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000';

export interface FixturePoolOptions {
  /** Catalogue pair, e.g. `ETH/USD`. */
  pair: string;
  /** Base token symbol, e.g. `WETH`; a `WETH` base becomes the chain's WETH (gas pricing). */
  baseSymbol: string;
  baseDecimals: number;
  /** USDC per base token at initialisation. */
  price: number | string;
  /** Fee tier in hundredths of a bip: 500, 3000 or 10000. Default 500. */
  fee?: number;
  /** Force the base token below (true) or above (false) USDC's address; default: as deployed. */
  baseIsToken0?: boolean;
  /** Full-range liquidity: USD value deposited on each side. Default 5,000,000. */
  liquidityUsdPerSide?: number;
  /**
   * A second, concentrated position around the initial price (ticks
   * [tick - halfWidthTicks, tick + halfWidthTicks], aligned to the spacing),
   * up to `liquidityUsdPerSide` USD of each token: swaps that leave it cross
   * initialized ticks, so the pool's depth is not one constant-liquidity range.
   */
  concentrated?: { halfWidthTicks: number; liquidityUsdPerSide: number };
  /** Default `uniswap_v3_base`. */
  venue?: string;
}

export interface UniswapFixtureOptions {
  pools: FixturePoolOptions[];
  /** Put Multicall3 at its canonical address first. Default true. */
  multicall3?: boolean;
}

export interface FixturePool {
  pair: string;
  /** What the ingestor gets: the catalogue entry, pool address left out (resolved through the factory). */
  spec: PoolSpec;
  address: Address;
  baseIsToken0: boolean;
  fee: number;
  /** Tick bounds of the concentrated position, when one was minted. */
  concentratedTicks?: { lower: number; upper: number };
}

export interface UniswapFixture {
  usdc: TokenSpec;
  weth: TokenSpec;
  factory: Address;
  quoterV2: Address;
  swapRouter: Address;
  positionManager: Address;
  multicall3: Address | null;
  pools: FixturePool[];
  chainSpec: ChainSpec;
  /** Transactions sent to set everything up. */
  transactions: number;
  deployMs: number;
  /**
   * Swaps through SwapRouter from accounts[0]: `buy` spends `amount` USDC for
   * base (price goes up), `sell` spends `amount` base tokens (price goes down).
   */
  swap(pair: string, side: 'buy' | 'sell', amount: number | string): Promise<{ hash: Hash; blockNumber: bigint }>;
}

export async function deployUniswapFixture(
  devchain: Devchain,
  options: UniswapFixtureOptions,
): Promise<UniswapFixture> {
  const t0 = performance.now();
  const { publicClient, walletClient } = devchain;
  const me = walletClient.account.address;
  let transactions = 0;

  /** With automine the transaction is mined when eth_sendRawTransaction returns; wait only if it is not. */
  const confirm = async (hash: Hash) => {
    transactions += 1;
    const receipt = await publicClient
      .getTransactionReceipt({ hash })
      .catch(() => publicClient.waitForTransactionReceipt({ hash }));
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };
  const deploy = async (artifact: { abi: unknown; bytecode: string }, args: unknown[] = []): Promise<Address> => {
    const hash = await walletClient.deployContract({
      abi: artifact.abi as Abi,
      bytecode: artifact.bytecode as Hex,
      args,
    });
    const receipt = await confirm(hash);
    if (!receipt.contractAddress) throw new Error('deployment without contract address');
    return getAddress(receipt.contractAddress);
  };
  const write = async (address: string, abi: Abi, functionName: string, args: unknown[]) =>
    confirm(await walletClient.writeContract({ address: address as Address, abi, functionName, args }));

  const deployToken = async (symbol: string, decimals: number): Promise<TokenSpec> => {
    const address = await deploy(ERC20PresetArtifact, [`Test ${symbol}`, symbol]);
    if (decimals !== 18) await setTokenDecimals(devchain, address, decimals);
    return { symbol, address, decimals };
  };

  const multicall3 = options.multicall3 === false ? null : await installMulticall3(devchain);

  const usdc = await deployToken('USDC', 6);
  const tokens = new Map<string, TokenSpec>();
  for (const p of options.pools) {
    if (tokens.has(p.baseSymbol)) continue;
    // Redeploy until the address lands on the requested side of USDC (each try is a new address; ~2 tries).
    let token = await deployToken(p.baseSymbol, p.baseDecimals);
    for (
      let tries = 1;
      p.baseIsToken0 !== undefined && sortsBefore(token.address, usdc.address) !== p.baseIsToken0;
      tries++
    ) {
      if (tries >= 16) throw new Error(`could not place ${p.baseSymbol} on the requested side of USDC`);
      token = await deployToken(p.baseSymbol, p.baseDecimals);
    }
    tokens.set(p.baseSymbol, token);
  }
  const weth = tokens.get('WETH') ?? (await deployToken('WETH', 18));

  const factory = await deploy(UniswapV3FactoryArtifact);
  // The WETH9 argument only matters for native-ETH wrapping, which these tests never do.
  const positionManager = await deploy(NonfungiblePositionManagerArtifact, [factory, weth.address, ZERO_ADDRESS]);
  const quoterV2 = await deploy(QuoterV2Artifact, [factory, weth.address]);
  const swapRouter = await deploy(SwapRouterArtifact, [factory, weth.address]);

  // Fund accounts[0] generously and approve the position manager and the router once per token.
  for (const token of [usdc, ...tokens.values()]) {
    await write(token.address, erc20Abi, 'mint', [me, toRawAmount(1e12, token.decimals)]);
    await write(token.address, erc20Abi, 'approve', [positionManager, maxUint256]);
    await write(token.address, erc20Abi, 'approve', [swapRouter, maxUint256]);
  }

  const pools: FixturePool[] = [];
  for (const p of options.pools) {
    const base = tokens.get(p.baseSymbol);
    if (!base) throw new Error(`unknown base ${p.baseSymbol}`);
    const fee = p.fee ?? 500;
    const spacing = TICK_SPACING[fee];
    if (spacing === undefined) throw new Error(`fee tier ${fee} is not enabled in UniswapV3Factory`);
    const baseIsToken0 = sortsBefore(base.address, usdc.address);
    const [token0, token1] = baseIsToken0 ? [base, usdc] : [usdc, base];
    const sqrtPriceX96 = priceToSqrtPriceX96(p.price, {
      baseIsToken0,
      baseDecimals: base.decimals,
      quoteDecimals: usdc.decimals,
    });
    await write(positionManager, positionManagerAbi, 'createAndInitializePoolIfNecessary', [
      token0.address,
      token1.address,
      fee,
      sqrtPriceX96,
    ]);

    const liquidityUsd = p.liquidityUsdPerSide ?? 5_000_000;
    const baseAmount = toRawAmount(liquidityUsd / Number(p.price), base.decimals);
    const quoteAmount = toRawAmount(liquidityUsd, usdc.decimals);
    const tickUpper = Math.floor(MAX_TICK / spacing) * spacing;
    await write(positionManager, positionManagerAbi, 'mint', [
      {
        token0: token0.address,
        token1: token1.address,
        fee,
        tickLower: -tickUpper,
        tickUpper,
        amount0Desired: baseIsToken0 ? baseAmount : quoteAmount,
        amount1Desired: baseIsToken0 ? quoteAmount : baseAmount,
        amount0Min: 0n,
        amount1Min: 0n,
        recipient: me,
        deadline: 2n ** 48n,
      },
    ]);
    const address = (await publicClient.readContract({
      address: factory,
      abi: uniswapV3FactoryAbi,
      functionName: 'getPool',
      args: [base.address, usdc.address, fee],
    })) as Address;
    let concentratedTicks: { lower: number; upper: number } | undefined;
    if (p.concentrated) {
      const [, tick] = (await publicClient.readContract({
        address,
        abi: uniswapV3PoolAbi,
        functionName: 'slot0',
      })) as readonly [bigint, number];
      const lower = Math.floor((tick - p.concentrated.halfWidthTicks) / spacing) * spacing;
      const upper = Math.ceil((tick + p.concentrated.halfWidthTicks) / spacing) * spacing;
      const usd = p.concentrated.liquidityUsdPerSide;
      await write(positionManager, positionManagerAbi, 'mint', [
        {
          token0: token0.address,
          token1: token1.address,
          fee,
          tickLower: lower,
          tickUpper: upper,
          amount0Desired: baseIsToken0
            ? toRawAmount(usd / Number(p.price), base.decimals)
            : toRawAmount(usd, usdc.decimals),
          amount1Desired: baseIsToken0
            ? toRawAmount(usd, usdc.decimals)
            : toRawAmount(usd / Number(p.price), base.decimals),
          amount0Min: 0n,
          amount1Min: 0n,
          recipient: me,
          deadline: 2n ** 48n,
        },
      ]);
      concentratedTicks = { lower, upper };
    }
    pools.push({
      pair: p.pair,
      address: getAddress(address),
      baseIsToken0,
      fee,
      spec: {
        venue: p.venue ?? 'uniswap_v3_base',
        protocol: 'uniswap_v3',
        base_token: base,
        quote_token: usdc,
        fee_tier: fee,
      },
      ...(concentratedTicks ? { concentratedTicks } : {}),
    });
  }

  const chainSpec: ChainSpec = {
    chain_id: devchain.chainId,
    name: devchain.chain.name,
    usdc,
    weth,
    uniswap_v3: { factory, quoter_v2: quoterV2 },
  };

  const swap = async (pair: string, side: 'buy' | 'sell', amount: number | string) => {
    const pool = pools.find((p) => p.pair === pair);
    if (!pool) throw new Error(`no fixture pool for ${pair}`);
    const base = pool.spec.base_token;
    const [tokenIn, tokenOut] = side === 'buy' ? [usdc, base] : [base, usdc];
    const receipt = await write(swapRouter, swapRouterAbi, 'exactInputSingle', [
      {
        tokenIn: tokenIn.address,
        tokenOut: tokenOut.address,
        fee: pool.fee,
        recipient: me,
        deadline: 2n ** 48n,
        amountIn: toRawAmount(amount, tokenIn.decimals),
        amountOutMinimum: 0n,
        sqrtPriceLimitX96: 0n,
      },
    ]);
    return { hash: receipt.transactionHash, blockNumber: receipt.blockNumber };
  };

  return {
    usdc,
    weth,
    factory,
    quoterV2,
    swapRouter,
    positionManager,
    multicall3,
    pools,
    chainSpec,
    transactions,
    deployMs: Math.round(performance.now() - t0),
    swap,
  };
}

/**
 * Rewrites OpenZeppelin 3.4 ERC20's `uint8 _decimals` in place. Its slot
 * depends on the preset's inheritance (AccessControl first), so it is found by
 * value: the only low slot holding 18 in its lowest byte (packed with
 * Pausable's `_paused`, false). Verified through `decimals()`.
 */
async function setTokenDecimals(devchain: Devchain, token: Address, decimals: number): Promise<void> {
  const { publicClient, testClient } = devchain;
  const candidates: { slot: number; value: bigint }[] = [];
  for (let slot = 0; slot < 16; slot++) {
    const raw = await publicClient.getStorageAt({ address: token, slot: `0x${slot.toString(16)}` });
    const value = BigInt(raw ?? '0x0');
    if ((value & 0xffn) === 18n && value < 1n << 16n) candidates.push({ slot, value });
  }
  if (candidates.length !== 1)
    throw new Error(`cannot locate _decimals of ${token}: ${candidates.length} candidate slots`);
  const { slot, value } = candidates[0]!;
  const patched = (value & ~0xffn) | BigInt(decimals);
  await testClient.setStorageAt({
    address: token,
    index: `0x${slot.toString(16)}`,
    value: `0x${patched.toString(16).padStart(64, '0')}`,
  });
  const read = await publicClient.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' });
  if (Number(read) !== decimals)
    throw new Error(`decimals of ${token} is ${String(read)} after patching, expected ${decimals}`);
}
