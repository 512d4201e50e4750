/**
 * How x-sentiment reads its `topic`: a ticker (`$ETH`, `eth`, `ETH/USD`,
 * `ethereum`), a short topic ("Base DEX volumes") or a text sample to score
 * (six words or more). A ticker, or a cashtag inside a topic or text, that
 * names a pair of the catalogue (`deps.pairs`) brings the gateway's own
 * market telemetry in.
 */
import type { PairsCatalogue, PairSpec } from '../../core/markets/pairs.js';
import { countWords } from '../../core/ai/text.js';

export type TopicKind = 'ticker' | 'topic' | 'text';

export interface ParsedTopic {
  kind: TopicKind;
  /** The catalogue pair the topic names, if any. */
  pair: PairSpec | null;
  /** The ticker symbol as the topic wrote it (upper case), if it is or contains one. */
  symbol: string | null;
  /** Search query for the X API (ticker and topic kinds). */
  query: string | null;
}

/** Common names of the bases the default catalogue ingests (a pair must exist for a name to count). */
const NAMES: Record<string, string> = {
  ethereum: 'ETH',
  ether: 'ETH',
  bitcoin: 'cbBTC',
  btc: 'cbBTC',
  aerodrome: 'AERO',
  degen: 'DEGEN',
  toshi: 'TOSHI',
  virtuals: 'VIRTUAL',
  moonwell: 'WELL',
  morpho: 'MORPHO',
  chainlink: 'LINK',
  zora: 'ZORA',
  synthetix: 'SNX',
  compound: 'COMP',
};

/** Names that are not also ordinary words. */
const UNAMBIGUOUS_NAMES = new Set([
  'ethereum',
  'bitcoin',
  'btc',
  'chainlink',
  'aerodrome',
  'moonwell',
  'synthetix',
  'morpho',
  'virtuals',
]);

const TICKER = /^[$#]?([A-Za-z][A-Za-z0-9]{1,14})(?:\s*[/-]\s*USD[CT]?)?$/u;
const CASHTAG = /(?:^|[\s(])\$([A-Za-z][A-Za-z0-9]{1,14})\b/gu;
const TEXT_MIN_WORDS = 6;

function findPair(pairs: PairsCatalogue, word: string): PairSpec | null {
  const lower = word.toLowerCase();
  const direct = pairs.pairs.find((p) => p.base.toLowerCase() === lower);
  if (direct) return direct;
  const alias = NAMES[lower];
  return alias ? (pairs.pairs.find((p) => p.base === alias) ?? null) : null;
}

/** X search operators are stripped from free text; retweets are left out. */
function topicQuery(topic: string): string {
  const cleaned = topic
    .replace(/["()]/gu, ' ')
    .replace(/\b(?:OR|AND)\b/gu, ' ')
    .replace(/(?:^|\s)-\S+/gu, ' ')
    .replace(/\b\w+:\S+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim()
    .slice(0, 200);
  return `${cleaned} -is:retweet`;
}

export function parseTopic(topic: string, pairs: PairsCatalogue): ParsedTopic {
  const trimmed = topic.trim();
  const ticker = TICKER.exec(trimmed);
  const single = ticker?.[1];
  if (single) {
    const pair = findPair(pairs, single);
    const isSymbol =
      pair !== null || /^[$#]/u.test(trimmed) || /^[A-Z0-9]{2,10}$/u.test(single) || /USD/iu.test(trimmed);
    if (isSymbol) {
      const symbol = (pair?.base ?? single).toUpperCase();
      const name = Object.entries(NAMES).find(([, base]) => base.toUpperCase() === symbol)?.[0];
      return {
        kind: 'ticker',
        pair,
        symbol,
        query: `($${symbol} OR #${symbol}${name ? ` OR ${name}` : ''}) -is:retweet`,
      };
    }
  }
  let pair: PairSpec | null = null;
  let symbol: string | null = null;
  for (const m of trimmed.matchAll(CASHTAG)) {
    const found = findPair(pairs, m[1]!);
    symbol ??= m[1]!.toUpperCase();
    if (found) {
      pair = found;
      symbol = found.base.toUpperCase();
      break;
    }
  }
  if (countWords(trimmed) >= TEXT_MIN_WORDS) return { kind: 'text', pair, symbol, query: null };
  if (!pair) {
    for (const raw of trimmed.split(/\s+/u)) {
      const word = raw.replace(/[^\p{L}\p{N}]/gu, '');
      // In free text only a symbol in capitals ("ETH ETF flows") or an unambiguous name counts.
      const symbolLike = /^[A-Z0-9]{2,10}$/u.test(word.replace(/^cb/u, ''));
      if (!symbolLike && !UNAMBIGUOUS_NAMES.has(word.toLowerCase())) continue;
      const found = findPair(pairs, word);
      if (found) {
        pair = found;
        symbol = found.base.toUpperCase();
        break;
      }
    }
  }
  return { kind: 'topic', pair, symbol, query: topicQuery(trimmed) };
}
