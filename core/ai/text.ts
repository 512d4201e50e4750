/**
 * Text primitives shared by both AI adapters and the AI processors: words,
 * sentences, word counts (the unit of `maxLength`) and token estimates (the
 * unit of the embedding context limit). Segmentation is the platform's
 * Unicode segmenter (Intl.Segmenter, ICU: UAX #29 plus dictionary-based
 * segmentation of Chinese, Japanese, Thai, ...), so every script is handled.
 */

const WORDS = new Intl.Segmenter('und', { granularity: 'word' });
const SENTENCES = new Intl.Segmenter('und', { granularity: 'sentence' });

/**
 * Characters given to Intl.Segmenter at once. V8's segment iterator (Node 20) is quadratic in the length of the
 * string it walks: 56,000 characters of short sentences took 22 s for words and 3 s for sentences, 4× the input 16×
 * the time. The text is walked in pieces of about this size, cut where the segmentation cannot change
 * (`pieceEnd`), so the work is linear.
 */
const SEGMENT_PIECE = 2000;
/** Word pieces end after a blank that precedes a character starting a new segment (no mark, no format character). */
const WORD_CUT = /\s(?=[^\s\p{M}\p{Cf}])/gu;
/** Sentence pieces end after a line break (UAX #29 always breaks a sentence there), else after a sentence's end. */
const SENTENCE_CUT = /\n|[.!?。！？]["'”’)\]]*\s+(?=\S)/gu;

/**
 * Where the piece that starts at `start` ends: the first cut `cut` finds past SEGMENT_PIECE characters (searched
 * over at most SEGMENT_PIECE more), else a blank there, else (a run of 4,000 characters with no blank: unspaced
 * scripts, one endless token) SEGMENT_PIECE characters on, never inside a surrogate pair. Only that forced cut can
 * differ from the whole text's segmentation (one word or sentence split in two).
 */
function pieceEnd(text: string, start: number, cut: RegExp): number {
  const from = start + SEGMENT_PIECE;
  if (from >= text.length) return text.length;
  const window = text.slice(from, from + SEGMENT_PIECE);
  for (const re of [cut, WORD_CUT]) {
    re.lastIndex = 0;
    const m = re.exec(window);
    if (m) return from + m.index + m[0].length;
  }
  const code = text.charCodeAt(from - 1);
  return code >= 0xd800 && code <= 0xdbff ? from + 1 : from;
}

/** `segmenter`'s segments of `text`, offsets into `text`, walked in pieces (SEGMENT_PIECE). */
function* segments(segmenter: Intl.Segmenter, text: string, cut: RegExp): Generator<Intl.SegmentData> {
  for (let start = 0; start < text.length;) {
    const end = pieceEnd(text, start, cut);
    const piece = start === 0 && end === text.length ? text : text.slice(start, end);
    for (const s of segmenter.segment(piece)) yield start ? { ...s, index: s.index + start, input: text } : s;
    start = end;
  }
}

/** Scripts written without spaces between words: their words are counted by the segmenter. */
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const HAS_ALNUM = /[\p{L}\p{N}]/u;

/** Word-like segments of `text` (letters or digits), in order, with their UTF-16 offsets. */
export function wordSegments(text: string): { word: string; index: number }[] {
  const out: { word: string; index: number }[] = [];
  for (const s of segments(WORDS, text, WORD_CUT)) if (s.isWordLike) out.push({ word: s.segment, index: s.index });
  return out;
}

/**
 * Words as `maxLength` counts them: whitespace-separated tokens holding a
 * letter or a digit (list markers and lone punctuation do not count); a token
 * in an unspaced script (Chinese, Japanese, Thai, ...) counts one per word the
 * segmenter finds in it.
 */
export function countWords(text: string): number {
  let n = 0;
  for (const token of text.split(/\s+/u)) {
    if (!token || !HAS_ALNUM.test(token)) continue;
    if (UNSPACED.test(token)) {
      for (const s of segments(WORDS, token, WORD_CUT)) if (s.isWordLike) n += 1;
    } else n += 1;
  }
  return n;
}

/** The first `maxWords` words of `text` (countWords' definition), cut at a token boundary. */
export function truncateWords(text: string, maxWords: number): string {
  if (maxWords <= 0) return '';
  let n = 0;
  const re = /\S+/gu;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    const token = m[0];
    if (!HAS_ALNUM.test(token)) continue;
    if (UNSPACED.test(token)) {
      for (const s of segments(WORDS, token, WORD_CUT)) {
        if (!s.isWordLike) continue;
        n += 1;
        if (n === maxWords) return text.slice(0, m.index + s.index + s.segment.length);
      }
      continue;
    }
    n += 1;
    if (n === maxWords) return text.slice(0, m.index + token.length);
  }
  return text;
}

