/**
 * DEX ingestion on Base (viem): on every new block, for each catalogue pool,
 * the pool price and size-aware executable prices in both directions for the
 * USD ladder, the gas price and one swap's gas cost in USD, published as
 * QuoteEvents (same schema as the CEX side, `venue_kind: 'dex'`); plus one
 * RPC round-trip sample per block as a LatencyEvent.
 *
 * Per block N (all contract reads pinned to block N):
 *  1. `eth_gasPrice`, timed alone: the latency sample (a cheap call the block
 *     needs anyway, so no extra request on rate-limited endpoints).
 *  2. One batch: each pool's state (Uniswap v3 `slot0`, Aerodrome
 *     `getReserves`) and its buy quotes (USDC in: `size` USDC), plus the block
 *     timestamp and, if needed, a WETH/USDC pool for gas pricing.
 *  3. One batch: sell quotes (base in: `size / mid` base, sized exactly from
 *     this block's pool price).
 *  4. The depth search (depth-search.ts): a few more batches of quoter calls
 *     per block, bracketing per pool and side the size where the price impact
 *     reaches DEPTH_IMPACT_BPS (up to the hard maximum DEX_DEPTH_MAX_USD,
 *     reported as capped when reached) and, against the CEX book this process
 *     holds, where the arbitrage's net spread reaches zero. Published as the
 *     quote's `depth`; calls and time per block and pool are in health.
 * A batch is one or a few Multicall3 `aggregate3` eth_calls where the chain
 * has Multicall3, otherwise parallel calls (QuoterV2 through
 * `simulateContract`: it is not a view function, it reverts internally).
 *
 * Prices in an event:
 *  - ladder: per size, `buy_price` = USDC paid / base received and
 *    `sell_price` = USDC received / base sold, from the quoter's amounts (pool
 *    fee included, `fee_included: true`); null when the quote failed or the
 *    pool ran out of liquidity before the size was filled.
 *  - bid / ask: the executable prices at the smallest ladder size (bid = its
 *    sell_price, ask = its buy_price; fee and that size's impact included),
 *    which is what the aggregator's spread maths and the market simulator
 *    take as a DEX's top of book. When that size has no quote, the pool's
 *    marginal prices stand in: bid = mid * (1 - fee), ask = mid / (1 - fee),
 *    mid being the pool price (Uniswap: slot0; Aerodrome: reserves). The
 *    schema has no mid field; health shows each pool's last mid.
 *  - gas: `gas_usd` = the quoter's gasEstimate for the smallest buy ×
 *    gas price × ETH/USD (ETH/USD: the mid of the WETH/USDC pool when it is in
 *    the catalogue, else of a WETH/USDC pool found through the factory; null
 *    when there is none). The quoter's estimate covers the pool swap, not the
 *    21k intrinsic gas, the router's overhead or Base's L1 data fee.
 *    Aerodrome has no quoter: a fixed AERODROME_SWAP_GAS_ESTIMATE is used.
 *  - latency: `kind: 'dex_rpc'`, venue `base_rpc` (one endpoint serves all
 *    pools), endpoint `eth_gasPrice`, keyed by venue.
 *
 * Blocks: `watchBlockNumber` (polling on http transports). While a block is
 * being processed, newer blocks wait; only the newest waiting block is
 * processed next, the others are skipped and counted (`blocks_skipped_busy`);
 * heights the poller never reported are counted as `blocks_missed`.
 *
 * Start-up: pool addresses missing from the catalogue come from the factory;
 * each pool's tokens, fee and token decimals are checked on chain against the
 * catalogue. A mismatch disables that pool (health says why); an RPC failure
 * leaves it pending and it is retried on the next block.
 */
import { getAddress, isAddressEqual, multicall3Abi, numberToHex, zeroAddress, type Abi, type Address, type PublicClient } from 'viem';
import type { Bus, OutgoingMessage } from '../../core/bus/bus.js';
import type { ProbeResult } from '../../core/health.js';
import type { Logger } from '../../core/logger.js';
import { LatencyEvent, QuoteEvent, type LadderStep } from '../../core/events/market.js';
import type { ChainSpec, PoolSpec } from '../../core/markets/pairs.js';
import { TOPICS } from '../../core/topics.js';
import { aerodromeFactoryAbi, aerodromePoolAbi, erc20MetadataAbi, quoterV2Abi, uniswapV3FactoryAbi, uniswapV3PoolAbi } from './abis.js';
import { quoteToBaseAtPrice, reservesMidRatio } from './aerodrome-pricing.js';
import { searchDepths, type ProbeRequest, type ReferenceBook, type SearchHint } from './depth-search.js';
import { contentEventId } from '../../core/events/event-id.js';
import type { QuoteDepth } from '../../core/events/market.js';
import {
  MAX_SQRT_RATIO,
  MIN_SQRT_RATIO,
  executionPrice,
  quoteToBaseAmount,
  ratioToNumber,
  sortsBefore,
  sqrtPriceX96ToPriceRatio,
  toRawAmount,
} from './uniswap-v3-pricing.js';

/** Multicall3's address on every chain that has it (Base included). */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** Aerodrome has no quoter returning gas: a typical volatile/stable pool swap through its router, documented estimate. */
export const AERODROME_SWAP_GAS_ESTIMATE = 150_000n;
/** Fee tiers tried, in order, when looking for a WETH/USDC pool to price gas. */
const ETH_POOL_FEE_TIERS = [500, 3000, 100, 10000];

/**
 * The viem public client methods the ingestor uses. Any PublicClient fits,
 * including one built with viem's `base` chain, whose OP-stack formatters
 * make it unassignable to the plain `PublicClient` type (block and
 * transaction shapes differ); blocks are therefore read with a raw request.
 */
export type DexClient = Pick<PublicClient, 'chain' | 'getCode' | 'getGasPrice' | 'multicall' | 'readContract' | 'request' | 'simulateContract' | 'watchBlockNumber'>;

