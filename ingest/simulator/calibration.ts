/**
 * The simulated market's dynamics, in one place, each with the published
 * figure it follows (or saying plainly when it is a modelling choice).
 * Per-pair levels (price, volatility, depth, spread) are in reference-prices.ts.
 */
export const CALIBRATION = {
  /**
   * Common volatility factor: log-volatility mean-reverts (half-life 30 min)
   * around 0 with a stationary standard deviation of 0.45, and jumps up after
   * a market-wide jump. Volatility clusters, and jumps cluster around stress
   * events (Saef et al., Digital Finance 6(4), 2024: jumps "systematically
   * cluster over time, especially in Bitcoin and Ethereum").
   */
  volFactor: { halfLifeS: 1800, stationarySd: 0.45, afterJump: 0.6 },
  /** Per-pair idiosyncratic log-volatility (same process, smaller). */
  idioVol: { halfLifeS: 3600, stationarySd: 0.25 },
  /**
   * Jumps: Saef et al. (2024) find jumps on up to 58 % of trading days, with
   * negative jumps more frequent and larger. Market-wide co-jumps and
   * per-pair jumps are compound Poisson with double-exponential (Kou) sizes,
   * 60 % downward. The rates are set above the detection frequency (a few a
   * day instead of ~0.6) so that an hour of simulation shows some; sizes in
   * bps are scaled by the pair's volatility relative to 60 %.
   */
  jumps: { marketPerDay: 4, pairPerDay: 3, meanSizeBps: 35, downShare: 0.6 },
  /**
   * CEX book: the spread and the level spacing widen, and the depth at each
   * level thins, as volatility rises (Kaiko Research 2023: spreads widen when
   * volatility rises as market makers hedge). Elasticities are modelling
   * choices: spread ~ vol^0.8, depth ~ vol^-0.8; per-level sizes vary
   * lognormally (sd 0.35) tick to tick.
   */
  book: { spreadElasticity: 0.8, depthElasticity: -0.8, levelSizeSd: 0.35 },
  /**
   * DEX pools follow the CEX through arbitrageurs who trade the pool back to
   * the edge of the no-arbitrage band (pool fee + CEX fee + gas) when the gap
   * pays (the loss-versus-rebalancing model of Milionis, Moallemi,
   * Roughgarden and Zhang, 2022), on a share of the blocks. Heimbach, Pahari
   * and Schertenleib ("Non-atomic arbitrage in decentralized finance", IEEE
   * S&P 2024) find CEX-DEX arbitrage volume correlated with volatility
   * (0.725 with ETH's, 0.729 with BTC's): shocks arrive at a rate
   * proportional to the volatility factor.
   *
   * Dislocations: a pool is knocked away from the CEX (a large swap, a
   * liquidation) by a Pareto-distributed size (tail index 1.7, from 10 bps,
   * at most 800 bps) and arbitrage of that pool pauses for a lognormal time
   * (median 4 s, sd 1.0 in logs: a few blocks usually, minutes in the tail).
   * Heavy tails as in the cross-domain arbitrage literature (Heimbach et al.
   * 2024; "Empirical analysis of cross domain CEX <> DEX arbitrage on
   * Ethereum", ethresear.ch, 2023): most gaps are small and short, a few are
   * large and long. The rates are modelling choices.
   */
  dex: {
    arbitrageShare: 0.8,
    arbitrageThresholdBps: 12,
    shocksPerHour: 12,
    shockTailIndex: 1.7,
    shockMinBps: 10,
    shockMaxBps: 800,
    pauseMedianS: 4,
    pauseLogSd: 1.0,
    pauseMaxS: 300,
    /** Retail flow: per-block log move, as a share of the pair's per-block volatility. */
    retailShare: 0.3,
    /**
     * Pool liquidity (USD reserve) moves as LPs add and withdraw: a log-OU
     * (sd 0.3, half-life 1 h) that thins by 0.3 x the volatility factor
     * (liquidity providers pull out when volatility rises; a modelling choice).
     */
    liquidity: { halfLifeS: 3600, stationarySd: 0.3, volElasticity: -0.3 },
  },
  /**
   * Gas on Base: the L2 base fee sits at its floor most of the time (Base
   * docs, "Network fees": minimum base fee 0.005 gwei since the Jovian
   * upgrade, rising above it only under congestion), so the gas price here
   * is a log-OU around 0.012 gwei floored at 0.005, with congestion spikes
   * (x5-x50, decaying with a 30 s half-life, 3 a day). A Uniswap v3 swap's
   * quoter gas estimate is 110k-180k units.
   */
  gas: {
    floorGwei: 0.005,
    typicalGwei: 0.012,
    logSd: 0.3,
    halfLifeS: 600,
    spikesPerDay: 3,
    spikeMin: 5,
    spikeMax: 50,
    spikeHalfLifeS: 30,
    swapGasMin: 110_000,
    swapGasMax: 180_000,
  },
  /**
   * Venue latency: lognormal round trips (CEX REST median 70 ms, Base RPC
   * median 25 ms) with 2 % outliers (x2-x30, Pareto tail index 1.5). Exchange
   * API benchmarks report p99 of 4-5 x p50 (e.g. p50 28 ms, p99 142 ms for a
   * large exchange's REST API), which the outliers produce; the lognormal
   * alone would give 2 x.
   */
  latency: {
    cex: { medianMs: 70, logSd: 0.3 },
    rpc: { medianMs: 25, logSd: 0.4 },
    outlierShare: 0.02,
    outlierTailIndex: 1.5,
    outlierMax: 30,
    timeoutMs: 5000,
    /** Event time to ingest time: the feed's own delivery delay (median, lognormal sd 0.6). */
    cexIngestMedianMs: 8,
    dexIngestMedianMs: 60,
  },
  /**
   * Rare outages per venue (the CEX, the Base RPC): no quotes and failed
   * probes for a lognormal time (median 25 s, sd 0.8 in logs, at most 10 min),
   * 2 a day each. Not calibrated to a published rate (exchange status pages
   * list incidents, not per-minute availability); a modelling choice so that
   * gaps, expiries and failed probes occur in long runs.
   */
  outages: { perDay: 2, medianS: 25, logSd: 0.8, maxS: 600 },
} as const;
