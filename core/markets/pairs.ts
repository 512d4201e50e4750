/**
 * The pairs catalogue: each `<BASE>/USD` pair with its CEX market (ccxt
 * unified symbol) and its Base pools, with the USD leg (USDC) explicit.
 * Data lives in a JSON file (`PAIRS_FILE`, default `core/markets/pairs.base.json`)
 * so pairs change without code edits; this module validates it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Pair, Venue } from '../events/market.js';

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address');

export const TokenSpec = z.object({
  symbol: z.string().min(1),
  address: Address,
  decimals: z.number().int().min(0).max(36),
});
export type TokenSpec = z.infer<typeof TokenSpec>;

export const PoolSpec = z.object({
  venue: Venue,
  protocol: z.enum(['uniswap_v3', 'aerodrome_v2']),
  /** Pool address; when absent it is resolved from the protocol's factory at start-up. */
  pool: Address.optional(),
  base_token: TokenSpec,
  /** The USD leg: USDC on Base. */
  quote_token: TokenSpec,
  /** Uniswap v3 fee tier in hundredths of a bip (500 = 0.05%); Aerodrome: pool fee in the same unit. */
  fee_tier: z.number().int().nonnegative(),
  /** Aerodrome only: stable (sAMM) or volatile (vAMM) pool. */
  stable: z.boolean().optional(),
});
export type PoolSpec = z.infer<typeof PoolSpec>;

export const PairSpec = z.object({
  pair: Pair,
  base: z.string().min(1),
  cex: z.object({
    /** ccxt unified symbol on the configured exchange, e.g. `ETH/USD`. */
    symbol: z.string().min(3),
  }),
  dex: z.array(PoolSpec).min(1),
});
export type PairSpec = z.infer<typeof PairSpec>;

export const ChainSpec = z.object({
  chain_id: z.number().int().positive(),
  name: z.string(),
  usdc: TokenSpec,
  weth: TokenSpec,
  uniswap_v3: z.object({ factory: Address, quoter_v2: Address }),
  aerodrome: z.object({ factory: Address, router: Address }).optional(),
});
export type ChainSpec = z.infer<typeof ChainSpec>;

export const PairsCatalogue = z
  .object({
    chain: ChainSpec,
    /** CEX taker fee in bps used by net-spread calculations (the exchange's public tier-1 taker fee). */
    cex_taker_fee_bps: z.number().nonnegative(),
    pairs: z.array(PairSpec).min(1),
  })
  .superRefine((cat, ctx) => {
    const seen = new Set<string>();
    cat.pairs.forEach((p, i) => {
      if (seen.has(p.pair))
        ctx.addIssue({ code: 'custom', path: ['pairs', i, 'pair'], message: `duplicate pair ${p.pair}` });
      seen.add(p.pair);
      if (p.pair !== `${p.base}/USD`)
        ctx.addIssue({
          code: 'custom',
          path: ['pairs', i, 'pair'],
          message: `pair ${p.pair} does not match base ${p.base}`,
        });
    });
  });
export type PairsCatalogue = z.infer<typeof PairsCatalogue>;

export const DEFAULT_PAIRS_FILE = fileURLToPath(new URL('./pairs.base.json', import.meta.url));

export function loadPairs(file = DEFAULT_PAIRS_FILE): PairsCatalogue {
  const parsed = PairsCatalogue.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`PAIRS_FILE=${file} is invalid: ${problems}`);
  }
  return parsed.data;
}

/** `ETH-USD` and `eth/usd` are accepted spellings of `ETH/USD`; returns the catalogue's spelling or undefined. */
export function normalisePair(catalogue: PairsCatalogue, input: string): string | undefined {
  const wanted = input.trim().replace('-', '/').toUpperCase();
  return catalogue.pairs.find((p) => p.pair.toUpperCase() === wanted)?.pair;
}
