/**
 * The simulated market's dynamics, in one place, each with the published
 * figure it follows (or saying plainly when it is a modelling choice).
 * Per-pair levels (price, volatility, depth, spread, tick) are in
 * reference-prices.ts; the model in market-model.ts and price-paths.ts; the
 * stylized facts it must show, with their target bands, in stylized-facts.ts
 * (`npm run sim:facts`).
 */
export const CALIBRATION = {
  /**
   * Returns: Student-t innovations (unit variance) for the market factor and
   * each asset. Cont (2001, "Empirical properties of asset returns: stylized
   * facts and statistical issues", Quantitative Finance 1(2)) puts the tail
   * index of intraday returns between 2 and 5; nu = 4 gives a tail index of 4.
   * Aggregation alone would make 1-5 min returns Gaussian: their heavy tails
   * come from the volatility mixture below and the jumps, as Cont's "aggregational
   * Gaussianity ... the shape of the distribution is not the same at different
   * time scales" describes.
   */
  tails: { nu: 4 },
  /**
   * Long-memory volatility: log-volatility is a sum of mean-reverting
   * (Ornstein-Uhlenbeck) components with half-lives from 90 s to 4 days. A few
   * components at geometric time scales reproduce the power-law decay of the
   * |r| autocorrelation over hours (LeBaron, "Stochastic volatility as a simple
   * generator of apparent financial power laws and long memory", Quantitative
   * Finance 1(6), 2001; the cascade of Calvet and Fisher's multifractal model,
   * 2004); Cont (2001) gives the decay as lag^-beta with beta in [0.2, 0.4].
   * Market components are shared by every asset; each asset adds its own.
   * Components of 2 h and more set each hour's variance (the hourly anchors,
   * price-paths.ts); the faster ones and the idiosyncratic ones move
   * volatility within the hour.
   */
  marketVol: [
    { halfLifeS: 90, stationarySd: 0.25 },
    { halfLifeS: 900, stationarySd: 0.3 },
    { halfLifeS: 7200, stationarySd: 0.35 },
    { halfLifeS: 43_200, stationarySd: 0.35 },
    { halfLifeS: 345_600, stationarySd: 0.3 },
  ],
  idioVol: [
    { halfLifeS: 600, stationarySd: 0.2 },
    { halfLifeS: 14_400, stationarySd: 0.2 },
  ],
  /** Market components at least this slow set each hour's variance. */
  slowVolHalfLifeS: 7200,
  /**
   * Intraday seasonality of the variance: 1 + amplitude x cos(2 pi (h - peakHourUtc) / 24),
   * lower at weekends. Bitcoin's volume rises through the European and US
   * day and liquidity is lowest in the early GMT morning; realised volatility
   * is highest at the openings of the major stock markets (Eross, McGroarty,
   * Urquhart and Wolfe, "The intraday dynamics of bitcoin",
   * Research in International Business and Finance 49, 2019; Baur, Cahill,
   * Godfrey and Liu, "Bitcoin time-of-day, day-of-week and month-of-year effects
   * in returns and trading volume", Finance Research Letters 31, 2019).
   */
  seasonality: { amplitude: 0.35, peakHourUtc: 14.5, weekendVariance: 0.75 },
  /**
   * A correlation that tightens in stress: each asset's loading on the market
   * factor moves from its calm beta towards stressBeta as the market
   * log-volatility rises from stressFrom to stressFull (Longin and Solnik,
   * "Extreme correlation of international equity markets", Journal of Finance
   * 56(2), 2001: correlation rises in bear markets; Saef et al. 2024 below:
   * crypto jumps cluster and co-occur across coins). Tying the tightening to
   * volatility rather than to the sign of returns is a modelling choice.
   */
  stress: { beta: 0.97, fromLogVol: 0.2, fullLogVol: 0.8 },
  /**
   * Jumps: Saef, Nagy, Sizov and Härdle ("Understanding temporal dynamics of
   * jumps in cryptocurrency markets", Digital Finance 6(4), 2024) find jumps on
   * up to 58 % of trading days, negative ones more frequent and larger, and
   * jumps that "systematically cluster over time, especially in Bitcoin and
   * Ethereum". Market-wide co-jumps and per-asset jumps are compound Poisson
   * (rate scaled by the volatility, so they cluster), double-exponential
   * (Kou) sizes, 60 % downward; a market jump lifts log-volatility by
   * volAfterJump, decaying with volAfterJumpHalfLifeS. Rates are set above the
   * detection frequency (a few a day) so that a day of simulation shows some;
   * sizes in bps scale with the asset's volatility relative to 60 %.
   */
  jumps: {
    marketPerDay: 4,
    assetPerDay: 3,
    meanSizeBps: 35,
    downShare: 0.6,
    volAfterJump: 0.6,
    volAfterJumpHalfLifeS: 1800,
  },
  /**
   * Price level: the hourly anchors of each asset's log price mean-revert to
   * the profile price with a 30-day half-life (stationary sd ~15 % for a 60 %
   * volatility), so any window of any year trades near the reference levels.
   * Over a day the pull is 2 % of a standard deviation: the path is a random
   * walk at every horizon the product serves (a modelling choice).
   */
  level: { halfLifeDays: 30 },
  /**
   * cbETH is staked ETH: its price is ETH x the cbETH exchange rate (growing
   * at the staking yield, ~3 % a year) x (1 + a premium). The premium of a
   * liquid staking token to its underlying varies over time, wider when
   * returns are volatile and liquidity low (Scharnowski and Jahanshahloo, "The
   * economics of liquid staking derivatives: basis determinants and price
   * discovery", Journal of Futures Markets 45(2), 2025; stETH's June 2022
   * discount of several percent is the stress case, not the norm): here a
   * mean-reverting OU with sd 8 bps and a 12 h half-life (the size is a
   * modelling choice for cbETH on a quiet day).
   */
  staked: { yieldPerYear: 0.03, premiumSdBps: 8, premiumHalfLifeS: 43_200 },
  /**
   * cbBTC is BTC (Coinbase redeems it 1:1): the CEX leg is Coinbase's BTC-USD
   * book; the Base pool prices cbBTC with a small basis of its own (an OU with
   * sd 3 bps and a 6 h half-life, a modelling choice: the cost of minting and
   * bridging, not a published figure).
   */
  wrapped: { basisSdBps: 3, basisHalfLifeS: 21_600 },
  /**
   * CEX book. Coinbase's BTC-USD and ETH-USD books sit at one tick ($0.01)
   * nearly all the time; long-tail USD pairs quote several bps (Kaiko
   * Research, "A cheatsheet for bid-ask spreads", 2023: USD spreads ~3x USDT
   * ones, widening when volatility rises as market makers hedge). The spread
   * (in ticks, at least one) is the pair's calm spread x vol^spreadElasticity x
   * a liquidity state of its own (an OU, sd 0.35, 5 min half-life) x a
   * per-tick draw (sd 0.15): it widens in stress without being a deterministic
   * power of volatility. Level spacing widens and the depth at each level thins
   * (vol^-0.8) as volatility rises; per-level sizes vary lognormally (sd 0.35).
   * Elasticities are modelling choices.
   */
  book: {
    spreadElasticity: 0.6,
    spreadLiquidity: { halfLifeS: 300, stationarySd: 0.35 },
    spreadTickSd: 0.15,
    levelElasticity: 0.8,
    depthElasticity: -0.8,
    levelSizeSd: 0.35,
  },
  /**
   * DEX pools follow the CEX through arbitrageurs, a few blocks late: the pool
   * tracks an exponentially weighted average of the CEX mid over the last
   * `lagBlocks` blocks (weight lagDecay^j, a mean lag of 1.5 blocks), plus
   * retail flow inside the no-arbitrage band (an OU, sd bandNoiseShare x the
   * pool fee, half-life 4 blocks). The loss-versus-rebalancing model of
   * Milionis, Moallemi, Roughgarden and Zhang (2022) has the pool trail the CEX
   * this way. Heimbach, Pahari and Schertenleib ("Non-atomic arbitrage in
   * decentralized finance", IEEE S&P 2024) find CEX-DEX arbitrage volume
   * correlated with volatility (0.725 with ETH's): shocks arrive at a rate
   * growing with the market volatility, and more often in thin pools (rate x
   * sqrt(10 M USD / pool depth), within [0.7, 1.5]: a swap of a given size
   * moves a thin pool further; a modelling choice).
   *
   * Dislocations: a pool is knocked away (a large swap, a liquidation) by a
   * Pareto-sized gap (tail index 1.7, from 12 bps, at most 800) that lasts a
   * heavy-tailed number of blocks: discrete Pareto from 10 blocks with tail
   * index 1.4 (median 16, mean ~28 before the cap, p90 ~51 blocks), at most
   * 150; a gap larger than quickCloseBps pays more than it costs to close, so
   * its duration shrinks in proportion (a 400 bps gap lasts a tenth as long),
   * and the largest gap shrinks with the pool's depth (shockMaxBps x the
   * square of the depth scale). Gogol et al.
   * ("Cross-Rollup MEV: Non-Atomic Arbitrage Across L2 Blockchains", arXiv
   * 2406.02172, 2024), studying arbitrage between rollups and with CEXs, find price
   * differences on L2 DEXes persisting 10-20 blocks on average; the rate of
   * shocks is a modelling choice.
   */
  dex: {
    lagBlocks: 8,
    lagDecay: 0.6,
    bandNoiseShare: 0.25,
    bandNoiseHalfLifeBlocks: 4,
    shocksPerHour: 12,
    shockDepthRefUsd: 10_000_000,
    shockDepthScale: [0.7, 1.5],
    shockTailIndex: 1.7,
    shockMinBps: 12,
    shockMaxBps: 800,
    quickCloseBps: 40,
    durationMinBlocks: 10,
    durationTailIndex: 1.4,
    durationMaxBlocks: 150,
    /**
     * Pool liquidity (USD reserve) moves as LPs add and withdraw: a log-OU
     * (sd 0.3, half-life 1 h) that thins by 0.3 x the market log-volatility
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
   * Outages per venue (the CEX, the Base RPC) at random (seeded) times: no
   * quotes and failed probes for a lognormal time (median 25 s, sd 0.8 in logs,
   * at most 10 min), 2 a day each. Not calibrated to a published rate (exchange
   * status pages list incidents, not per-minute availability); a modelling
   * choice so that gaps, expiries and failed probes occur in long runs.
   */
  outages: { perDay: 2, medianS: 25, logSd: 0.8, maxS: 600 },
} as const;
