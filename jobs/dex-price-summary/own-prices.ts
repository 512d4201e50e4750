/**
 * The project's own Base pool prices for tokens it ingests: the pairs
 * catalogue (core/markets/pairs.base.json) names each token's symbols (the
 * pair's base, e.g. ETH, and the pool's base token, e.g. WETH), its Base
 * address and its pools' venues; the DEX ingestor stores a quote per block
 * (table `quotes`). A token is priced from our own data when its newest
 * live quote from one of its Base pools is younger than
 * DEX_PRICE_OWN_MAX_AGE_MS. The price is the mid of that quote's bid and ask
 * (the executable prices at the smallest ladder size, fee included, so the
 * mid is the pool price to within the size's impact).
 *
 * Simulated quotes (MARKET_SOURCE=simulated) are never used: they are not a
 * market price.
 */
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import type { Store } from '../../core/store/store.js';
import { latestQuote } from '../../core/store/tables/quotes.js';
import type { DexQuery } from './select.js';

export interface OwnToken {
  /** Catalogue pair, e.g. `AERO/USD`. */
  pair: string;
  symbols: Set<string>;
  /** Lower-case Base token addresses. */
  addresses: Set<string>;
  venues: string[];
}

export interface OwnPrice {
  pair: string;
  venue: string;
  chainId: 'base';
  priceUsd: number;
  bid: number;
  ask: number;
  quotedAt: string;
  ageMs: number;
}

export function ownTokens(catalogue: PairsCatalogue): OwnToken[] {
  return catalogue.pairs.map((p) => ({
    pair: p.pair,
    symbols: new Set([p.base.toUpperCase(), ...p.dex.map((d) => d.base_token.symbol.toUpperCase())]),
    addresses: new Set(p.dex.map((d) => d.base_token.address.toLowerCase())),
    venues: [...new Set(p.dex.map((d) => d.venue))],
  }));
}

export function matchOwnToken(tokens: readonly OwnToken[], query: DexQuery): OwnToken | undefined {
  if (query.kind === 'evm_address') return tokens.find((t) => t.addresses.has(query.address));
  if (query.kind === 'symbol') {
    const s = query.symbol.toUpperCase();
    return tokens.find((t) => t.symbols.has(s));
  }
  return undefined;
}

export async function ownPrice(
  store: Store,
  token: OwnToken,
  maxAgeMs: number,
  now = Date.now(),
): Promise<OwnPrice | undefined> {
  const q = await latestQuote(store, token.pair, token.venues, now - maxAgeMs);
  if (!q || q.source !== 'live' || !(q.bid > 0) || !(q.ask > 0)) return undefined;
  return {
    pair: token.pair,
    venue: q.venue,
    chainId: 'base',
    priceUsd: Number(((q.bid + q.ask) / 2).toPrecision(12)),
    bid: q.bid,
    ask: q.ask,
    quotedAt: new Date(q.ts_ms).toISOString(),
    ageMs: Math.max(0, now - q.ts_ms),
  };
}