export interface DexIngestorOptions {
  client: DexClient;
  chain: ChainSpec;
  pools: Array<{ pair: string; spec: PoolSpec }>;
  /** USD sizes quoted in both directions on every block (sorted, deduplicated; at most 16). */
  ladderUsd: number[];
  bus: Bus;
  logger: Logger;
  source: 'live' | 'simulated';
  /** No new block for this long: degraded. Default 30 s. */
  staleAfterMs?: number;
  /** Block polling interval (http transports). Default: the client's pollingInterval. */
  pollingIntervalMs?: number;
  /** Venue of the RPC latency samples. Default `base_rpc`: one endpoint serves every pool. */
  latencyVenue?: string;
  /** Multicall3 to batch reads with. Default: the client chain's, else the canonical address, used only if code is deployed there. `false`: parallel calls. */
  multicall?: Address | false;
  /** Multicall calldata bytes per aggregate3 call (viem's batchSize). Default 8192. */
  multicallBatchBytes?: number;
  /** Impact bound of the measured depth (DEPTH_IMPACT_BPS). Default 100. */
  depthImpactBps?: number;
  /** Hard maximum of the depth search (DEX_DEPTH_MAX_USD): a side still within the bound there is reported capped. Default 50,000,000. */
  depthMaxUsd?: number;
  /** The CEX as this process last saw it, per pair: the depth search also looks for the size where the arbitrage's net spread reaches zero. */
  reference?: (pair: string) => ReferenceBook | undefined;
}

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

type PoolStatus = 'pending' | 'ready' | 'disabled';

interface PoolState {
  pair: string;
  spec: PoolSpec;
  status: PoolStatus;
  address?: Address;
  baseIsToken0?: boolean;
  /** Fee in bps (Uniswap: fee_tier / 100; Aerodrome: the factory's fee). */
  feeBps: number;
  stable: boolean;
  disabledReason?: string;
  lastError?: string;
  lastErrorAt?: number;
  lastQuoteError?: string;
  quoteFailures: number;
  lastBlock?: bigint;
  lastMid?: number;
  /** Where the last block's depth searches ended: the next ones start around it. */
  lastDepth?: SearchHint;
  published: number;
}

interface Call {
  address: Address;
  abi: Abi;
  functionName: string;
  args?: readonly unknown[];
  /** Not a view function (QuoterV2): simulateContract when calls are not batched. */
  nonView?: boolean;
}

type CallResult = { ok: true; value: unknown } | { ok: false; error: string };

interface PriceRatio {
  num: bigint;
  den: bigint;
}

/** What phase 1 learnt about a pool at block N. */
interface PoolSnapshot {
  pool: PoolState;
  mid: PriceRatio;
  /** Uniswap only. */
  sqrtPriceX96?: bigint;
  /** Aerodrome only. */
  reserves?: { base: bigint; quote: bigint };
  buys: Quote[];
}

interface Quote {
  /** Amount sent in (raw units of the input token). */
  amountIn: bigint;
  /** null: the quote failed or the pool could not fill it. */
  amountOut: bigint | null;
  gasEstimate: bigint | null;
}

export class DexIngestor {
  private readonly client: DexClient;
  private readonly chain: ChainSpec;
  private readonly bus: Bus;
  private readonly logger: Logger;
  private readonly source: 'live' | 'simulated';
  private readonly ladder: number[];
  private readonly staleAfterMs: number;
  private readonly latencyVenue: string;
  private readonly pools: PoolState[];
  private readonly quoterV2: Address;

  /** undefined: not checked yet; null: none, parallel calls. */
  private multicallAddress: Address | null | undefined;
  /** A WETH/USDC pool outside the catalogue, for gas pricing; null: none found. */
  private ethPool: { address: Address; wethIsToken0: boolean } | null | undefined;

  private unwatch: (() => void) | undefined;
  private stopped = true;
  private startedAt = 0;
  private running: Promise<void> | undefined;
  private pendingBlock: bigint | undefined;

  private lastSeenBlock: bigint | undefined;
  private lastSeenAt = 0;
  private lastProcessedBlock: bigint | undefined;
  private blocksProcessed = 0;
  private blocksSkippedBusy = 0;
  private blocksMissed = 0;
  private lastProcessMs: number | undefined;
  private maxProcessMs = 0;
  private totalProcessMs = 0;
  private lastRttMs: number | undefined;
  private watchError: string | undefined;
  private gasError: string | undefined;
  private publishError: string | undefined;
  private quotesPublished = 0;
  private latencyPublished = 0;
  private readonly search: DepthSearchStats = { blocks: 0, ladderCalls: 0, searchCalls: 0, searchRounds: 0, searchMs: 0, poolBlocks: 0, lastBlockSearchCalls: 0, lastBlockSearchMs: 0 };

  constructor(private readonly options: DexIngestorOptions) {
    this.client = options.client;
    this.chain = options.chain;
    this.bus = options.bus;
    this.logger = options.logger;
    this.source = options.source;
    this.staleAfterMs = options.staleAfterMs ?? 30000;
    this.latencyVenue = options.latencyVenue ?? 'base_rpc';
    this.quoterV2 = getAddress(options.chain.uniswap_v3.quoter_v2);
    this.ladder = [...new Set(options.ladderUsd)].sort((a, b) => a - b);
    if (this.ladder.length === 0 || this.ladder.length > 16 || this.ladder.some((s) => !(s > 0) || !Number.isFinite(s))) {
      throw new Error(`ladderUsd must hold 1 to 16 positive sizes, got ${JSON.stringify(options.ladderUsd)}`);
    }
    this.pools = options.pools.map(({ pair, spec }) => ({
      pair,
      spec,
      status: 'pending' as PoolStatus,
      feeBps: spec.fee_tier / 100,
      stable: spec.stable ?? false,
      quoteFailures: 0,
      published: 0,
    }));
  }

