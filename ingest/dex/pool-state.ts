/**
 * The DEX ingestor's record of one catalogue pool, shared by its stages.
 * A pool is `pending` until its address and on-chain facts are resolved
 * (pool-resolver.ts; an RPC failure leaves it pending, retried next block),
 * `ready` once they match the catalogue, `disabled` (for good, with the
 * reason) when they do not. A ready pool whose last read failed shows as
 * `failing` in health with the error; it is read again on the next block.
 */
import { getAddress, isAddressEqual, type Address } from 'viem';
import type { Logger } from '../../core/logger.js';
import type { ChainSpec, PoolSpec } from '../../core/markets/pairs.js';
import type { SearchHint } from './depth-search.js';

export type PoolStatus = 'pending' | 'ready' | 'disabled';

export interface PoolState {
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

export function newPoolState(pair: string, spec: PoolSpec): PoolState {
  return {
    pair,
    spec,
    status: 'pending',
    feeBps: spec.fee_tier / 100,
    stable: spec.stable ?? false,
    quoteFailures: 0,
    published: 0,
  };
}

/** Takes the pool out of service for good (its catalogue entry does not match the chain). */
export function disablePool(pool: PoolState, reason: string, logger: Logger): void {
  pool.status = 'disabled';
  pool.disabledReason = reason;
  pool.lastError = undefined;
  logger.error({ pair: pool.pair, venue: pool.spec.venue, reason }, 'dex: pool disabled');
}

/** Records a failed read of the pool (logged when the error changes); the next block tries again. */
export function poolFailed(pool: PoolState, error: string, logger: Logger): void {
  if (pool.lastError !== error)
    logger.warn({ pair: pool.pair, venue: pool.spec.venue, err: error }, 'dex: pool read failed');
  pool.lastError = error;
  pool.lastErrorAt = Date.now();
}

/** The WETH/USDC pool of the chain (its mid prices gas in USD). */
export function isWethUsdc(spec: PoolSpec, chain: ChainSpec): boolean {
  return (
    isAddressEqual(getAddress(spec.base_token.address), getAddress(chain.weth.address)) &&
    isAddressEqual(getAddress(spec.quote_token.address), getAddress(chain.usdc.address))
  );
}

/** The pool's line under `pools` in health. */
export function poolHealth(p: PoolState): Record<string, unknown> {
  return {
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
  };
}

/** Why the pool degrades health, if it does. */
export function poolProblem(p: PoolState): string | undefined {
  if (p.status === 'disabled') return `${p.pair} ${p.spec.venue} disabled: ${p.disabledReason}`;
  if (p.status === 'pending')
    return `${p.pair} ${p.spec.venue} not resolved yet${p.lastError ? `: ${p.lastError}` : ''}`;
  if (p.lastError) return `${p.pair} ${p.spec.venue} failing: ${p.lastError}`;
  return undefined;
}
