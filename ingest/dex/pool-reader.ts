/**
 * What the DEX ingestor reads of its pools at block N (every read pinned to
 * N), and the prices it makes of them:
 *  - phase 1, one batch: each ready pool's state (Uniswap v3 `slot0`,
 *    Aerodrome `getReserves`) and its buy quotes (USDC in: `size` USDC per
 *    ladder size), plus the block timestamp (Multicall3's
 *    `getCurrentBlockTimestamp`, else the block header) and, if needed, the
 *    gas-pricing WETH/USDC pool's `slot0`;
 *  - phase 2, one batch: sell quotes (base in: `size / mid` base, sized
 *    exactly from this block's pool price).
 * Quotes: Uniswap through QuoterV2 `quoteExactInputSingle` (a partial fill,
 * the quoter stopping at the price limit when liquidity runs out, is no
 * quote), Aerodrome through the pool's `getAmountOut` with a fixed
 * AERODROME_SWAP_GAS_ESTIMATE (it has no quoter returning gas). A pool whose
 * state cannot be read is skipped for the block (poolFailed); a failed quote
 * is a null step, counted on the pool.
 *  - ladder: per size, `buy_price` = USDC paid / base received and
 *    `sell_price` = USDC received / base sold (pool fee included), null when
 *    the quote failed;
 *  - gas: the quoter's estimate for the smallest size x gas price x ETH/USD.
 */
import { multicall3Abi, numberToHex, type Abi, type Address } from 'viem';
import type { Logger } from '../../core/logger.js';
import type { LadderStep } from '../../core/events/market.js';
import type { ChainSpec } from '../../core/markets/pairs.js';
import { aerodromePoolAbi, quoterV2Abi, uniswapV3PoolAbi } from './abis.js';
import { quoteToBaseAtPrice, reservesMidRatio } from './aerodrome-pricing.js';
import { firstBigint, type Call, type CallResult, type ContractReader, type DexClient } from './contract-reader.js';
import type { EthPricingPool } from './pool-resolver.js';
import { isWethUsdc, poolFailed, type PoolState } from './pool-state.js';
import {
  MAX_SQRT_RATIO,
  MIN_SQRT_RATIO,
  executionPrice,
  quoteToBaseAmount,
  ratioToNumber,
  sqrtPriceX96ToPriceRatio,
  toRawAmount,
} from './uniswap-v3-pricing.js';
import { shortError } from './viem-error.js';

/** Aerodrome has no quoter returning gas: a typical volatile/stable pool swap through its router, documented estimate. */
export const AERODROME_SWAP_GAS_ESTIMATE = 150_000n;

export interface PriceRatio {
  num: bigint;
  den: bigint;
}

/** What phase 1 learnt about a pool at block N. */
export interface PoolSnapshot {
  pool: PoolState;
  mid: PriceRatio;
  /** Uniswap only. */
  sqrtPriceX96?: bigint;
  /** Aerodrome only. */
  reserves?: { base: bigint; quote: bigint };
  buys: Quote[];
}

export interface Quote {
  /** Amount sent in (raw units of the input token). */
  amountIn: bigint;
  /** null: the quote failed or the pool could not fill it. */
  amountOut: bigint | null;
  gasEstimate: bigint | null;
}

export interface PoolReaderOptions {
  client: Pick<DexClient, 'request'>;
  contracts: ContractReader;
  chain: ChainSpec;
  quoterV2: Address;
  /** USD sizes, sorted. */
  ladder: number[];
  logger: Logger;
}

export class PoolReader {
  constructor(private readonly options: PoolReaderOptions) {}

