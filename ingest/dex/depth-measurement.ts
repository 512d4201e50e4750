/**
 * The DEX depth search wired to the chain: per block, the searches of
 * depth-search.ts for every quoted pool, their probes priced by quoter calls
 * pinned to the block, one batch (Multicall3) per round for all pools.
 * Buys probe `size` USDC in, sells `size / mid` base in (pool-reader.ts).
 * A failed probe (past the pool's liquidity, say) is a measured null, not a
 * pool failure. Each pool's search starts around where the previous block's
 * ended (its hint). Never throws: a failed search leaves the block's quotes
 * without depth (the aggregate then counts the ladder's largest size as a
 * lower bound). Quoter calls and time are counted for health and
 * bench:pipeline.
 */
import type { Logger } from '../../core/logger.js';
import type { QuoteDepth } from '../../core/events/market.js';
import { searchDepths, type DepthSearchOptions, type ProbeRequest, type ReferenceBook } from './depth-search.js';
import type { CallResult, ContractReader } from './contract-reader.js';
import type { PoolReader, PoolSnapshot, Quote } from './pool-reader.js';
import type { PoolState } from './pool-state.js';
import { executionPrice, ratioToNumber, toRawAmount } from './uniswap-v3-pricing.js';
import { shortError } from './viem-error.js';

/** Quoter calls and time of the depth search (health and bench:pipeline). */
export interface DepthSearchStats {
  blocks: number;
  /** Quoter calls of the ladders (2 per size per pool) and of the searches, over all blocks. */
  ladderCalls: number;
  searchCalls: number;
  searchRounds: number;
  searchMs: number;
  /** Pools quoted, summed over blocks (the per-pool denominator). */
  poolBlocks: number;
  lastBlockSearchCalls: number;
  lastBlockSearchMs: number;
}

export interface DepthMeasurementOptions {
  contracts: ContractReader;
  reader: PoolReader;
  /** Ladder sizes per pool (the ladder's own quoter calls are counted, 2 per size). */
  ladderSize: number;
  /** The impact bound (DEPTH_IMPACT_BPS) and the hard maximum (DEX_DEPTH_MAX_USD) of the searches. */
  search: DepthSearchOptions;
  reference?: ((pair: string) => ReferenceBook | undefined) | undefined;
  logger: Logger;
}

export class DepthMeasurement {
  private readonly search: DepthSearchStats = {
    blocks: 0,
    ladderCalls: 0,
    searchCalls: 0,
    searchRounds: 0,
    searchMs: 0,
    poolBlocks: 0,
    lastBlockSearchCalls: 0,
    lastBlockSearchMs: 0,
  };

  constructor(private readonly options: DepthMeasurementOptions) {}

  /** Measured depth of every snapshot's pool, in order; undefined where none was measured. */
  async measure(
    snapshots: PoolSnapshot[],
    sells: Quote[][],
    blockNumber: bigint,
    gasPrice: bigint | null,
    ethUsd: number | null,
  ): Promise<(QuoteDepth | undefined)[]> {
    if (!snapshots.length) return [];
    const { reader, contracts } = this.options;
    const t0 = performance.now();
    const inputs = snapshots.map((snap, i) => ({
      mid: ratioToNumber(snap.mid.num, snap.mid.den),
      feeBps: snap.pool.feeBps,
      gasUsd: reader.gasUsdOf(snap, sells[i] ?? [], gasPrice, ethUsd),
      ladder: reader.ladderOf(snap, sells[i] ?? []),
      reference: this.options.reference?.(snap.pool.pair),
      hint: snap.pool.lastDepth,
    }));
    const read = async (requests: ProbeRequest[]): Promise<(number | null)[]> => {
      const plan = requests.map((r) => {
        const snap = snapshots[r.pool]!;
        const sizeRaw = toRawAmount(Number(r.sizeUsd.toPrecision(15)), snap.pool.spec.quote_token.decimals);
        const amountIn = r.side === 'buy' ? sizeRaw : reader.sellAmountIn(snap, sizeRaw);
        return {
          snap,
          side: r.side,
          amountIn,
          call: amountIn > 0n ? reader.quoteCall(snap.pool, r.side, amountIn) : undefined,
        };
      });
      const calls = plan.flatMap((p) => (p.call ? [p.call] : []));
      const results = await contracts.readMany(calls, blockNumber);
      let k = 0;
      return plan.map(({ snap, side, amountIn, call }) => {
        if (!call) return null;
        const q = this.parseProbe(snap.pool, results[k++], amountIn);
        if (!q.amountOut) return null;
        const { base_token: base, quote_token: quote } = snap.pool.spec;
        return side === 'buy'
          ? executionPrice(q.amountIn, q.amountOut, quote.decimals, base.decimals)
          : executionPrice(q.amountOut, q.amountIn, quote.decimals, base.decimals);
      });
    };
    try {
      const result = await searchDepths(inputs, read, this.options.search);
      const ms = performance.now() - t0;
      this.search.blocks += 1;
      this.search.poolBlocks += snapshots.length;
      this.search.ladderCalls += snapshots.length * this.options.ladderSize * 2;
      this.search.searchCalls += result.probes;
      this.search.searchRounds += result.rounds;
      this.search.searchMs += ms;
      this.search.lastBlockSearchCalls = result.probes;
      this.search.lastBlockSearchMs = ms;
      result.hints.forEach((hint, i) => (snapshots[i]!.pool.lastDepth = hint));
      return result.depths;
    } catch (err) {
      this.options.logger.warn(
        { err: shortError(err), block: Number(blockNumber) },
        'dex: depth search failed; quotes published without depth',
      );
      return snapshots.map(() => undefined);
    }
  }

  /** Quoter calls and time of the depth search so far. */
  stats(): DepthSearchStats {
    return { ...this.search };
  }

  /** The `depth_search` section of health. */
  health(): Record<string, number | null> {
    const s = this.search;
    return {
      quoter_calls_per_block_per_pool: s.poolBlocks ? round1((s.ladderCalls + s.searchCalls) / s.poolBlocks) : null,
      search_calls_per_block_per_pool: s.poolBlocks ? round1(s.searchCalls / s.poolBlocks) : null,
      avg_search_ms: s.blocks ? round1(s.searchMs / s.blocks) : null,
      last_block_search_calls: s.lastBlockSearchCalls,
      last_block_search_ms: round1(s.lastBlockSearchMs),
    };
  }

  /** A probe's result: like a ladder quote, but a failed probe (past the pool's liquidity, say) is not a pool failure. */
  private parseProbe(pool: PoolState, result: CallResult | undefined, amountIn: bigint): Quote {
    const failures = pool.quoteFailures;
    const lastError = pool.lastQuoteError;
    const q = this.options.reader.parseQuote(pool, result, amountIn);
    pool.quoteFailures = failures;
    pool.lastQuoteError = lastError;
    return q;
  }
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;
