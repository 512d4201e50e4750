/**
 * The text primitives both AI adapters share: word counts (the unit of
 * summarize's `maxLength`), sentences, token estimates and chunking (the
 * embedding context limit), pooling, and the summary layouts with their word
 * budget.
 */
import { describe, expect, it } from 'vitest';
import { chunkText, dot, l2Normalise, poolVectors } from '../../core/ai/chunking.js';
import { composeSummary } from '../../core/ai/summary-format.js';
import { countWords, estimateTokens, splitSentences, truncateWords } from '../../core/ai/text.js';

describe('words and sentences', () => {
  it('counts whitespace words with a letter or digit; list markers and lone punctuation do not count; unspaced scripts count per word', () => {
    expect(countWords('- Spreads widened 19 bps — at the US open!')).toBe(8);
    expect(countWords('  ')).toBe(0);
    expect(countWords('ETH/USD $3,000.50 up 5%')).toBe(4);
    expect(countWords('比特币价格今天大涨')).toBeGreaterThanOrEqual(4);
  });

  it('truncates at a word boundary', () => {
    expect(truncateWords('one two three four', 2)).toBe('one two');
    expect(truncateWords('one, - two three', 2)).toBe('one, - two');
    expect(truncateWords('short', 5)).toBe('short');
  });

  it('splits sentences, keeping abbreviations and initials, and breaking at lines', () => {
    const text =
      'Mr. Smith met Dr. J. Jones in the U.S. today. Prices rose!\nHeading line\n- a list item\n\nLast one here.';
    const s = splitSentences(text);
    expect(s.map((x) => x.text)).toEqual([
      'Mr. Smith met Dr. J. Jones in the U.S. today.',
      'Prices rose!',
      'Heading line',
      '- a list item',
      'Last one here.',
    ]);
    for (const x of s) expect(text.slice(x.start, x.end)).toBe(x.text);
  });

  it('estimates tokens close to BPE for English and high for CJK', () => {
    expect(estimateTokens('The quick brown fox jumps over the lazy dog.')).toBeGreaterThanOrEqual(10);
    expect(estimateTokens('The quick brown fox jumps over the lazy dog.')).toBeLessThanOrEqual(14);
    expect(estimateTokens('比特币价格今天大涨')).toBeGreaterThanOrEqual(5);
  });
});

describe('chunking and pooling', () => {
  it('keeps a short text whole and cuts a long one at sentence boundaries within the limit', () => {
    expect(chunkText('A short text.', 64)).toEqual([
      { text: 'A short text.', tokens: estimateTokens('A short text.') },
    ]);
    const sentence = 'Liquidity on the Base pool moved after the exchange repriced the book.';
    const long = Array.from({ length: 40 }, () => sentence).join(' ');
    const chunks = chunkText(long, 64);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.tokens).toBeLessThanOrEqual(64);
      expect(c.text.endsWith('book.')).toBe(true);
    }
    expect(chunks.reduce((a, c) => a + countWords(c.text), 0)).toBe(countWords(long));
  });

  it('cuts a sentence longer than the limit between words', () => {
    const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ');
    const chunks = chunkText(words, 50);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.tokens).toBeLessThanOrEqual(50);
    expect(chunks.map((c) => c.text).join(' ')).toBe(words);
  });

  it('pools unit vectors by weight and renormalises', () => {
    const a = l2Normalise(Float32Array.from([1, 0, 0]));
    const b = l2Normalise(Float32Array.from([0, 1, 0]));
    const p = poolVectors([a, b], [3, 1]);
    expect(Math.sqrt(dot(p, p))).toBeCloseTo(1, 6);
    expect(p[0]! / p[1]!).toBeCloseTo(3, 5);
    expect(poolVectors([a], [7])).toBe(a);
  });
});

describe('summary layouts and the word budget', () => {
  const points = [
    'Spreads widened at the US open.',
    'Gas stayed cheap all day long.',
    'Pools lagged the exchange by seconds.',
  ];

  it('bullets: Markdown items, whole points while they fit', () => {
    const r = composeSummary('bullets', { points }, 13, 'm');
    expect(r.summary).toBe('- Spreads widened at the US open.\n- Gas stayed cheap all day long.');
    expect(r.bullets).toHaveLength(2);
    expect(r.word_count).toBe(12);
  });

  it('paragraph: sentences joined; a first sentence longer than the budget is cut with an ellipsis', () => {
    expect(composeSummary('paragraph', { points }, 100, 'm').summary).toBe(points.join(' '));
    const cut = composeSummary('paragraph', { points }, 3, 'm');
    expect(cut.summary).toBe('Spreads widened at…');
    expect(cut.word_count).toBe(3);
  });

  it('executive: lead line, then Key points (the label counts)', () => {
    const r = composeSummary('executive', { headline: 'Dislocations doubled.', points }, 16, 'm');
    expect(r.summary).toBe(
      'Dislocations doubled.\n\nKey points:\n- Spreads widened at the US open.\n- Gas stayed cheap all day long.',
    );
    expect(r.headline).toBe('Dislocations doubled.');
    expect(r.word_count).toBeLessThanOrEqual(16);
  });

  it('strips list markers a model may have written itself', () => {
    expect(composeSummary('bullets', { points: ['- one point here', '2) another point'] }, 50, 'm').bullets).toEqual([
      'one point here',
      'another point',
    ]);
  });
});