  /** Phase 1: pool states and buy quotes of the ready pools, the block's timestamp and ETH/USD. */
  async readStatesAndBuys(
    ready: PoolState[],
    blockNumber: bigint,
    ethPool: EthPricingPool | null | undefined,
  ): Promise<{ snapshots: PoolSnapshot[]; timestampMs: number | undefined; ethUsd: number | null }> {
    const { contracts, chain, ladder } = this.options;
    const multicallAddress = contracts.multicallAddress;
    const calls: Call[] = [];
    const plan = ready.map((pool) => {
      const stateIdx = calls.push(this.stateCall(pool)) - 1;
      const buyIdx = ladder.map(
        (size) => calls.push(this.quoteCall(pool, 'buy', toRawAmount(size, pool.spec.quote_token.decimals))) - 1,
      );
      return { pool, stateIdx, buyIdx };
    });
    const ethIdx = ethPool
      ? calls.push({ address: ethPool.address, abi: uniswapV3PoolAbi, functionName: 'slot0' }) - 1
      : -1;
    const tsIdx = multicallAddress
      ? calls.push({ address: multicallAddress, abi: multicall3Abi as Abi, functionName: 'getCurrentBlockTimestamp' }) -
        1
      : -1;
    const [results, block] = await Promise.all([
      contracts.readMany(calls, blockNumber),
      tsIdx < 0
        ? this.options.client
            .request({ method: 'eth_getBlockByNumber', params: [numberToHex(blockNumber), false] })
            .catch(() => null)
        : Promise.resolve(null),
    ]);

    const snapshots: PoolSnapshot[] = [];
    for (const { pool, stateIdx, buyIdx } of plan) {
      const state = results[stateIdx];
      if (!state?.ok) {
        poolFailed(pool, `state read failed: ${state?.error ?? 'no result'}`, this.options.logger);
        continue;
      }
      try {
        const snap = this.snapshotFromState(pool, state.value);
        snap.buys = buyIdx.map((idx, i) =>
          this.parseQuote(pool, results[idx], toRawAmount(ladder[i] ?? 0, pool.spec.quote_token.decimals)),
        );
        snapshots.push(snap);
        pool.lastMid = ratioToNumber(snap.mid.num, snap.mid.den);
      } catch (err) {
        poolFailed(pool, shortError(err), this.options.logger);
      }
    }

    let timestampMs: number | undefined;
    const ts = tsIdx >= 0 ? results[tsIdx] : undefined;
    if (ts?.ok && typeof ts.value === 'bigint') timestampMs = Number(ts.value) * 1000;
    else if (block?.timestamp) timestampMs = Number(block.timestamp) * 1000;

    let ethUsd: number | null = null;
    const wethPool = snapshots.find((s) => isWethUsdc(s.pool.spec, chain));
    if (wethPool) ethUsd = ratioToNumber(wethPool.mid.num, wethPool.mid.den);
    else if (ethPool && ethIdx >= 0) {
      const r = results[ethIdx];
      const sqrtP = r?.ok ? firstBigint(r.value) : undefined;
      if (sqrtP) {
        const mid = sqrtPriceX96ToPriceRatio(sqrtP, {
          baseIsToken0: ethPool.wethIsToken0,
          baseDecimals: chain.weth.decimals,
          quoteDecimals: chain.usdc.decimals,
        });
        ethUsd = ratioToNumber(mid.num, mid.den);
      }
    }
    return { snapshots, timestampMs, ethUsd };
  }

  /** Phase 2: sell quotes, `size / mid` base in, per snapshot and ladder step. */
  async readSells(snapshots: PoolSnapshot[], blockNumber: bigint): Promise<Quote[][]> {
    const calls: Call[] = [];
    const plan = snapshots.map((snap) =>
      this.options.ladder.map((size) => {
        const amountIn = this.sellAmountIn(snap, toRawAmount(size, snap.pool.spec.quote_token.decimals));
        const idx = amountIn > 0n ? calls.push(this.quoteCall(snap.pool, 'sell', amountIn)) - 1 : -1;
        return { idx, amountIn };
      }),
    );
    const results = await this.options.contracts.readMany(calls, blockNumber);
    return plan.map((steps, i) => {
      const pool = snapshots[i]!.pool;
      return steps.map(({ idx, amountIn }) =>
        idx < 0 ? { amountIn, amountOut: null, gasEstimate: null } : this.parseQuote(pool, results[idx], amountIn),
      );
    });
  }

  /** Base to sell for `sizeRaw` USDC at this block's pool price (raw units). */
  sellAmountIn(snap: PoolSnapshot, sizeRaw: bigint): bigint {
    const { base_token: base, quote_token: quote } = snap.pool.spec;
    return snap.sqrtPriceX96 !== undefined
      ? quoteToBaseAmount(sizeRaw, snap.sqrtPriceX96, snap.pool.baseIsToken0 ?? true)
      : quoteToBaseAtPrice(sizeRaw, snap.mid, quote.decimals, base.decimals);
  }

  /** buy: USDC in, base out; sell: base in, USDC out. */
  quoteCall(pool: PoolState, side: 'buy' | 'sell', amountIn: bigint): Call {
    const { base_token: base, quote_token: quote } = pool.spec;
    const [tokenIn, tokenOut] = side === 'buy' ? [quote.address, base.address] : [base.address, quote.address];
    if (pool.spec.protocol === 'uniswap_v3') {
      return {
        address: this.options.quoterV2,
        abi: quoterV2Abi,
        functionName: 'quoteExactInputSingle',
        args: [{ tokenIn, tokenOut, amountIn, fee: pool.spec.fee_tier, sqrtPriceLimitX96: 0n }],
        nonView: true,
      };
    }
    return {
      address: pool.address as Address,
      abi: aerodromePoolAbi,
      functionName: 'getAmountOut',
      args: [amountIn, tokenIn],
    };
  }

