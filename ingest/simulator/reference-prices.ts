/**
 * Starting prices and per-pair behaviour for the simulated market: plausible
 * orders of magnitude, annualised volatility, and Base pool depth. Pairs not
 * listed get the fallback.
 */
export interface SimPairProfile {
  price: number;
  /** Annualised volatility (0.6 = 60%). */
  vol: number;
  /** USD on each side of the simulated constant-product pool. */
  poolDepthUsd: number;
  /** USD at each CEX book level near the touch. */
  bookLevelUsd: number;
  /** CEX quoted spread in bps. */
  cexSpreadBps: number;
}

export const SIM_PROFILES: Record<string, SimPairProfile> = {
  'ETH/USD': { price: 3000, vol: 0.6, poolDepthUsd: 40_000_000, bookLevelUsd: 150_000, cexSpreadBps: 0.5 },
  'cbBTC/USD': { price: 90000, vol: 0.5, poolDepthUsd: 25_000_000, bookLevelUsd: 200_000, cexSpreadBps: 0.4 },
  'AERO/USD': { price: 1.1, vol: 1.1, poolDepthUsd: 8_000_000, bookLevelUsd: 20_000, cexSpreadBps: 4 },
  'cbETH/USD': { price: 3300, vol: 0.6, poolDepthUsd: 6_000_000, bookLevelUsd: 30_000, cexSpreadBps: 3 },
  'DEGEN/USD': { price: 0.005, vol: 1.6, poolDepthUsd: 1_500_000, bookLevelUsd: 5_000, cexSpreadBps: 12 },
  'TOSHI/USD': { price: 0.0004, vol: 1.7, poolDepthUsd: 1_200_000, bookLevelUsd: 4_000, cexSpreadBps: 15 },
  'VIRTUAL/USD': { price: 1.5, vol: 1.4, poolDepthUsd: 3_000_000, bookLevelUsd: 10_000, cexSpreadBps: 6 },
  'WELL/USD': { price: 0.03, vol: 1.2, poolDepthUsd: 1_000_000, bookLevelUsd: 4_000, cexSpreadBps: 10 },
  'MORPHO/USD': { price: 2, vol: 1.0, poolDepthUsd: 2_000_000, bookLevelUsd: 8_000, cexSpreadBps: 6 },
  'LINK/USD': { price: 15, vol: 0.8, poolDepthUsd: 1_500_000, bookLevelUsd: 40_000, cexSpreadBps: 2 },
  'ZORA/USD': { price: 0.08, vol: 1.5, poolDepthUsd: 1_500_000, bookLevelUsd: 5_000, cexSpreadBps: 10 },
  'SNX/USD': { price: 1.2, vol: 1.0, poolDepthUsd: 600_000, bookLevelUsd: 6_000, cexSpreadBps: 8 },
  'COMP/USD': { price: 50, vol: 0.9, poolDepthUsd: 500_000, bookLevelUsd: 8_000, cexSpreadBps: 6 },
};

export const FALLBACK_PROFILE: SimPairProfile = { price: 1, vol: 1, poolDepthUsd: 1_000_000, bookLevelUsd: 5_000, cexSpreadBps: 8 };
