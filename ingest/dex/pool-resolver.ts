/**
 * Start-up checks of the DEX ingestor, run before the first block and again
 * before every block until each has succeeded:
 *  - Multicall3 detection (contract-reader.ts);
 *  - each catalogue pool: its address (from the catalogue, else the
 *    factory), then its tokens, fee (Uniswap) or stable flag (Aerodrome) and
 *    both tokens' decimals, checked on chain against the catalogue. A
 *    mismatch, a missing pool or a contract that is not there disables the
 *    pool for good (health says why); an RPC failure leaves it pending and
 *    it is retried on the next block. Aerodrome's fee is taken from its
 *    factory (logged when it differs from the catalogue);
 *  - a WETH/USDC Uniswap v3 pool to price gas when the catalogue has none
 *    (fee tiers tried in the order of ETH_POOL_FEE_TIERS; null when the
 *    factory knows none).
 */
import { getAddress, isAddressEqual, zeroAddress, type Address } from 'viem';
import type { Logger } from '../../core/logger.js';
import type { ChainSpec } from '../../core/markets/pairs.js';
import {
  aerodromeFactoryAbi,
  aerodromePoolAbi,
  erc20MetadataAbi,
  uniswapV3FactoryAbi,
  uniswapV3PoolAbi,
} from './abis.js';
import type { Call, ContractReader, DexClient } from './contract-reader.js';
import { disablePool, isWethUsdc, type PoolState } from './pool-state.js';
import { sortsBefore } from './uniswap-v3-pricing.js';
import { shortError } from './viem-error.js';

/** Fee tiers tried, in order, when looking for a WETH/USDC pool to price gas. */
const ETH_POOL_FEE_TIERS = [500, 3000, 100, 10000];

/** A WETH/USDC Uniswap v3 pool outside the catalogue, read each block to price gas. */
export interface EthPricingPool {
  address: Address;
  wethIsToken0: boolean;
}

export interface PoolResolverOptions {
  client: Pick<DexClient, 'readContract'>;
  contracts: ContractReader;
  chain: ChainSpec;
  pools: PoolState[];
  logger: Logger;
}

export class PoolResolver {
  private eth: EthPricingPool | null | undefined;

  constructor(private readonly options: PoolResolverOptions) {}

  /** The gas-pricing pool outside the catalogue: undefined while not looked up yet, null when there is none (or the catalogue has one). */
  get ethPool(): EthPricingPool | null | undefined {
    return this.eth;
  }

  /** Multicall3 detection, pool resolution and checks, gas-pricing pool; each step retried while it failed on RPC errors. */
  async prepare(): Promise<void> {
    await this.options.contracts.detectMulticall();
    const pending = this.options.pools.filter((p) => p.status === 'pending');
    if (pending.length) await Promise.all(pending.map((p) => this.preparePool(p)));
    if (this.eth === undefined) await this.resolveEthPool();
  }

  /** Where gas is priced from, for health (null: gas is not priced). */
  ethPoolDescription(): string | null {
    const catalogue = this.options.pools.find((p) => isWethUsdc(p.spec, this.options.chain) && p.status === 'ready');
    if (catalogue) return `${catalogue.pair} ${catalogue.spec.venue} ${catalogue.address}`;
    if (this.eth) return `uniswap_v3 ${this.eth.address}`;
    return null;
  }