  /** Resolves and checks the pools (best effort: RPC failures are retried per block), then follows new blocks. */
  async start(): Promise<void> {
    if (this.unwatch) return;
    this.stopped = false;
    this.startedAt = Date.now();
    this.lastSeenBlock = undefined; // heights passed while stopped are not "missed"
    this.lastSeenAt = 0;
    await this.prepare();
    this.unwatch = this.client.watchBlockNumber({
      emitOnBegin: true,
      emitMissed: false,
      ...(this.options.pollingIntervalMs ? { pollingInterval: this.options.pollingIntervalMs } : {}),
      onBlockNumber: (blockNumber) => this.onBlock(blockNumber),
      onError: (err) => {
        const message = shortError(err);
        // Log a failure once when it starts or changes, not on every poll; health carries it meanwhile.
        if (message !== this.watchError) this.logger.warn({ err: message }, 'dex: block watch failed');
        this.watchError = message;
      },
    });
  }

  /** Stops following blocks; resolves once the block in progress (if any) is published. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch?.();
    this.unwatch = undefined;
    if (this.pendingBlock !== undefined) this.blocksSkippedBusy += 1; // seen, never processed
    this.pendingBlock = undefined;
    await this.running;
  }

  health(): ProbeResult {
    const now = Date.now();
    const problems: string[] = [];
    if (this.stopped) problems.push('not running');
    if (this.watchError) problems.push(`block watch failing: ${this.watchError}`);
    if (this.lastSeenBlock === undefined) {
      if (!this.stopped) problems.push(`no block seen yet (started ${Math.round((now - this.startedAt) / 1000)} s ago)`);
    } else if (now - this.lastSeenAt > this.staleAfterMs) {
      problems.push(`no new block for ${Math.round((now - this.lastSeenAt) / 1000)} s (last ${this.lastSeenBlock})`);
    }
    for (const p of this.pools) {
      if (p.status === 'disabled') problems.push(`${p.pair} ${p.spec.venue} disabled: ${p.disabledReason}`);
      else if (p.status === 'pending') problems.push(`${p.pair} ${p.spec.venue} not resolved yet${p.lastError ? `: ${p.lastError}` : ''}`);
      else if (p.lastError) problems.push(`${p.pair} ${p.spec.venue} failing: ${p.lastError}`);
    }
    if (this.gasError) problems.push(`gas price read failing: ${this.gasError}`);
    if (this.publishError) problems.push(`publish failing: ${this.publishError}`);

    return {
      status: problems.length ? 'degraded' : 'ok',
      adapter: 'viem',
      ...(problems.length ? { reason: problems.join('; ') } : {}),
      source: this.source,
      chain_id: this.chain.chain_id,
      multicall: this.multicallAddress ?? null,
      last_block: this.lastSeenBlock === undefined ? null : Number(this.lastSeenBlock),
      last_block_at: this.lastSeenAt ? new Date(this.lastSeenAt).toISOString() : null,
      last_processed_block: this.lastProcessedBlock === undefined ? null : Number(this.lastProcessedBlock),
      blocks_processed: this.blocksProcessed,
      blocks_skipped_busy: this.blocksSkippedBusy,
      blocks_missed: this.blocksMissed,
      last_process_ms: this.lastProcessMs ?? null,
      avg_process_ms: this.blocksProcessed ? round1(this.totalProcessMs / this.blocksProcessed) : null,
      max_process_ms: this.maxProcessMs,
      last_rtt_ms: this.lastRttMs ?? null,
      quotes_published: this.quotesPublished,
      latency_published: this.latencyPublished,
      depth_search: {
        quoter_calls_per_block_per_pool: this.search.poolBlocks ? round1((this.search.ladderCalls + this.search.searchCalls) / this.search.poolBlocks) : null,
        search_calls_per_block_per_pool: this.search.poolBlocks ? round1(this.search.searchCalls / this.search.poolBlocks) : null,
        avg_search_ms: this.search.blocks ? round1(this.search.searchMs / this.search.blocks) : null,
        last_block_search_calls: this.search.lastBlockSearchCalls,
        last_block_search_ms: round1(this.search.lastBlockSearchMs),
      },
      gas_pricing_pool: this.ethPoolDescription(),
      pools: this.pools.map((p) => ({
        pair: p.pair,
        venue: p.spec.venue,
        protocol: p.spec.protocol,
        pool: p.address ?? null,
        status: p.status === 'ready' && p.lastError ? 'failing' : p.status,
        ...(p.disabledReason ? { reason: p.disabledReason } : {}),
        last_block: p.lastBlock === undefined ? null : Number(p.lastBlock),
        last_mid: p.lastMid ?? null,
        last_error: p.lastError ?? null,
        last_error_at: p.lastErrorAt ? new Date(p.lastErrorAt).toISOString() : null,
        quote_failures: p.quoteFailures,
        last_quote_error: p.lastQuoteError ?? null,
        published: p.published,
      })),
    };
  }

  // ---------------------------------------------------------------- blocks

  private onBlock(blockNumber: bigint): void {
    if (this.stopped) return;
    const last = this.lastSeenBlock;
    if (last !== undefined && blockNumber <= last) return; // same height again, or a reorg to a lower one
    if (last !== undefined && blockNumber > last + 1n) this.blocksMissed += Number(blockNumber - last - 1n);
    this.lastSeenBlock = blockNumber;
    this.lastSeenAt = Date.now();
    this.watchError = undefined;
    if (this.running) {
      if (this.pendingBlock !== undefined) {
        this.blocksSkippedBusy += 1;
        // Counted in health; logged on the first skip and every 100th, not per block.
        if (this.blocksSkippedBusy === 1 || this.blocksSkippedBusy % 100 === 0) {
          this.logger.warn({ skipped: Number(this.pendingBlock), total: this.blocksSkippedBusy, last_process_ms: this.lastProcessMs }, 'dex: block skipped, previous one still in progress');
        }
      }
      this.pendingBlock = blockNumber;
      return;
    }
    this.running = this.drain(blockNumber);
  }

  private async drain(first: bigint): Promise<void> {
    let next: bigint | undefined = first;
    while (next !== undefined && !this.stopped) {
      await this.processBlock(next);
      next = this.pendingBlock;
      this.pendingBlock = undefined;
    }
    this.running = undefined;
  }

  private async processBlock(blockNumber: bigint): Promise<void> {
    const t0 = performance.now();
    try {
      await this.prepare();
      const ingestStart = Date.now();

      // 1. The latency sample: eth_gasPrice alone, before the batches.
      const rttStart = performance.now();
      let gasPrice: bigint | null = null;
      let rttOk = true;
      try {
        gasPrice = await this.client.getGasPrice();
        this.gasError = undefined;
      } catch (err) {
        rttOk = false;
        this.gasError = shortError(err);
      }
      const rttMs = round1(performance.now() - rttStart);
      this.lastRttMs = rttMs;

      const ready = this.pools.filter((p) => p.status === 'ready');
      const { snapshots, timestampMs, ethUsd } = await this.readPhase1(ready, blockNumber);
      const sells = await this.readSells(snapshots, blockNumber);
      const depths = await this.measureDepths(snapshots, sells, blockNumber, gasPrice, ethUsd);

      const ingestTime = Date.now();
      const eventTime = timestampMs ?? ingestStart;
      const quotes: OutgoingMessage[] = [];
      snapshots.forEach((snap, i) => {
        const event = this.buildQuote(snap, sells[i] ?? [], blockNumber, eventTime, ingestTime, gasPrice, ethUsd, depths[i]);
        const parsed = QuoteEvent.safeParse(event);
        if (!parsed.success) {
          this.poolFailed(snap.pool, `invalid QuoteEvent: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`);
          return;
        }
        quotes.push({ key: snap.pool.pair, value: JSON.stringify(parsed.data), timestamp: eventTime });
        snap.pool.lastBlock = blockNumber;
      });

      const latencyContent = {
        venue: this.latencyVenue,
        venue_kind: 'dex' as const,
        kind: 'dex_rpc' as const,
        endpoint: 'eth_gasPrice',
        rtt_ms: rttMs,
        ok: rttOk,
        event_time_ms: ingestStart,
        ingest_time_ms: ingestTime,
        source: this.source,
      };
      // Identity (chain, block) plus a content digest: a block read again after a restart, or by a replica, with
      // another round trip is another sample, never one id for two (core/events/event-id.ts).
      const latency: LatencyEvent = { event_id: contentEventId(`dex_rpc:${this.chain.chain_id}:${blockNumber}`, latencyContent), ...latencyContent };
      const latencyParsed = LatencyEvent.safeParse(latency);

      try {
        if (quotes.length) await this.bus.publish(TOPICS.quotes, quotes);
        this.quotesPublished += quotes.length;
        for (const snap of snapshots) if (snap.pool.lastBlock === blockNumber) snap.pool.published += 1;
        if (latencyParsed.success) {
          await this.bus.publish(TOPICS.latency, [{ key: this.latencyVenue, value: JSON.stringify(latencyParsed.data), timestamp: ingestStart }]);
          this.latencyPublished += 1;
        } else {
          this.logger.error({ issues: latencyParsed.error.issues }, 'dex: invalid LatencyEvent, not published');
        }
        this.publishError = undefined;
      } catch (err) {
        this.publishError = shortError(err);
        this.logger.warn({ err: this.publishError, block: Number(blockNumber) }, 'dex: publish failed');
      }
    } catch (err) {
      // Anything unexpected: keep following blocks, say it in health.
      this.watchError = `block ${blockNumber}: ${shortError(err)}`;
      this.logger.error({ err: this.watchError }, 'dex: block processing failed');
    } finally {
      const ms = round1(performance.now() - t0);
      this.lastProcessMs = ms;
      this.maxProcessMs = Math.max(this.maxProcessMs, ms);
      this.totalProcessMs += ms;
      this.blocksProcessed += 1;
      this.lastProcessedBlock = blockNumber;
      this.logger.debug({ block: Number(blockNumber), ms, pools: this.pools.length }, 'dex: block processed');
    }
  }

  // ---------------------------------------------------------------- reads

  private async readPhase1(ready: PoolState[], blockNumber: bigint): Promise<{ snapshots: PoolSnapshot[]; timestampMs: number | undefined; ethUsd: number | null }> {
    const calls: Call[] = [];
    const plan = ready.map((pool) => {
      const stateIdx = calls.push(this.stateCall(pool)) - 1;
      const buyIdx = this.ladder.map((size) => calls.push(this.quoteCall(pool, 'buy', toRawAmount(size, pool.spec.quote_token.decimals))) - 1);
      return { pool, stateIdx, buyIdx };
    });
    const ethIdx = this.ethPool ? calls.push({ address: this.ethPool.address, abi: uniswapV3PoolAbi, functionName: 'slot0' }) - 1 : -1;
    const tsIdx = this.multicallAddress ? calls.push({ address: this.multicallAddress, abi: multicall3Abi as Abi, functionName: 'getCurrentBlockTimestamp' }) - 1 : -1;
    const [results, block] = await Promise.all([
      this.readMany(calls, blockNumber),
      tsIdx < 0 ? this.client.request({ method: 'eth_getBlockByNumber', params: [numberToHex(blockNumber), false] }).catch(() => null) : Promise.resolve(null),
    ]);

    const snapshots: PoolSnapshot[] = [];
    for (const { pool, stateIdx, buyIdx } of plan) {
      const state = results[stateIdx];
      if (!state?.ok) {
        this.poolFailed(pool, `state read failed: ${state?.error ?? 'no result'}`);
        continue;
      }
      try {
        const snap = this.snapshotFromState(pool, state.value);
        snap.buys = buyIdx.map((idx, i) => this.parseQuote(pool, results[idx], toRawAmount(this.ladder[i] ?? 0, pool.spec.quote_token.decimals)));
        snapshots.push(snap);
        pool.lastMid = ratioToNumber(snap.mid.num, snap.mid.den);
      } catch (err) {
        this.poolFailed(pool, shortError(err));
      }
    }

    let timestampMs: number | undefined;
    const ts = tsIdx >= 0 ? results[tsIdx] : undefined;
    if (ts?.ok && typeof ts.value === 'bigint') timestampMs = Number(ts.value) * 1000;
    else if (block?.timestamp) timestampMs = Number(block.timestamp) * 1000;

    let ethUsd: number | null = null;
    const wethPool = snapshots.find((s) => this.isWethUsdc(s.pool.spec));
    if (wethPool) ethUsd = ratioToNumber(wethPool.mid.num, wethPool.mid.den);
    else if (this.ethPool && ethIdx >= 0) {
      const r = results[ethIdx];
      const sqrtP = r?.ok ? firstBigint(r.value) : undefined;
      if (sqrtP) {
        const mid = sqrtPriceX96ToPriceRatio(sqrtP, { baseIsToken0: this.ethPool.wethIsToken0, baseDecimals: this.chain.weth.decimals, quoteDecimals: this.chain.usdc.decimals });
        ethUsd = ratioToNumber(mid.num, mid.den);
      }
    }
    return { snapshots, timestampMs, ethUsd };
  }

  /** Phase 2: sell quotes, `size / mid` base in, per snapshot and ladder step. */
  private async readSells(snapshots: PoolSnapshot[], blockNumber: bigint): Promise<Quote[][]> {
    const calls: Call[] = [];
    const plan = snapshots.map((snap) => {
      const { base_token: base, quote_token: quote } = snap.pool.spec;
      return this.ladder.map((size) => {
        const sizeRaw = toRawAmount(size, quote.decimals);
        const amountIn =
          snap.sqrtPriceX96 !== undefined
            ? quoteToBaseAmount(sizeRaw, snap.sqrtPriceX96, snap.pool.baseIsToken0 ?? true)
            : quoteToBaseAtPrice(sizeRaw, snap.mid, quote.decimals, base.decimals);
        const idx = amountIn > 0n ? calls.push(this.quoteCall(snap.pool, 'sell', amountIn)) - 1 : -1;
        return { idx, amountIn };
      });
    });
    const results = await this.readMany(calls, blockNumber);
    return plan.map((steps, i) => {
      const pool = snapshots[i]!.pool;
      return steps.map(({ idx, amountIn }) => (idx < 0 ? { amountIn, amountOut: null, gasEstimate: null } : this.parseQuote(pool, results[idx], amountIn)));
    });
  }