  /** A quote's result; a failure is counted on the pool (quote_failures, last_quote_error). */
  parseQuote(pool: PoolState, result: CallResult | undefined, amountIn: bigint): Quote {
    if (!result?.ok) {
      pool.quoteFailures += 1;
      pool.lastQuoteError = result?.error ?? 'no result';
      return { amountIn, amountOut: null, gasEstimate: null };
    }
    if (pool.spec.protocol === 'uniswap_v3') {
      // (amountOut, sqrtPriceX96After, initializedTicksCrossed, gasEstimate)
      const v = result.value;
      if (!Array.isArray(v) || typeof v[0] !== 'bigint' || typeof v[1] !== 'bigint' || typeof v[3] !== 'bigint') {
        pool.quoteFailures += 1;
        pool.lastQuoteError = 'quoteExactInputSingle: unexpected result';
        return { amountIn, amountOut: null, gasEstimate: null };
      }
      const [amountOut, after, , gasEstimate] = v as [bigint, bigint, number, bigint];
      // The quoter stops at the price limit when liquidity runs out: a partial fill is not an executable price.
      const exhausted = after <= MIN_SQRT_RATIO + 1n || after >= MAX_SQRT_RATIO - 1n;
      return { amountIn, amountOut: exhausted || amountOut === 0n ? null : amountOut, gasEstimate };
    }
    const out = typeof result.value === 'bigint' ? result.value : null;
    return { amountIn, amountOut: out && out > 0n ? out : null, gasEstimate: AERODROME_SWAP_GAS_ESTIMATE };
  }

  /** The executable ladder of a snapshot from its buy and sell quotes. */
  ladderOf(snap: PoolSnapshot, sells: Quote[]): LadderStep[] {
    const { base_token: base, quote_token: quote } = snap.pool.spec;
    return this.options.ladder.map((size, i) => {
      const buy = snap.buys[i];
      const sell = sells[i];
      return {
        size_usd: size,
        buy_price: buy?.amountOut ? executionPrice(buy.amountIn, buy.amountOut, quote.decimals, base.decimals) : null,
        sell_price: sell?.amountOut
          ? executionPrice(sell.amountOut, sell.amountIn, quote.decimals, base.decimals)
          : null,
      };
    });
  }

  /** One swap's gas in USD: the quoter's estimate for the smallest size x gas price x ETH/USD (null when a factor is unknown). */
  gasUsdOf(snap: PoolSnapshot, sells: Quote[], gasPrice: bigint | null, ethUsd: number | null): number | null {
    const gasUnits = snap.buys[0]?.gasEstimate ?? sells[0]?.gasEstimate ?? null;
    return gasUnits !== null && gasPrice !== null && ethUsd !== null
      ? ratioToNumber(gasUnits * gasPrice, 10n ** 18n) * ethUsd
      : null;
  }

  private stateCall(pool: PoolState): Call {
    const address = pool.address as Address;
    return pool.spec.protocol === 'uniswap_v3'
      ? { address, abi: uniswapV3PoolAbi, functionName: 'slot0' }
      : { address, abi: aerodromePoolAbi, functionName: 'getReserves' };
  }

  private snapshotFromState(pool: PoolState, value: unknown): PoolSnapshot {
    const { base_token: base, quote_token: quote } = pool.spec;
    if (pool.spec.protocol === 'uniswap_v3') {
      const sqrtPriceX96 = firstBigint(value);
      if (!sqrtPriceX96) throw new Error('slot0: pool not initialised (sqrtPriceX96 = 0)');
      const mid = sqrtPriceX96ToPriceRatio(sqrtPriceX96, {
        baseIsToken0: pool.baseIsToken0 ?? true,
        baseDecimals: base.decimals,
        quoteDecimals: quote.decimals,
      });
      return { pool, mid, sqrtPriceX96, buys: [] };
    }
    if (!Array.isArray(value) || typeof value[0] !== 'bigint' || typeof value[1] !== 'bigint')
      throw new Error('getReserves: unexpected result');
    const [r0, r1] = value as [bigint, bigint];
    const reserves = pool.baseIsToken0 ? { base: r0, quote: r1 } : { base: r1, quote: r0 };
    if (reserves.base === 0n || reserves.quote === 0n) throw new Error('getReserves: empty pool');
    const mid = reservesMidRatio({
      reserveBase: reserves.base,
      reserveQuote: reserves.quote,
      baseDecimals: base.decimals,
      quoteDecimals: quote.decimals,
      stable: pool.stable,
    });
    return { pool, mid, reserves, buys: [] };
  }
}
