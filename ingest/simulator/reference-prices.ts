/**
 * Per-pair profiles of the simulated market: starting price, annualised
 * volatility, loading on the common market factor, Base pool depth, CEX book
 * depth near the touch and the calm-market CEX spread. Pairs not listed get
 * the fallback. Orders of magnitude, not quotes: every value is labelled
 * `simulated` downstream.
 *
 * Calibration notes (the published figures these values follow):
 *  - volatility: majors 50-60 % a year, small caps 100-170 % (realised
 *    volatility of BTC/ETH vs long-tail tokens; Saef, Nagy, Sizov, Härdle,
 *    "Understanding temporal dynamics of jumps in cryptocurrency markets",
 *    Digital Finance 6(4), 2024, studies the same assets at tick level);
 *  - `beta` (loading on the market factor, so corr(i, j) ~ beta_i x beta_j):
 *    ETH/BTC return correlation 0.69-0.86 by quarter in 2019 and altcoins
 *    ~0.69 on average against BTC (Binance Research's 2019 correlation report,
 *    as summarised by CryptoSlate, "Data shows high levels of correlation
 *    between Bitcoin and Ethereum", 2020); 0.9 x 0.9 = 0.81 for the majors,
 *    0.9 x 0.75 ~ 0.68 for the alts; cbETH tracks ETH (0.95);
 *  - `cexSpreadBps` and `tick`: Coinbase's BTC-USD and ETH-USD books quote at
 *    one $0.01 tick nearly all the time (0.03 bp of ETH, 0.001 bp of BTC),
 *    long-tail USD pairs several bps (Kaiko Research, "A cheatsheet for
 *    bid-ask spreads", 2023: USD spreads ~3x USDT ones, widening with
 *    volatility, which the simulator models); ticks are Coinbase's quote
 *    increments in order of magnitude;
 *  - `asset`: the price process a pair quotes. cbETH/USD quotes ETH through
 *    the cbETH exchange rate (`staked`: ~1.1 ETH per cbETH in 2025) and a
 *    premium; cbBTC/USD's CEX leg is Coinbase's BTC-USD book, its pool BTC
 *    with a basis (`wrapped`); calibration.ts says how.
 *  - `poolDepthUsd`: virtual USD reserve of the constant-product stand-in for
 *    each Base pool, so that 1 % of impact costs about poolDepth x 1 %
 *    (order of magnitude of the pools' TVL near the price).
 */
export interface SimPairProfile {
  /** Starting (reference) price of the pair. */
  price: number;
  /** Annualised volatility of its asset (0.6 = 60%). */
  vol: number;
  /** Loading on the common market factor (0..1), calm markets. */
  beta: number;
  /** USD on each side of the simulated constant-product pool (virtual reserves). */
  poolDepthUsd: number;
  /** USD at each CEX book level near the touch, in a calm market. */
  bookLevelUsd: number;
  /** CEX quoted spread in bps, in a calm market (at least one tick). */
  cexSpreadBps: number;
  /** CEX price increment (default: 1e-5 of the price, rounded down to a power of ten). */
  tick?: number;
  /** Price process quoted (default: the pair's own); a pair quoting another's asset takes its vol and beta. */
  asset?: string;
  /** The pair is a staked claim on `asset` (cbETH): price = asset x exchange rate x (1 + premium). */
  staked?: { ratio: number };
  /** The pool's token wraps `asset` (cbBTC): the CEX leg is the asset, the pool carries a basis. */
  wrapped?: boolean;
}

export const SIM_PROFILES: Record<string, SimPairProfile> = {
  'ETH/USD': {
    price: 3000,
    vol: 0.6,
    beta: 0.9,
    poolDepthUsd: 40_000_000,
    bookLevelUsd: 150_000,
    cexSpreadBps: 0.033,
    tick: 0.01,
    asset: 'ETH',
  },
  'cbBTC/USD': {
    price: 90000,
    vol: 0.5,
    beta: 0.9,
    poolDepthUsd: 25_000_000,
    bookLevelUsd: 200_000,
    cexSpreadBps: 0.0011,
    tick: 0.01,
    asset: 'BTC',
    wrapped: true,
  },
  'AERO/USD': { price: 1.1, vol: 1.1, beta: 0.7, poolDepthUsd: 8_000_000, bookLevelUsd: 20_000, cexSpreadBps: 4 },
  'cbETH/USD': {
    price: 3300,
    vol: 0.6,
    beta: 0.9,
    poolDepthUsd: 6_000_000,
    bookLevelUsd: 30_000,
    cexSpreadBps: 3,
    tick: 0.01,
    asset: 'ETH',
    staked: { ratio: 1.1 },
  },
  'DEGEN/USD': { price: 0.005, vol: 1.6, beta: 0.65, poolDepthUsd: 1_500_000, bookLevelUsd: 5_000, cexSpreadBps: 12 },
  'TOSHI/USD': { price: 0.0004, vol: 1.7, beta: 0.6, poolDepthUsd: 1_200_000, bookLevelUsd: 4_000, cexSpreadBps: 15 },
  'VIRTUAL/USD': { price: 1.5, vol: 1.4, beta: 0.7, poolDepthUsd: 3_000_000, bookLevelUsd: 10_000, cexSpreadBps: 6 },
  'WELL/USD': { price: 0.03, vol: 1.2, beta: 0.65, poolDepthUsd: 1_000_000, bookLevelUsd: 4_000, cexSpreadBps: 10 },
  'MORPHO/USD': { price: 2, vol: 1.0, beta: 0.7, poolDepthUsd: 2_000_000, bookLevelUsd: 8_000, cexSpreadBps: 6 },
  'LINK/USD': { price: 15, vol: 0.8, beta: 0.8, poolDepthUsd: 1_500_000, bookLevelUsd: 40_000, cexSpreadBps: 2 },
  'ZORA/USD': { price: 0.08, vol: 1.5, beta: 0.6, poolDepthUsd: 1_500_000, bookLevelUsd: 5_000, cexSpreadBps: 10 },
  'SNX/USD': { price: 1.2, vol: 1.0, beta: 0.7, poolDepthUsd: 600_000, bookLevelUsd: 6_000, cexSpreadBps: 8 },
  'COMP/USD': { price: 50, vol: 0.9, beta: 0.75, poolDepthUsd: 500_000, bookLevelUsd: 8_000, cexSpreadBps: 6 },
};

export const FALLBACK_PROFILE: SimPairProfile = {
  price: 1,
  vol: 1,
  beta: 0.7,
  poolDepthUsd: 1_000_000,
  bookLevelUsd: 5_000,
  cexSpreadBps: 8,
};

/** A price process: its reference price, volatility and calm market loading. */
export interface SimAsset {
  name: string;
  price: number;
  vol: number;
  beta: number;
}

/** The asset a pair quotes: ETH for ETH/USD and cbETH/USD, BTC for cbBTC/USD, else the pair's own. */
export function assetOf(pair: string, profile: SimPairProfile): SimAsset {
  const name = profile.asset ?? pair;
  const owner = Object.values(SIM_PROFILES).find((p) => p.asset === name && !p.staked) ?? profile;
  return { name, price: owner.price, vol: owner.vol, beta: owner.beta };
}

/** The pair's CEX price increment. */
export function tickOf(profile: SimPairProfile): number {
  return profile.tick ?? Math.pow(10, Math.floor(Math.log10(profile.price * 1e-5)));
}