  private stateCall(pool: PoolState): Call {
    const address = pool.address as Address;
    return pool.spec.protocol === 'uniswap_v3'
      ? { address, abi: uniswapV3PoolAbi, functionName: 'slot0' }
      : { address, abi: aerodromePoolAbi, functionName: 'getReserves' };
  }

  /** buy: USDC in, base out; sell: base in, USDC out. */
  private quoteCall(pool: PoolState, side: 'buy' | 'sell', amountIn: bigint): Call {
    const { base_token: base, quote_token: quote } = pool.spec;
    const [tokenIn, tokenOut] = side === 'buy' ? [quote.address, base.address] : [base.address, quote.address];
    if (pool.spec.protocol === 'uniswap_v3') {
      return {
        address: this.quoterV2,
        abi: quoterV2Abi,
        functionName: 'quoteExactInputSingle',
        args: [{ tokenIn, tokenOut, amountIn, fee: pool.spec.fee_tier, sqrtPriceLimitX96: 0n }],
        nonView: true,
      };
    }
    return { address: pool.address as Address, abi: aerodromePoolAbi, functionName: 'getAmountOut', args: [amountIn, tokenIn] };
  }

  private snapshotFromState(pool: PoolState, value: unknown): PoolSnapshot {
    const { base_token: base, quote_token: quote } = pool.spec;
    if (pool.spec.protocol === 'uniswap_v3') {
      const sqrtPriceX96 = firstBigint(value);
      if (!sqrtPriceX96) throw new Error('slot0: pool not initialised (sqrtPriceX96 = 0)');
      const mid = sqrtPriceX96ToPriceRatio(sqrtPriceX96, { baseIsToken0: pool.baseIsToken0 ?? true, baseDecimals: base.decimals, quoteDecimals: quote.decimals });
      return { pool, mid, sqrtPriceX96, buys: [] };
    }
    if (!Array.isArray(value) || typeof value[0] !== 'bigint' || typeof value[1] !== 'bigint') throw new Error('getReserves: unexpected result');
    const [r0, r1] = value as [bigint, bigint];
    const reserves = pool.baseIsToken0 ? { base: r0, quote: r1 } : { base: r1, quote: r0 };
    if (reserves.base === 0n || reserves.quote === 0n) throw new Error('getReserves: empty pool');
    const mid = reservesMidRatio({ reserveBase: reserves.base, reserveQuote: reserves.quote, baseDecimals: base.decimals, quoteDecimals: quote.decimals, stable: pool.stable });
    return { pool, mid, reserves, buys: [] };
  }