  private async preparePool(pool: PoolState): Promise<void> {
    const { client, contracts, chain, logger } = this.options;
    const disable = (reason: string) => disablePool(pool, reason, logger);
    const { spec } = pool;
    const base = getAddress(spec.base_token.address);
    const quote = getAddress(spec.quote_token.address);
    try {
      if (isAddressEqual(base, quote)) return disable('base and quote are the same token');
      let address = spec.pool ? getAddress(spec.pool) : undefined;
      if (spec.protocol === 'aerodrome_v2' && !chain.aerodrome)
        return disable('the chain spec has no Aerodrome factory');
      if (!address) {
        const found =
          spec.protocol === 'uniswap_v3'
            ? await client.readContract({
                address: getAddress(chain.uniswap_v3.factory),
                abi: uniswapV3FactoryAbi,
                functionName: 'getPool',
                args: [base, quote, spec.fee_tier],
              })
            : await client.readContract({
                address: getAddress(chain.aerodrome!.factory),
                abi: aerodromeFactoryAbi,
                functionName: 'getPool',
                args: [base, quote, pool.stable],
              });
        if (typeof found !== 'string' || isAddressEqual(found as Address, zeroAddress)) {
          return disable(
            spec.protocol === 'uniswap_v3'
              ? `no Uniswap v3 pool for ${spec.base_token.symbol}/${spec.quote_token.symbol} fee ${spec.fee_tier} at factory ${chain.uniswap_v3.factory}`
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
        spec.protocol === 'uniswap_v3'
          ? { address, abi: uniswapV3PoolAbi, functionName: 'fee' }
          : { address, abi: aerodromePoolAbi, functionName: 'stable' },
        { address: base, abi: erc20MetadataAbi, functionName: 'decimals' },
        { address: quote, abi: erc20MetadataAbi, functionName: 'decimals' },
      ];
      if (spec.protocol === 'aerodrome_v2')
        checks.push({
          address: getAddress(chain.aerodrome!.factory),
          abi: aerodromeFactoryAbi,
          functionName: 'getFee',
          args: [address, pool.stable],
        });
      const r = await contracts.readMany(checks);
      const failed = r.find((x) => !x.ok);
      if (failed && !failed.ok) {
        // A contract that is not there answers with an empty result: that is a catalogue problem, not a transient one.
        if (/returned no data|is not a contract|reverted/i.test(failed.error))
          return disable(`on-chain check failed: ${failed.error}`);
        throw new Error(failed.error);
      }
      const [token0, token1, feeOrStable, baseDecimals, quoteDecimals, aeroFee] = r.map((x) =>
        x.ok ? x.value : undefined,
      );
      const t0 = String(token0);
      const t1 = String(token1);
      const pairOk =
        (isAddressEqual(t0 as Address, base) && isAddressEqual(t1 as Address, quote)) ||
        (isAddressEqual(t0 as Address, quote) && isAddressEqual(t1 as Address, base));
      if (!pairOk)
        return disable(
          `pool ${address} holds ${t0}/${t1}, not ${spec.base_token.symbol} ${base} / ${spec.quote_token.symbol} ${quote}`,
        );
      if (spec.protocol === 'uniswap_v3' && Number(feeOrStable) !== spec.fee_tier)
        return disable(`pool ${address} has fee ${String(feeOrStable)}, catalogue says ${spec.fee_tier}`);
      if (spec.protocol === 'aerodrome_v2' && Boolean(feeOrStable) !== pool.stable)
        return disable(
          `pool ${address} is ${feeOrStable ? 'stable' : 'volatile'}, catalogue says ${pool.stable ? 'stable' : 'volatile'}`,
        );
      const mismatches = (
        [
          [spec.base_token, Number(baseDecimals)],
          [spec.quote_token, Number(quoteDecimals)],
        ] as const
      )
        .filter(([token, onChain]) => token.decimals !== onChain)
        .map(([token, onChain]) => `${token.symbol} decimals: catalogue ${token.decimals}, on chain ${onChain}`);
      if (mismatches.length) return disable(mismatches.join('; '));
      pool.baseIsToken0 = isAddressEqual(t0 as Address, base);
      if (spec.protocol === 'aerodrome_v2' && typeof aeroFee === 'bigint') {
        const onChainBps = Number(aeroFee);
        if (onChainBps !== pool.feeBps)
          logger.warn(
            { pair: pool.pair, catalogue_bps: pool.feeBps, on_chain_bps: onChainBps },
            'dex: Aerodrome fee differs from the catalogue; using the on-chain fee',
          );
        pool.feeBps = onChainBps;
      }
      pool.status = 'ready';
      pool.lastError = undefined;
      logger.info(
        { pair: pool.pair, venue: spec.venue, pool: address, base_is_token0: pool.baseIsToken0 },
        'dex: pool ready',
      );
    } catch (err) {
      pool.lastError = `resolving: ${shortError(err)}`;
      pool.lastErrorAt = Date.now();
      logger.warn(
        { pair: pool.pair, venue: spec.venue, err: pool.lastError },
        'dex: pool not resolved, retrying next block',
      );
    }
  }

  /** A WETH/USDC Uniswap v3 pool to price gas when the catalogue has none. */
  private async resolveEthPool(): Promise<void> {
    const { contracts, chain, logger } = this.options;
    if (this.options.pools.some((p) => isWethUsdc(p.spec, chain) && p.status !== 'disabled')) {
      this.eth = null;
      return;
    }
    const weth = getAddress(chain.weth.address);
    const usdc = getAddress(chain.usdc.address);
    try {
      const calls: Call[] = ETH_POOL_FEE_TIERS.map((fee) => ({
        address: getAddress(chain.uniswap_v3.factory),
        abi: uniswapV3FactoryAbi,
        functionName: 'getPool',
        args: [weth, usdc, fee],
      }));
      const results = await contracts.readMany(calls);
      const hardFailure = results.find(
        (r): r is { ok: false; error: string } => !r.ok && !/returned no data|reverted/i.test(r.error),
      );
      if (hardFailure) throw new Error(hardFailure.error);
      const found = results
        .map((r) => (r.ok && typeof r.value === 'string' ? (r.value as Address) : zeroAddress))
        .find((a) => !isAddressEqual(a, zeroAddress));
      this.eth = found ? { address: getAddress(found), wethIsToken0: sortsBefore(weth, usdc) } : null;
    } catch (err) {
      logger.warn({ err: shortError(err) }, 'dex: WETH/USDC pool lookup failed, retrying next block');
    }
  }
}
