/**
 * An independent model of a Uniswap v3 swap, for checking the DEX depth
 * search: the pool's state read from the chain (sqrtPriceX96 and tick from
 * slot0, active liquidity, the liquidityNet of each initialized tick the
 * test knows of) stepped through with the whitepaper's formulas in doubles
 * (section 6.2: within a range of liquidity L, token1 in moves sqrt(P) up by
 * dy / L, token0 in moves 1/sqrt(P) up by dx / L; crossing an initialized
 * tick adds or subtracts its liquidityNet). No product code is used, so a
 * wrong quoter search, wrong sizing or wrong price maths in the ingestor
 * cannot be mirrored here.
 */
import type { Address, PublicClient } from 'viem';
import UniswapV3PoolArtifact from '@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json' with { type: 'json' };

const poolAbi = UniswapV3PoolArtifact.abi;
const Q96 = 2 ** 96;

export interface V3State {
  /** sqrt(token1 / token0) in raw units. */
  sqrtP: number;
  tick: number;
  liquidity: number;
  /** Initialized ticks with their liquidityNet, ascending. */
  ticks: { tick: number; liquidityNet: number }[];
  fee: number;
  baseIsToken0: boolean;
  baseDecimals: number;
  quoteDecimals: number;
}

export async function readV3State(
  client: Pick<PublicClient, 'readContract'>,
  pool: Address,
  known: {
    ticks: number[];
    fee: number;
    baseIsToken0: boolean;
    baseDecimals: number;
    quoteDecimals: number;
    blockNumber?: bigint;
  },
): Promise<V3State> {
  const at = known.blockNumber === undefined ? {} : { blockNumber: known.blockNumber };
  const [sqrtPriceX96, tick] = (await client.readContract({
    address: pool,
    abi: poolAbi,
    functionName: 'slot0',
    ...at,
  })) as readonly [bigint, number];
  const liquidity = (await client.readContract({
    address: pool,
    abi: poolAbi,
    functionName: 'liquidity',
    ...at,
  })) as bigint;
  const ticks = [];
  for (const t of [...new Set(known.ticks)].sort((a, b) => a - b)) {
    const info = (await client.readContract({
      address: pool,
      abi: poolAbi,
      functionName: 'ticks',
      args: [t],
      ...at,
    })) as readonly [bigint, bigint, ...unknown[]];
    if (info[0] > 0n) ticks.push({ tick: t, liquidityNet: Number(info[1]) });
  }
  return {
    sqrtP: Number(sqrtPriceX96) / Q96,
    tick,
    liquidity: Number(liquidity),
    ticks,
    fee: known.fee / 1e6,
    baseIsToken0: known.baseIsToken0,
    baseDecimals: known.baseDecimals,
    quoteDecimals: known.quoteDecimals,
  };
}

const sqrtAt = (tick: number) => Math.pow(1.0001, tick / 2);

/**
 * Exact-input swap: `amountIn` raw units of token1 (`oneForZero`, price up)
 * or token0 (price down), fee taken from the input; returns the raw output.
 */
export function swapOut(s: V3State, oneForZero: boolean, amountIn: number): number {
  let remaining = amountIn * (1 - s.fee);
  let sqrtP = s.sqrtP;
  let L = s.liquidity;
  let out = 0;
  let tick = s.tick;
  for (let guard = 0; remaining > 0 && guard < 1000; guard++) {
    const next = oneForZero ? s.ticks.find((t) => t.tick > tick) : [...s.ticks].reverse().find((t) => t.tick <= tick);
    const boundary = next ? sqrtAt(next.tick) : oneForZero ? Infinity : 0;
    if (L <= 0) return out; // no liquidity beyond: the swap stops (the quoter would hit the price limit)
    if (oneForZero) {
      const needed = L * (boundary - sqrtP);
      const used = Math.min(remaining, needed);
      const sqrtNew = sqrtP + used / L;
      out += L * (1 / sqrtP - 1 / sqrtNew);
      remaining -= used;
      sqrtP = sqrtNew;
      if (remaining > 0 && next) {
        L += next.liquidityNet;
        tick = next.tick;
      }
    } else {
      const needed = L * (1 / boundary - 1 / sqrtP);
      const used = Math.min(remaining, needed);
      const sqrtNew = 1 / (1 / sqrtP + used / L);
      out += L * (sqrtP - sqrtNew);
      remaining -= used;
      sqrtP = sqrtNew;
      if (remaining > 0 && next) {
        L -= next.liquidityNet;
        tick = next.tick - 1;
      }
    }
  }
  return out;
}

/** Pool mid, USD per base unit. */
export function midUsd(s: V3State): number {
  const p = s.sqrtP * s.sqrtP; // token1 per token0, raw
  return s.baseIsToken0
    ? p * 10 ** (s.baseDecimals - s.quoteDecimals)
    : (1 / p) * 10 ** (s.baseDecimals - s.quoteDecimals);
}

/** Average execution price (fee included) of a buy of `usd` USD, or of a sell of `usd / mid` base. */
export function avgPrice(s: V3State, side: 'buy' | 'sell', usd: number): number {
  const mid = midUsd(s);
  if (side === 'buy') {
    const usdcRaw = usd * 10 ** s.quoteDecimals;
    const baseRaw = swapOut(s, s.baseIsToken0, usdcRaw); // USDC in: token1 in when base is token0
    return usd / (baseRaw / 10 ** s.baseDecimals);
  }
  const base = usd / mid;
  const usdcRaw = swapOut(s, !s.baseIsToken0, base * 10 ** s.baseDecimals);
  return usdcRaw / 10 ** s.quoteDecimals / base;
}

/** Fee-excluded price impact of a size, bps (the depth search's definition, written again). */
export function impactBps(s: V3State, side: 'buy' | 'sell', usd: number): number {
  const p = avgPrice(s, side, usd);
  const mid = midUsd(s);
  return side === 'buy' ? ((p * (1 - s.fee)) / mid - 1) * 1e4 : (1 - p / ((1 - s.fee) * mid)) * 1e4;
}

/** The size at which `f` (increasing) reaches `target`, by bisection over [lo, hi]. */
export function solveIncreasing(f: (x: number) => number, target: number, lo: number, hi: number): number {
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) <= target) lo = mid;
    else hi = mid;
  }
  return lo;
}
