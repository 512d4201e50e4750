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
 * has Multicall3, otherwise parallel calls.
 *
 * Prices in an event (quote-publisher.ts has the details): the ladder's
 * executable prices per size (pool fee included, `fee_included: true`; null
 * when the quote failed or the pool ran out of liquidity); bid / ask = the
 * executable prices at the smallest size, else the pool's marginal prices
 * (the schema has no mid field; health shows each pool's last mid); `gas_usd`
 * = the quoter's gasEstimate for the smallest buy × gas price × ETH/USD
 * (ETH/USD: the mid of the WETH/USDC pool when it is in the catalogue, else
 * of a WETH/USDC pool found through the factory; null when there is none).
 * The quoter's estimate covers the pool swap, not the 21k intrinsic gas, the
 * router's overhead or Base's L1 data fee; Aerodrome has no quoter: a fixed
 * AERODROME_SWAP_GAS_ESTIMATE is used. Latency: `kind: 'dex_rpc'`, venue
 * `base_rpc` (one endpoint serves all pools), endpoint `eth_gasPrice`.
 *
 * This class wires the stages and owns the run (start, stop, health):
 *  - block-follower.ts: block subscription/polling, skipped and missed blocks;
 *  - pool-resolver.ts, pool-state.ts: start-up checks and each pool's record
 *    (a catalogue mismatch disables a pool, an RPC failure leaves it pending,
 *    retried on the next block);
 *  - contract-reader.ts, pool-reader.ts: batched reads, pool states, quotes;
 *  - depth-measurement.ts: the depth search wired to the quoter;
 *  - quote-publisher.ts: quote building and publishing;
 *  - rpc-latency-probe.ts: the timed eth_gasPrice.
 * Their public names are re-exported here: callers import this module.
 */
import { getAddress, type Address } from 'viem';
import type { Bus } from '../../core/bus/bus.js';
import type { ProbeResult } from '../../core/health.js';
import type { Logger } from '../../core/logger.js';
import type { ChainSpec, PoolSpec } from '../../core/markets/pairs.js';
import type { ReferenceBook } from './depth-search.js';
import { BlockFollower } from './block-follower.js';
import { ContractReader, type DexClient } from './contract-reader.js';
import { DepthMeasurement, type DepthSearchStats } from './depth-measurement.js';
import { PoolReader } from './pool-reader.js';
import { PoolResolver } from './pool-resolver.js';
import { newPoolState, poolHealth, poolProblem, type PoolState } from './pool-state.js';
import { QuotePublisher } from './quote-publisher.js';
import { RpcLatencyProbe } from './rpc-latency-probe.js';

export { MULTICALL3_ADDRESS, type DexClient } from './contract-reader.js';
export { AERODROME_SWAP_GAS_ESTIMATE } from './pool-reader.js';
export type { DepthSearchStats } from './depth-measurement.js';

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

export class DexIngestor {
  private readonly pools: PoolState[];
  private readonly contracts: ContractReader;
  private readonly resolver: PoolResolver;
  private readonly reader: PoolReader;
  private readonly depth: DepthMeasurement;
  private readonly probe: RpcLatencyProbe;
  private readonly publisher: QuotePublisher;
  private readonly follower: BlockFollower;

  constructor(private readonly options: DexIngestorOptions) {
    const { client, chain, bus, logger, source } = options;
    const ladder = [...new Set(options.ladderUsd)].sort((a, b) => a - b);
    if (ladder.length === 0 || ladder.length > 16 || ladder.some((s) => !(s > 0) || !Number.isFinite(s))) {
      throw new Error(`ladderUsd must hold 1 to 16 positive sizes, got ${JSON.stringify(options.ladderUsd)}`);
    }
    const latencyVenue = options.latencyVenue ?? 'base_rpc';
    this.pools = options.pools.map(({ pair, spec }) => newPoolState(pair, spec));
    this.contracts = new ContractReader({
      client,
      multicall: options.multicall,
      batchBytes: options.multicallBatchBytes,
      logger,
    });
    this.resolver = new PoolResolver({ client, contracts: this.contracts, chain, pools: this.pools, logger });
    this.reader = new PoolReader({
      client,
      contracts: this.contracts,
      chain,
      quoterV2: getAddress(chain.uniswap_v3.quoter_v2),
      ladder,
      logger,
    });
    this.depth = new DepthMeasurement({
      contracts: this.contracts,
      reader: this.reader,
      ladderSize: ladder.length,
      search: { impactBps: options.depthImpactBps ?? 100, maxUsd: options.depthMaxUsd ?? 50_000_000 },
      reference: options.reference,
      logger,
    });
    this.probe = new RpcLatencyProbe({ client, chainId: chain.chain_id, latencyVenue, source });
    this.publisher = new QuotePublisher({
      reader: this.reader,
      chainId: chain.chain_id,
      latencyVenue,
      source,
      bus,
      logger,
    });
    this.follower = new BlockFollower({
      client,
      pollingIntervalMs: options.pollingIntervalMs,
      staleAfterMs: options.staleAfterMs ?? 30000,
      processBlock: (blockNumber) => this.processBlock(blockNumber),
      poolCount: this.pools.length,
      logger,
    });
  }

  /** Resolves and checks the pools (best effort: RPC failures are retried per block), then follows new blocks. */
  async start(): Promise<void> {
    await this.follower.start(() => this.resolver.prepare());
  }

  /** Stops following blocks; resolves once the block in progress (if any) is published. */
  async stop(): Promise<void> {
    await this.follower.stop();
  }

  /** Quoter calls and time of the depth search so far. */
  depthSearchStats(): DepthSearchStats {
    return this.depth.stats();
  }

  health(): ProbeResult {
    const problems = this.follower.problems(Date.now());
    for (const p of this.pools) {
      const problem = poolProblem(p);
      if (problem) problems.push(problem);
    }
    const { gasError, lastRttMs } = this.probe;
    const { quotesPublished, latencyPublished, publishError } = this.publisher.counts();
    if (gasError) problems.push(`gas price read failing: ${gasError}`);
    if (publishError) problems.push(`publish failing: ${publishError}`);

    return {
      status: problems.length ? 'degraded' : 'ok',
      adapter: 'viem',
      ...(problems.length ? { reason: problems.join('; ') } : {}),
      source: this.options.source,
      chain_id: this.options.chain.chain_id,
      multicall: this.contracts.multicallAddress ?? null,
      ...this.follower.health(),
      last_rtt_ms: lastRttMs ?? null,
      quotes_published: quotesPublished,
      latency_published: latencyPublished,
      depth_search: this.depth.health(),
      gas_pricing_pool: this.resolver.ethPoolDescription(),
      pools: this.pools.map(poolHealth),
    };
  }

  /** One block: the steps of the header, then the block's quotes and latency sample on the bus. */
  private async processBlock(blockNumber: bigint): Promise<void> {
    await this.resolver.prepare();
    const ingestStart = Date.now();
    const sample = await this.probe.sample();
    const { gasPrice } = sample;
    const ready = this.pools.filter((p) => p.status === 'ready');
    const { snapshots, timestampMs, ethUsd } = await this.reader.readStatesAndBuys(
      ready,
      blockNumber,
      this.resolver.ethPool,
    );
    const sells = await this.reader.readSells(snapshots, blockNumber);
    const depths = await this.depth.measure(snapshots, sells, blockNumber, gasPrice, ethUsd);
    const ingestTime = Date.now();
    await this.publisher.publishBlock({
      blockNumber,
      snapshots,
      sells,
      depths,
      gasPrice,
      ethUsd,
      eventTime: timestampMs ?? ingestStart,
      ingestTime,
      latency: this.probe.event(blockNumber, sample, ingestStart, ingestTime),
    });
  }
}
