/**
 * x-sentiment's reading of its topic (ticker, topic or text sample, and the
 * catalogue pair it names) and how it combines its inputs into one score,
 * confidence and key-signal breakdown.
 */
import { describe, expect, it } from 'vitest';
import { loadPairs } from '../../core/markets/pairs.js';
import { combine } from '../../jobs/x-sentiment/processor.js';
import { parseTopic } from '../../jobs/x-sentiment/topic.js';

const pairs = loadPairs();

describe('parseTopic', () => {
  it.each([
    ['$ETH', 'ticker', 'ETH/USD'],
    ['eth', 'ticker', 'ETH/USD'],
    ['ETH-USD', 'ticker', 'ETH/USD'],
    ['cbbtc', 'ticker', 'cbBTC/USD'],
    ['bitcoin', 'ticker', 'cbBTC/USD'],
    ['#AERO', 'ticker', 'AERO/USD'],
    ['$PEPE', 'ticker', null],
    ['SOL', 'ticker', null],
    ['restaking yields', 'topic', null],
    ['ETH ETF flows', 'topic', 'ETH/USD'],
    ['compound interest', 'topic', null],
    ['Everyone is talking about $LINK breaking out today', 'text', 'LINK/USD'],
    ['The market looks tired and nobody is buying anymore', 'text', null],
  ])('%s -> %s (%s)', (topic, kind, pair) => {
    const p = parseTopic(topic, pairs);
    expect(p.kind).toBe(kind);
    expect(p.pair?.pair ?? null).toBe(pair);
  });

  it('builds an X query for tickers and topics, without retweets or operators from the caller', () => {
    expect(parseTopic('$ETH', pairs).query).toBe('($ETH OR #ETH OR ethereum) -is:retweet');
    expect(parseTopic('base fees OR "x" from:someone', pairs).query).toBe('base fees x -is:retweet');
    expect(parseTopic('A long enough text sample to be scored as it is', pairs).query).toBeNull();
  });
});

describe('combine', () => {
  it('weights inputs by base weight and confidence; agreement raises the confidence, disagreement lowers it', () => {
    const agree = combine([
      {
        from: 'x_posts',
        score: 0.6,
        confidence: 0.8,
        base: 1,
        signals: [{ signal: 'a', direction: 'bullish', weight: 1 }],
      },
      {
        from: 'market',
        score: 0.4,
        confidence: 0.5,
        base: 0.8,
        signals: [{ signal: 'b', direction: 'bullish', weight: 1 }],
      },
    ]);
    const w1 = 0.8;
    const w2 = 0.8 * 0.5;
    expect(agree.score).toBeCloseTo((0.6 * w1 + 0.4 * w2) / (w1 + w2), 3);
    expect(agree.confidence).toBeCloseTo((0.8 * w1 + 0.5 * w2) / (w1 + w2) + 0.1, 3);
    expect(agree.key_signals.map((s) => [s.signal, s.from])).toEqual([
      ['a', 'x_posts'],
      ['b', 'market'],
    ]);
    expect(agree.key_signals[0]!.weight).toBeCloseTo(w1 / (w1 + w2), 3);

    const disagree = combine([
      { from: 'x_posts', score: -0.6, confidence: 0.8, base: 1, signals: [] },
      { from: 'market', score: 0.4, confidence: 0.8, base: 0.8, signals: [] },
    ]);
    expect(disagree.confidence).toBeCloseTo(0.8 * 0.75, 3);
  });
});