  private parseQuote(pool: PoolState, result: CallResult | undefined, amountIn: bigint): Quote {
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
  private ladderOf(snap: PoolSnapshot, sells: Quote[]): LadderStep[] {
    const { base_token: base, quote_token: quote } = snap.pool.spec;
    return this.ladder.map((size, i) => {
      const buy = snap.buys[i];
      const sell = sells[i];
      return {
        size_usd: size,
        buy_price: buy?.amountOut ? executionPrice(buy.amountIn, buy.amountOut, quote.decimals, base.decimals) : null,
        sell_price: sell?.amountOut ? executionPrice(sell.amountOut, sell.amountIn, quote.decimals, base.decimals) : null,
      };
    });
  }

  /** One swap's gas in USD: the quoter's estimate for the smallest size x gas price x ETH/USD (null when a factor is unknown). */
  private gasUsdOf(snap: PoolSnapshot, sells: Quote[], gasPrice: bigint | null, ethUsd: number | null): number | null {
    const gasUnits = snap.buys[0]?.gasEstimate ?? sells[0]?.gasEstimate ?? null;
    return gasUnits !== null && gasPrice !== null && ethUsd !== null ? ratioToNumber(gasUnits * gasPrice, 10n ** 18n) * ethUsd : null;
  }

  /**
   * Measured depth of every snapshot's pool (ingest/dex/depth-search.ts): rounds of quoter calls, each round one
   * batch (Multicall3) for all pools, pinned to the block. Never throws: a failed search leaves the quote without
   * depth (the aggregate then counts the ladder's largest size as a lower bound).
   */
  private async measureDepths(snapshots: PoolSnapshot[], sells: Quote[][], blockNumber: bigint, gasPrice: bigint | null, ethUsd: number | null): Promise<(QuoteDepth | undefined)[]> {
    if (!snapshots.length) return [];
    const t0 = performance.now();
    const inputs = snapshots.map((snap, i) => ({
      mid: ratioToNumber(snap.mid.num, snap.mid.den),
      feeBps: snap.pool.feeBps,
      gasUsd: this.gasUsdOf(snap, sells[i] ?? [], gasPrice, ethUsd),
      ladder: this.ladderOf(snap, sells[i] ?? []),
      reference: this.options.reference?.(snap.pool.pair),
      hint: snap.pool.lastDepth,
    }));
    const read = async (requests: ProbeRequest[]): Promise<(number | null)[]> => {
      const plan = requests.map((r) => {
        const snap = snapshots[r.pool]!;
        const { base_token: base, quote_token: quote } = snap.pool.spec;
        const sizeRaw = toRawAmount(Number(r.sizeUsd.toPrecision(15)), quote.decimals);
        const amountIn =
          r.side === 'buy'
            ? sizeRaw
            : snap.sqrtPriceX96 !== undefined
              ? quoteToBaseAmount(sizeRaw, snap.sqrtPriceX96, snap.pool.baseIsToken0 ?? true)
              : quoteToBaseAtPrice(sizeRaw, snap.mid, quote.decimals, base.decimals);
        return { snap, side: r.side, amountIn, call: amountIn > 0n ? this.quoteCall(snap.pool, r.side, amountIn) : undefined };
      });
      const calls = plan.flatMap((p) => (p.call ? [p.call] : []));
      const results = await this.readMany(calls, blockNumber);
      let k = 0;
      return plan.map(({ snap, side, amountIn, call }) => {
        if (!call) return null;
        const q = this.parseProbe(snap.pool, results[k++], amountIn);
        if (!q.amountOut) return null;
        const { base_token: base, quote_token: quote } = snap.pool.spec;
        return side === 'buy' ? executionPrice(q.amountIn, q.amountOut, quote.decimals, base.decimals) : executionPrice(q.amountOut, q.amountIn, quote.decimals, base.decimals);
      });
    };
    try {
      const result = await searchDepths(inputs, read, { impactBps: this.options.depthImpactBps ?? 100, maxUsd: this.options.depthMaxUsd ?? 50_000_000 });
      const ms = performance.now() - t0;
      this.search.blocks += 1;
      this.search.poolBlocks += snapshots.length;
      this.search.ladderCalls += snapshots.length * this.ladder.length * 2;
      this.search.searchCalls += result.probes;
      this.search.searchRounds += result.rounds;
      this.search.searchMs += ms;
      this.search.lastBlockSearchCalls = result.probes;
      this.search.lastBlockSearchMs = ms;
      result.hints.forEach((hint, i) => (snapshots[i]!.pool.lastDepth = hint));
      return result.depths;
    } catch (err) {
      this.logger.warn({ err: shortError(err), block: Number(blockNumber) }, 'dex: depth search failed; quotes published without depth');
      return snapshots.map(() => undefined);
    }
  }

  /** A probe's result: like parseQuote, but a failed probe (past the pool's liquidity, say) is not a pool failure. */
  private parseProbe(pool: PoolState, result: CallResult | undefined, amountIn: bigint): Quote {
    const failures = pool.quoteFailures;
    const lastError = pool.lastQuoteError;
    const q = this.parseQuote(pool, result, amountIn);
    pool.quoteFailures = failures;
    pool.lastQuoteError = lastError;
    return q;
  }

  /** Quoter calls and time of the depth search so far. */
  depthSearchStats(): DepthSearchStats {
    return { ...this.search };
  }

  private buildQuote(snap: PoolSnapshot, sells: Quote[], blockNumber: bigint, eventTime: number, ingestTime: number, gasPrice: bigint | null, ethUsd: number | null, depth?: QuoteDepth): QuoteEvent {
    const { pool } = snap;
    const ladder = this.ladderOf(snap, sells);
    const mid = ratioToNumber(snap.mid.num, snap.mid.den);
    const feeFraction = pool.feeBps / 10_000;
    const gasUsd = this.gasUsdOf(snap, sells, gasPrice, ethUsd);
    const failed = ladder.every((s) => s.buy_price === null && s.sell_price === null);
    if (failed) this.poolFailed(pool, `no quote succeeded at block ${blockNumber}${pool.lastQuoteError ? ` (${pool.lastQuoteError})` : ''}`);
    else pool.lastError = undefined;
    const content: Omit<QuoteEvent, 'event_id'> = {
      pair: pool.pair,
      venue: pool.spec.venue,
      venue_kind: 'dex',
      event_time_ms: eventTime,
      ingest_time_ms: ingestTime,
      source: this.source,
      bid: ladder[0]?.sell_price ?? mid * (1 - feeFraction),
      ask: ladder[0]?.buy_price ?? mid / (1 - feeFraction),
      bid_size: null,
      ask_size: null,
      ladder,
      fee_bps: pool.feeBps,
      fee_included: true,
      gas_usd: gasUsd,
      gas_price_gwei: gasPrice === null ? null : ratioToNumber(gasPrice, 10n ** 9n),
      sequence: Number(blockNumber),
      ...(depth ? { depth } : {}),
    };
    // Identity (chain, pool, block) plus a content digest: the gas price and the depth search's reference are read
    // at the time, so a replica (or a restart re-reading the block) may publish another measurement of it.
    return { event_id: contentEventId(`dex:${this.chain.chain_id}:${(pool.address as string).toLowerCase()}:${blockNumber}`, content), ...content };
  }

  /** Batched through Multicall3 when available, else parallel calls; never throws, one result per call. */
  private async readMany(calls: Call[], blockNumber?: bigint): Promise<CallResult[]> {
    if (calls.length === 0) return [];
    const at = blockNumber === undefined ? {} : { blockNumber };
    if (this.multicallAddress) {
      try {
        const results = await this.client.multicall({
          contracts: calls.map(({ address, abi, functionName, args }) => ({ address, abi, functionName, args })),
          allowFailure: true,
          multicallAddress: this.multicallAddress,
          batchSize: this.options.multicallBatchBytes ?? 8192,
          ...at,
        });
        return results.map((r): CallResult => (r.status === 'success' ? { ok: true, value: r.result } : { ok: false, error: shortError(r.error) }));
      } catch (err) {
        const error = shortError(err);
        return calls.map(() => ({ ok: false, error }));
      }
    }
    return Promise.all(
      calls.map(async ({ address, abi, functionName, args, nonView }): Promise<CallResult> => {
        try {
          const value = nonView
            ? (await this.client.simulateContract({ address, abi, functionName, args, ...at })).result
            : await this.client.readContract({ address, abi, functionName, args, ...at });
          return { ok: true, value };
        } catch (err) {
          return { ok: false, error: shortError(err) };
        }
      }),
    );
  }

  // ---------------------------------------------------------------- start-up checks

  /** Multicall3 detection, pool resolution and checks, gas-pricing pool; each step retried while it failed on RPC errors. */
  private async prepare(): Promise<void> {
    if (this.multicallAddress === undefined) {
      const wanted = this.options.multicall;
      if (wanted === false) this.multicallAddress = null;
      else {
        const address = wanted ?? this.client.chain?.contracts?.multicall3?.address ?? MULTICALL3_ADDRESS;
        try {
          const code = await this.client.getCode({ address });
          this.multicallAddress = code && code !== '0x' ? address : null;
        } catch (err) {
          this.logger.warn({ err: shortError(err) }, 'dex: Multicall3 check failed, retrying next block');
        }
      }
    }
    const pending = this.pools.filter((p) => p.status === 'pending');
    if (pending.length) await Promise.all(pending.map((p) => this.preparePool(p)));
    if (this.ethPool === undefined) await this.resolveEthPool();
  }

  private async preparePool(pool: PoolState): Promise<void> {
    const { spec } = pool;
    const base = getAddress(spec.base_token.address);
    const quote = getAddress(spec.quote_token.address);
    try {
      if (isAddressEqual(base, quote)) return this.disable(pool, 'base and quote are the same token');
      let address = spec.pool ? getAddress(spec.pool) : undefined;
      if (spec.protocol === 'aerodrome_v2' && !this.chain.aerodrome) return this.disable(pool, 'the chain spec has no Aerodrome factory');
      if (!address) {
        const found =
          spec.protocol === 'uniswap_v3'
            ? await this.client.readContract({ address: getAddress(this.chain.uniswap_v3.factory), abi: uniswapV3FactoryAbi, functionName: 'getPool', args: [base, quote, spec.fee_tier] })
            : await this.client.readContract({ address: getAddress(this.chain.aerodrome!.factory), abi: aerodromeFactoryAbi, functionName: 'getPool', args: [base, quote, pool.stable] });
        if (typeof found !== 'string' || isAddressEqual(found as Address, zeroAddress)) {
          return this.disable(
            pool,
            spec.protocol === 'uniswap_v3'
              ? `no Uniswap v3 pool for ${spec.base_token.symbol}/${spec.quote_token.symbol} fee ${spec.fee_tier} at factory ${this.chain.uniswap_v3.factory}`
              : `no Aerodrome ${pool.stable ? 'stable' : 'volatile'} pool for ${spec.base_token.symbol}/${spec.quote_token.symbol}`,
          );
        }
        address = getAddress(found);
      }
      pool.address = address;

      const poolAbi = spec.protocol === 'uniswap_v3' ? uniswapV3PoolAbi : aerodromePoolAbi;
      const checks: Call[] = [
        { address, abi: poolAbi, functionName: 'token0' },
        { address, abi: poolAbi, functionName: 'token1' },
        spec.protocol === 'uniswap_v3' ? { address, abi: uniswapV3PoolAbi, functionName: 'fee' } : { address, abi: aerodromePoolAbi, functionName: 'stable' },
        { address: base, abi: erc20MetadataAbi, functionName: 'decimals' },
        { address: quote, abi: erc20MetadataAbi, functionName: 'decimals' },
      ];
      if (spec.protocol === 'aerodrome_v2') checks.push({ address: getAddress(this.chain.aerodrome!.factory), abi: aerodromeFactoryAbi, functionName: 'getFee', args: [address, pool.stable] });
      const r = await this.readMany(checks);
      const failed = r.find((x) => !x.ok);
      if (failed && !failed.ok) {
        // A contract that is not there answers with an empty result: that is a catalogue problem, not a transient one.
        if (/returned no data|is not a contract|reverted/i.test(failed.error)) return this.disable(pool, `on-chain check failed: ${failed.error}`);
        throw new Error(failed.error);
      }
      const [token0, token1, feeOrStable, baseDecimals, quoteDecimals, aeroFee] = r.map((x) => (x.ok ? x.value : undefined));
      const t0 = String(token0);
      const t1 = String(token1);
      const pairOk = (isAddressEqual(t0 as Address, base) && isAddressEqual(t1 as Address, quote)) || (isAddressEqual(t0 as Address, quote) && isAddressEqual(t1 as Address, base));
      if (!pairOk) return this.disable(pool, `pool ${address} holds ${t0}/${t1}, not ${spec.base_token.symbol} ${base} / ${spec.quote_token.symbol} ${quote}`);
      if (spec.protocol === 'uniswap_v3' && Number(feeOrStable) !== spec.fee_tier) return this.disable(pool, `pool ${address} has fee ${String(feeOrStable)}, catalogue says ${spec.fee_tier}`);
      if (spec.protocol === 'aerodrome_v2' && Boolean(feeOrStable) !== pool.stable) return this.disable(pool, `pool ${address} is ${feeOrStable ? 'stable' : 'volatile'}, catalogue says ${pool.stable ? 'stable' : 'volatile'}`);
      const mismatches = (
        [
          [spec.base_token, Number(baseDecimals)],
          [spec.quote_token, Number(quoteDecimals)],
        ] as const
      )
        .filter(([token, onChain]) => token.decimals !== onChain)
        .map(([token, onChain]) => `${token.symbol} decimals: catalogue ${token.decimals}, on chain ${onChain}`);
      if (mismatches.length) return this.disable(pool, mismatches.join('; '));
      pool.baseIsToken0 = isAddressEqual(t0 as Address, base);
      if (spec.protocol === 'aerodrome_v2' && typeof aeroFee === 'bigint') {
        const onChainBps = Number(aeroFee);
        if (onChainBps !== pool.feeBps) this.logger.warn({ pair: pool.pair, catalogue_bps: pool.feeBps, on_chain_bps: onChainBps }, 'dex: Aerodrome fee differs from the catalogue; using the on-chain fee');
        pool.feeBps = onChainBps;
      }
      pool.status = 'ready';
      pool.lastError = undefined;
      this.logger.info({ pair: pool.pair, venue: spec.venue, pool: address, base_is_token0: pool.baseIsToken0 }, 'dex: pool ready');
    } catch (err) {
      pool.lastError = `resolving: ${shortError(err)}`;
      pool.lastErrorAt = Date.now();
      this.logger.warn({ pair: pool.pair, venue: spec.venue, err: pool.lastError }, 'dex: pool not resolved, retrying next block');
    }
  }

  /** A WETH/USDC Uniswap v3 pool to price gas when the catalogue has none. */
  private async resolveEthPool(): Promise<void> {
    if (this.pools.some((p) => this.isWethUsdc(p.spec) && p.status !== 'disabled')) {
      this.ethPool = null;
      return;
    }
    const weth = getAddress(this.chain.weth.address);
    const usdc = getAddress(this.chain.usdc.address);
    try {
      const calls: Call[] = ETH_POOL_FEE_TIERS.map((fee) => ({ address: getAddress(this.chain.uniswap_v3.factory), abi: uniswapV3FactoryAbi, functionName: 'getPool', args: [weth, usdc, fee] }));
      const results = await this.readMany(calls);
      const hardFailure = results.find((r): r is { ok: false; error: string } => !r.ok && !/returned no data|reverted/i.test(r.error));
      if (hardFailure) throw new Error(hardFailure.error);
      const found = results.map((r) => (r.ok && typeof r.value === 'string' ? (r.value as Address) : zeroAddress)).find((a) => !isAddressEqual(a, zeroAddress));
      this.ethPool = found ? { address: getAddress(found), wethIsToken0: sortsBefore(weth, usdc) } : null;
    } catch (err) {
      this.logger.warn({ err: shortError(err) }, 'dex: WETH/USDC pool lookup failed, retrying next block');
    }
  }

  private isWethUsdc(spec: PoolSpec): boolean {
    return isAddressEqual(getAddress(spec.base_token.address), getAddress(this.chain.weth.address)) && isAddressEqual(getAddress(spec.quote_token.address), getAddress(this.chain.usdc.address));
  }

  private ethPoolDescription(): string | null {
    const catalogue = this.pools.find((p) => this.isWethUsdc(p.spec) && p.status === 'ready');
    if (catalogue) return `${catalogue.pair} ${catalogue.spec.venue} ${catalogue.address}`;
    if (this.ethPool) return `uniswap_v3 ${this.ethPool.address}`;
    return null;
  }

  private disable(pool: PoolState, reason: string): void {
    pool.status = 'disabled';
    pool.disabledReason = reason;
    pool.lastError = undefined;
    this.logger.error({ pair: pool.pair, venue: pool.spec.venue, reason }, 'dex: pool disabled');
  }

  private poolFailed(pool: PoolState, error: string): void {
    if (pool.lastError !== error) this.logger.warn({ pair: pool.pair, venue: pool.spec.venue, err: error }, 'dex: pool read failed');
    pool.lastError = error;
    pool.lastErrorAt = Date.now();
  }
}

function firstBigint(value: unknown): bigint | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'bigint' ? v : undefined;
}

/** viem errors carry a one-line `shortMessage`; the full message has request details (URLs may hold API keys). */
function shortError(err: unknown): string {
  if (err && typeof err === 'object') {
    const short = (err as { shortMessage?: unknown }).shortMessage;
    if (typeof short === 'string' && short) return short.slice(0, 300);
  }
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;
