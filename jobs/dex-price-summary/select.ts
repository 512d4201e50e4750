/**
 * From a query to the summary's pair (jobs/dex-price-summary/README.md):
 *  - the query is an EVM address (`0x` + 40 hex), a Solana address (base58,
 *    32-44 characters) or else a symbol (a leading `$` is dropped);
 *  - candidates are the pairs where the token is the BASE token: same
 *    address (EVM: case-insensitive), or for a symbol the same symbol or
 *    name (case-insensitive); when no pair has that symbol, its wrapped form
 *    `W<symbol>` (ETH -> WETH, BTC -> WBTC) is tried;
 *  - the top pair is the candidate with a USD price and the most USD
 *    liquidity; ties by 24h volume, then by pair address (deterministic);
 *  - `totalPairsFound` counts the candidates (DexScreener's search answers
 *    hold at most about 30 pairs, so this is a lower bound for popular tokens).
 */
import { JobError } from '../../core/queue/queue.js';
import type { DexPair } from './dexscreener.js';

export type DexQuery =
  | { kind: 'evm_address'; address: string }
  | { kind: 'solana_address'; address: string }
  | { kind: 'symbol'; symbol: string };

const EVM = /^0x[0-9a-fA-F]{40}$/;
const SOLANA = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

export function classifyQuery(raw: string): DexQuery {
  const q = raw.trim();
  if (!q) throw new JobError('invalid_query', 'query is empty', 400, { field: 'query' });
  if (EVM.test(q)) return { kind: 'evm_address', address: q.toLowerCase() };
  // `0x` and hex digits only is an address attempt, whatever its length (`0x123`): not a symbol to search for.
  if (/^0[xX][0-9a-fA-F]*$/.test(q)) {
    throw new JobError('invalid_query', `${q} looks like an EVM address but is not 0x followed by 40 hex digits`, 400, {
      field: 'query',
    });
  }
  if (SOLANA.test(q) && /\d/.test(q)) return { kind: 'solana_address', address: q };
  const symbol = q.replace(/^\$/, '').trim();
  if (!symbol || symbol.length > 64 || /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}/?#\\]/u.test(symbol)) {
    throw new JobError(
      'invalid_query',
      'query must be a token symbol (e.g. AERO), a token name, or a contract address',
      400,
      { field: 'query' },
    );
  }
  return { kind: 'symbol', symbol };
}

export interface Selection {
  candidates: DexPair[];
  top: DexPair | undefined;
  /** The symbol that matched when the wrapped form was used (`WETH` for `ETH`). */
  matchedSymbol?: string;
}

const liquidityOf = (p: DexPair) => p.liquidity?.usd ?? 0;
const volumeOf = (p: DexPair) => p.volume?.h24 ?? 0;
const usdPrice = (p: DexPair): number | undefined => {
  const v = p.priceUsd === undefined ? Number.NaN : Number(p.priceUsd);
  return Number.isFinite(v) && v > 0 ? v : undefined;
};

export function topPair(candidates: readonly DexPair[]): DexPair | undefined {
  return candidates
    .filter((p) => usdPrice(p) !== undefined)
    .sort(
      (a, b) =>
        liquidityOf(b) - liquidityOf(a) || volumeOf(b) - volumeOf(a) || a.pairAddress.localeCompare(b.pairAddress),
    )[0];
}

export function selectPairs(query: DexQuery, pairs: readonly DexPair[]): Selection {
  if (query.kind === 'evm_address') {
    const candidates = pairs.filter((p) => p.baseToken.address.toLowerCase() === query.address);
    return { candidates, top: topPair(candidates) };
  }
  if (query.kind === 'solana_address') {
    const candidates = pairs.filter((p) => p.baseToken.address === query.address);
    return { candidates, top: topPair(candidates) };
  }
  const wanted = query.symbol.toUpperCase();
  const bySymbol = (s: string) =>
    pairs.filter((p) => p.baseToken.symbol.toUpperCase() === s || p.baseToken.name.toUpperCase() === s);
  const candidates = bySymbol(wanted);
  if (candidates.length === 0 && !wanted.startsWith('W')) {
    const wrapped = bySymbol(`W${wanted}`);
    if (wrapped.length) return { candidates: wrapped, top: topPair(wrapped), matchedSymbol: `W${wanted}` };
  }
  return { candidates, top: topPair(candidates) };
}

export interface Summary {
  symbol: string;
  name: string;
  chainId: string;
  dexId: string;
  priceUsd: number;
  priceNative: string;
  priceChange24h: number | null;
  volume24hUsd: number | null;
  liquidityUsd: number | null;
  pairAddress: string;
  pairUrl: string;
}

export function summarise(pair: DexPair): Summary {
  return {
    symbol: pair.baseToken.symbol,
    name: pair.baseToken.name,
    chainId: pair.chainId,
    dexId: pair.dexId,
    priceUsd: usdPrice(pair) ?? 0,
    priceNative: pair.priceNative,
    priceChange24h: pair.priceChange?.h24 ?? null,
    volume24hUsd: pair.volume?.h24 ?? null,
    liquidityUsd: pair.liquidity?.usd ?? null,
    pairAddress: pair.pairAddress,
    pairUrl: pair.url,
  };
}

/** Why a query breaks the grammar above (the input schema refuses it before the challenge), or undefined. */
export function dexQueryRefusal(raw: string): string | undefined {
  try {
    classifyQuery(raw);
    return undefined;
  } catch (err) {
    if (err instanceof JobError) return err.message;
    throw err;
  }
}
