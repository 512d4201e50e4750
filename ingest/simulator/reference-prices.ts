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
 *  - `cexSpreadBps`: Coinbase's BTC/ETH-USD books quote well under 1 bp in
 *    calm markets, long-tail USD pairs several bps (Kaiko Research, "A
 *    cheatsheet for bid-ask spreads", 2023: USD spreads ~3x USDT ones,
 *    widening with volatility, which the simulator models);
 *  - `poolDepthUsd`: virtual USD reserve of the constant-product stand-in for
 *    each Base pool, so that 1 % of impact costs about poolDepth x 1 %
 *    (order of magnitude of the pools' TVL near the price).
 */
export interface SimPairProfile {
  price: number;
  /** Annualised volatility (0.6 = 60%). */
  vol: number;
  /** Loading on the common market factor (0..1). */
  beta: number;
  /** USD on each side of the simulated constant-product pool (virtual reserves). */
  poolDepthUsd: number;
  /** USD at each CEX book level near the touch, in a calm market. */
  bookLevelUsd: number;
  /** CEX quoted spread in bps, in a calm market. */
  cexSpreadBps: number;
}

export const SIM_PROFILES: Record<string, SimPairProfile> = {
  'ETH/USD': { price: 3000, vol: 0.6, beta: 0.9, poolDepthUsd: 40_000_000, bookLevelUsd: 150_000, cexSpreadBps: 0.5 },
  'cbBTC/USD': {
    price: 90000,
    vol: 0.5,
    beta: 0.9,
    poolDepthUsd: 25_000_000,
    bookLevelUsd: 200_000,
    cexSpreadBps: 0.4,
  },
  'AERO/USD': { price: 1.1, vol: 1.1, beta: 0.7, poolDepthUsd: 8_000_000, bookLevelUsd: 20_000, cexSpreadBps: 4 },
  'cbETH/USD': { price: 3300, vol: 0.6, beta: 0.88, poolDepthUsd: 6_000_000, bookLevelUsd: 30_000, cexSpreadBps: 3 },
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