/**
 * Estimated model tokens of `text`: one per punctuation mark and one per four
 * UTF-8 bytes of each word (at least one), which is close to BPE tokenizers
 * for English (about 1.3 tokens per word) and errs high for other scripts
 * (one CJK character, three bytes, is one token). Used for the embedding
 * context limit; the remote adapter reports the server's own counts.
 */
export function estimateTokens(text: string): number {
  let n = 0;
  for (const s of segments(WORDS, text, WORD_CUT)) {
    if (s.isWordLike) n += Math.max(1, Math.ceil(Buffer.byteLength(s.segment, 'utf8') / 4));
    else if (/\S/u.test(s.segment)) n += 1;
  }
  return n;
}

export interface Sentence {
  text: string;
  /** UTF-16 offsets into the source text, `end` exclusive (trimmed). */
  start: number;
  end: number;
}

/** Abbreviations after which a period does not end a sentence (English; the segmenter breaks after them). */
const ABBREVIATION =
  /(?:^|[\s(])(?:mr|mrs|ms|dr|prof|sr|jr|st|mt|gen|col|lt|sgt|capt|gov|sen|rep|rev|hon|vs|etc|e\.g|i\.e|approx|inc|ltd|co|corp|no|fig|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|u\.s|u\.k|[a-z])\.\s*$/iu;

/**
 * Whether text[start, end) ends with an abbreviation (ABBREVIATION) before its trailing blanks: tested on its last
 * 12 characters (the longest abbreviation, "approx.", and the blank before it fit; a cut inside a longer word cannot
 * match, since the pattern wants the abbreviation whole after a blank, a bracket or the start).
 */
function endsWithAbbreviation(text: string, start: number, end: number): boolean {
  let e = end;
  while (e > start && /\s/u.test(text[e - 1]!)) e--;
  return ABBREVIATION.test(text.slice(Math.max(start, e - 12), e));
}

/**
 * Sentences of `text` with their offsets: the segmenter's sentences, merged
 * back where it broke after an abbreviation or an initial ("Dr. ", "J. "),
 * and split at line breaks (headings, list items).
 */
export function splitSentences(text: string): Sentence[] {
  const raw: { start: number; end: number }[] = [];
  for (const s of segments(SENTENCES, text, SENTENCE_CUT))
    raw.push({ start: s.index, end: s.index + s.segment.length });
  // Each segment is read once: whether it holds a line break, and the end of the sentence merged so far, whose
  // last characters alone can be an abbreviation (testing the whole merged sentence again at each merge was
  // quadratic: 7,000 "A b c." sentences, each ending with an initial, merge into one).
  const merged: { start: number; end: number; lineBreak: boolean }[] = [];
  for (const r of raw) {
    const prev = merged[merged.length - 1];
    const lineBreak = text.slice(r.start, r.end).includes('\n');
    if (prev && !prev.lineBreak && endsWithAbbreviation(text, prev.start, prev.end)) {
      prev.end = r.end;
      prev.lineBreak = lineBreak;
    } else merged.push({ ...r, lineBreak });
  }
  const out: Sentence[] = [];
  for (const m of merged) {
    // Line breaks inside a segment (a heading followed by text without a period) also end a sentence.
    let cursor = m.start;
    for (const line of text.slice(m.start, m.end).split(/\n/u)) {
      const lineStart = cursor;
      cursor += line.length + 1;
      const lead = line.length - line.trimStart().length;
      const body = line.trim();
      if (!body || !HAS_ALNUM.test(body)) continue;
      out.push({ text: body, start: lineStart + lead, end: lineStart + lead + body.length });
    }
  }
  return out;
}

/** Lower-case, compatibility-normalised (NFKC) form used for lookups. */
export const normaliseWord = (word: string): string => word.normalize('NFKC').toLowerCase();
