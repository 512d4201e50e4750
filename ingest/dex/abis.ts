/**
 * ABIs the DEX ingestor calls.
 *
 * Uniswap v3 and ERC-20 ABIs come from the compiled artifacts the npm packages
 * ship (@uniswap/v3-core, @uniswap/v3-periphery): nothing hand-copied that a
 * package already carries. JSON imports are typed loosely by TypeScript
 * (`type: string`), so they are exposed as viem's `Abi`; callers check the
 * decoded values at run time (see pool-resolver.ts and pool-reader.ts).
 *
 * Aerodrome is the exception: no npm package ships its artifacts, so the few
 * functions read are written out below with the signatures of Aerodrome's
 * `Pool.sol`, `PoolFactory.sol` and `Router.sol` (aerodrome-finance/contracts,
 * deployed on Base). Tests exercise them against a JSON-RPC stand-in only:
 * the real contracts cannot be deployed from npm.
 */
import type { Abi } from 'viem';
import UniswapV3FactoryArtifact from '@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json' with { type: 'json' };
import UniswapV3PoolArtifact from '@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json' with { type: 'json' };
import QuoterV2Artifact from '@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json' with { type: 'json' };
import IERC20MetadataArtifact from '@uniswap/v3-periphery/artifacts/contracts/interfaces/IERC20Metadata.sol/IERC20Metadata.json' with { type: 'json' };

/** `getPool(tokenA, tokenB, fee)`, `createPool`, ... */
export const uniswapV3FactoryAbi = UniswapV3FactoryArtifact.abi as Abi;
/** `slot0()`, `token0()`, `token1()`, `fee()`, `liquidity()`, `swap(...)`, ... */
export const uniswapV3PoolAbi = UniswapV3PoolArtifact.abi as Abi;
/** `quoteExactInputSingle((tokenIn, tokenOut, amountIn, fee, sqrtPriceLimitX96))` -> (amountOut, sqrtPriceX96After, initializedTicksCrossed, gasEstimate). Not a view function: call it with eth_call (simulateContract or multicall). */
export const quoterV2Abi = QuoterV2Artifact.abi as Abi;
/** ERC-20 with `decimals()`, `symbol()`, `name()` (periphery's IERC20Metadata). */
export const erc20MetadataAbi = IERC20MetadataArtifact.abi as Abi;

/**
 * Aerodrome (Velodrome v2 design) pool: a Solidly-style pair with volatile
 * (x*y=k) or stable (x^3*y + y^3*x = k) curve. Hand-written because no npm
 * package ships Aerodrome's artifacts; only the functions the ingestor reads.
 * `getAmountOut` applies the pool fee, like the router does.
 */
export const aerodromePoolAbi = [
  { type: 'function', name: 'token0', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] },
  { type: 'function', name: 'token1', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] },
  { type: 'function', name: 'stable', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'bool' }] },
  {
    type: 'function',
    name: 'getReserves',
    stateMutability: 'view',
    inputs: [],
    outputs: [
      { name: '_reserve0', type: 'uint256' },
      { name: '_reserve1', type: 'uint256' },
      { name: '_blockTimestampLast', type: 'uint256' },
    ],
  },
  {
    type: 'function',
    name: 'getAmountOut',
    stateMutability: 'view',
    inputs: [
      { name: 'amountIn', type: 'uint256' },
      { name: 'tokenIn', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }],
  },
] as const satisfies Abi;

/** Aerodrome PoolFactory: pool lookup and the fee it charges (bps, denominator 10_000). Hand-written for the same reason. */
export const aerodromeFactoryAbi = [
  {
    type: 'function',
    name: 'getPool',
    stateMutability: 'view',
    inputs: [
      { name: 'tokenA', type: 'address' },
      { name: 'tokenB', type: 'address' },
      { name: 'stable', type: 'bool' },
    ],
    outputs: [{ name: '', type: 'address' }],
  },
  {
    type: 'function',
    name: 'getFee',
    stateMutability: 'view',
    inputs: [
      { name: 'pool', type: 'address' },
      { name: '_stable', type: 'bool' },
    ],
    outputs: [{ name: '', type: 'uint256' }],
  },
] as const satisfies Abi;

/** Aerodrome Router: multi-hop quote over routes (from, to, stable, factory). Hand-written; kept for route quotes, the ingestor reads pools directly. */
export const aerodromeRouterAbi = [
  {
    type: 'function',
    name: 'getAmountsOut',
    stateMutability: 'view',
    inputs: [
      { name: 'amountIn', type: 'uint256' },
      {
        name: 'routes',
        type: 'tuple[]',
        components: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'stable', type: 'bool' },
          { name: 'factory', type: 'address' },
        ],
      },
    ],
    outputs: [{ name: 'amounts', type: 'uint256[]' }],
  },
] as const satisfies Abi;
