/**
 * dex-price-summary: a token symbol or contract address -> price, 24h change,
 * 24h volume, liquidity and top pair across chains (the spec's record), from
 * a DEX aggregator in DexScreener's format (dexscreener.ts, select.ts), with
 * the project's own Base pool price for tokens it ingests (own-prices.ts).
 *
 * `source` (jobs/dex-price-summary/README.md):
 *  - `dex-aggregator`: everything from the aggregator's top pair;
 *  - `own-base-pools+dex-aggregator`: the token is in the pairs catalogue and
 *    the store has a fresh live quote from its Base pools: `summary.priceUsd`
 *    is our pool price (details in `ownBasePool`, the aggregator's price in
 *    `aggregatorPriceUsd`); the pair statistics stay the aggregator's. When
 *    the two prices differ by more than 25 % the query matched another token
 *    of the same symbol: the aggregator's price is kept and the source stays
 *    `dex-aggregator`.
 * Not found -> 200 with `found: false`, `summary: null`: a definitive answer
 * (no DEX pair lists the token as its base token), as the spec's `found`
 * field implies. Aggregator failure -> 502, timeout -> 504, rate limit -> 503.
 */
import type { DexPriceSummaryRequest } from './sku.js';
import { errorMessage } from '../../core/errors.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { DexScreenerClient } from './dexscreener.js';
import { matchOwnToken, ownPrice, ownTokens, type OwnPrice } from './own-prices.js';
import { classifyQuery, selectPairs, summarise, type Summary } from './select.js';

/** Beyond this relative gap between our pool price and the aggregator's, they are not the same token. */
export const OWN_PRICE_MAX_DEVIATION = 0.25;

export interface DexPriceSummaryResult {
  success: true;
  query: string;
  found: boolean;
  summary: Summary | null;
  totalPairsFound: number;
  source: 'dex-aggregator' | 'own-base-pools+dex-aggregator';
  /** When the aggregator answer was fetched (answers are cached for DEX_PRICE_CACHE_TTL_MS). */
  asOf: string;
  ownBasePool?: OwnPrice;
  aggregatorPriceUsd?: number;
}

export const createDexPriceSummaryProcessor: ProcessorFactory<DexPriceSummaryRequest, DexPriceSummaryResult> = async ({
  config,
  logger,
  pairs,
  store,
}) => {
  const client = new DexScreenerClient({
    baseUrl: config.DEXSCREENER_BASE_URL,
    timeoutMs: config.DEXSCREENER_TIMEOUT_MS,
    cacheTtlMs: config.DEX_PRICE_CACHE_TTL_MS,
    maxRequestsPerMinute: config.DEXSCREENER_MAX_REQUESTS_PER_MIN,
  });
  const tokens = ownTokens(pairs);

  return {
    handle: async (input, ctx) => {
      const query = classifyQuery(input.query);
      const own = store ? matchOwnToken(tokens, query) : undefined;
      const ownLookup =
        own && store
          ? ownPrice(store, own, config.DEX_PRICE_OWN_MAX_AGE_MS).catch((err: unknown) => {
              // Our own price is an enrichment: a store failure must not fail the call.
              logger.warn(
                { pair: own.pair, error: errorMessage(err) },
                'dex-price-summary: own Base pool price unavailable',
              );
              return undefined;
            })
          : Promise.resolve(undefined);
      const upstream =
        query.kind === 'symbol'
          ? client.search(query.symbol, ctx.signal)
          : client.tokenPairs(query.address, ctx.signal);
      const [answer, ownQuote] = await Promise.all([upstream, ownLookup]);
      const selection = selectPairs(query, answer.pairs);
      const base = {
        success: true as const,
        query: input.query,
        totalPairsFound: selection.candidates.length,
        asOf: new Date(answer.fetchedAt).toISOString(),
      };
      if (!selection.top) return orderNotFound(base);
      const summary = summarise(selection.top);
      if (ownQuote && Math.abs(ownQuote.priceUsd - summary.priceUsd) / summary.priceUsd <= OWN_PRICE_MAX_DEVIATION) {
        return {
          success: true,
          query: input.query,
          found: true,
          summary: { ...summary, priceUsd: ownQuote.priceUsd },
          totalPairsFound: base.totalPairsFound,
          source: 'own-base-pools+dex-aggregator',
          asOf: base.asOf,
          ownBasePool: ownQuote,
          aggregatorPriceUsd: summary.priceUsd,
        };
      }
      if (ownQuote) {
        logger.info(
          { query: input.query, own: ownQuote.priceUsd, aggregator: summary.priceUsd, pair: summary.pairAddress },
          'dex-price-summary: own price and top pair disagree; kept the aggregator price',
        );
      }
      return {
        success: true,
        query: input.query,
        found: true,
        summary,
        totalPairsFound: base.totalPairsFound,
        source: 'dex-aggregator',
        asOf: base.asOf,
      };
    },
  };
};

function orderNotFound(base: {
  success: true;
  query: string;
  totalPairsFound: number;
  asOf: string;
}): DexPriceSummaryResult {
  return {
    success: true,
    query: base.query,
    found: false,
    summary: null,
    totalPairsFound: base.totalPairsFound,
    source: 'dex-aggregator',
    asOf: base.asOf,
  };
}
