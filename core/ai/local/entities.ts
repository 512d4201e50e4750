/**
 * Local detection of personal entities for airgap-scrub's strict mode:
 *  - NAME: people found by `compromise` (its lexicon of first names, last
 *    names and honorifics), plus runs of two or three proper nouns that
 *    compromise does not know as people but that behave like a person: after
 *    a greeting or sign-off ("Dear", "Regards,"), after an honorific, or
 *    before a speech or biography verb ("said", "founded", "was born"),
 *    never when compromise tags them as an organisation or a place;
 *  - BIO: a sentence that describes a person (a name, or a personal pronoun
 *    as its subject) with a biographical pattern: birth, upbringing,
 *    education, family, residence, age, occupation or employment history
 *    (BIO_PATTERNS). The whole sentence is the span.
 * Spans are sorted and never overlap: a name inside a bio sentence is part
 * of the BIO span. The text is processed in blocks of sentences of at most
 * BLOCK_CHARS characters, each parsed once by compromise.
 */
import nlp from 'compromise';
import type { SensitiveSpan } from '../ai-provider.js';
import { splitSentences, type Sentence } from '../text.js';

const BLOCK_CHARS = 4000;

const BIO_PATTERNS: RegExp[] = [
  /\b(?:was|were|is|am) born\b|\bborn (?:in|on|at|to)\b|\bdate of birth\b|\bbirthday\b|\bD\.?O\.?B\b/iu,
  /\bgrew up\b|\braised (?:in|on|by)\b|\bhometown\b|\bchildhood\b/iu,
  /\bgraduated\b|\b(?:studied|majored|enrolled)\b|\battended (?:the )?\p{Lu}|\balumn(?:us|a|i|ae)\b|\b(?:bachelor|master)'?s?\b|\bph\.?d\b|\bdoctorate\b|\bMBA\b|\bdegree (?:in|from)\b|\bhigh school\b|\buniversity of\b/iu,
  /\bmarried\b|\bdivorced\b|\bwidow(?:ed|er)?\b|\bengaged to\b|\b(?:his|her|my|their) (?:wife|husband|spouse|partner|son|sons|daughter|daughters|children|kids|mother|father|parents|brother|sister|family)\b|\bmother of\b|\bfather of\b/iu,
  /\b(?:lives|lived|living|resides|resided|residing|moved|relocated) (?:in|to|at|on)\b|\bhome address\b/iu,
  /\b\d{1,3}[- ]years?[- ]old\b|\baged? \d{1,3}\b/iu,
  /\b(?:works|worked|working|employed|serves|served|serving) (?:as|at|for|with)\b|\bjoined \p{Lu}|\bcareer\b|\b(?:previously|formerly) (?:worked|served|led|ran)\b|\bretired (?:from|in)\b/iu,
  /\b(?:religion|nationality|ethnicity|citizen of|immigrated|emigrated)\b/iu,
];

const SUBJECT_PRONOUN = /(?:^|[\s,;(])(?:he|she|i|my|his|her|they|their)\b/iu;
const GREETING_BEFORE =
  /(?:\b(?:dear|hi|hello|hey|thanks|thank you|regards|sincerely|signed|cheers|best|contact|call|email|ask|met|meet|by|from|with|to|cc|attn|attention)[,:]?\s*)$/iu;
const PERSON_VERB_AFTER =
  /^[\s,]*(?:'s\s+)?(?:said|says|told|tells|spoke|speaks|wrote|writes|tweeted|posted|explained|added|noted|argued|claimed|stated|announced|founded|co-founded|joined|graduated|was born|is born|was|is|has|had|who|,\s*(?:the|a|an|who|\d))\b/iu;

interface Term {
  text: string;
  post: string;
  tags: string[];
  offset: { start: number; length: number };
}
const NOT_A_NAME = new Set([
  'Organization',
  'Place',
  'Acronym',
  'Pronoun',
  'Determiner',
  'Month',
  'WeekDay',
  'Date',
  'Plural',
  'Currency',
  'Unit',
]);

interface MatchJson {
  text: string;
  offset: { start: number; length: number };
  terms: Term[];
}

export class LocalEntities {
  constructor(readonly model: string) {}

  findSpans(text: string, signal?: AbortSignal): SensitiveSpan[] {
    const sentences = splitSentences(text);
    const spans: SensitiveSpan[] = [];
    for (const block of blocks(sentences)) {
      signal?.throwIfAborted();
      const start = block[0]!.start;
      const end = block[block.length - 1]!.end;
      const names = this.names(text, start, end);
      for (const s of block) {
        const inSentence = names.some((n) => n.start >= s.start && n.end <= s.end);
        if (isBio(s.text, inSentence)) spans.push({ start: s.start, end: s.end, kind: 'BIO' });
      }
      for (const n of names) spans.push(n);
    }
    return resolveOverlaps(spans);
  }

  /** Names in text[from, to) with absolute offsets. */
  private names(text: string, from: number, to: number): SensitiveSpan[] {
    const slice = text.slice(from, to);
    const doc = nlp(slice);
    const out: SensitiveSpan[] = [];
    const push = (start: number, length: number) => {
      const raw = slice.slice(start, start + length);
      const trimmed = raw.replace(/[\s.,;:!?'’)"]+$/u, '').replace(/['’]s$/u, '');
      const lead = trimmed.length - trimmed.trimStart().length;
      if (!/\p{L}{2}/u.test(trimmed)) return;
      out.push({ start: from + start + lead, end: from + start + trimmed.length, kind: 'NAME' });
    };
    for (const p of doc.people().json({ offset: true }) as MatchJson[]) push(p.offset.start, p.offset.length);
    // Runs of capitalised nouns compromise does not know as people (e.g. "Vitalik Buterin"), kept when they behave like a person.
    const terms = (doc.terms().json({ offset: true }) as { terms: Term[] }[]).map((t) => t.terms[0]!).filter(Boolean);
    let run: Term[] = [];
    const flush = () => {
      const words = run.filter((t) => !t.tags.includes('Honorific'));
      const honorific = words.length < run.length;
      if (words.length >= (honorific ? 1 : 2) && words.length <= 3) {
        const first = run[0]!.offset.start;
        const last = run[run.length - 1]!;
        const stop = last.offset.start + last.offset.length;
        const before = slice.slice(Math.max(0, first - 30), first);
        const after = slice.slice(stop, stop + 30);
        if (honorific || GREETING_BEFORE.test(before) || PERSON_VERB_AFTER.test(after)) push(first, stop - first);
      }
      run = [];
    };
    for (const t of terms) {
      const nameLike =
        /^\p{Lu}[\p{L}'’.-]*$/u.test(t.text) && t.tags.includes('Noun') && !t.tags.some((tag) => NOT_A_NAME.has(tag));
      const honorific = t.tags.includes('Honorific') && run.length === 0;
      if (nameLike || honorific) {
        run.push(t);
        if (t.post && /[^\s]/u.test(t.post) && !(honorific && /^\.\s*$/u.test(t.post))) flush();
      } else flush();
    }
    flush();
    return out;
  }
}

function isBio(sentence: string, hasName: boolean): boolean {
  if (!BIO_PATTERNS.some((p) => p.test(sentence))) return false;
  return hasName || SUBJECT_PRONOUN.test(sentence);
}

function* blocks(sentences: Sentence[]): Generator<Sentence[]> {
  let current: Sentence[] = [];
  let size = 0;
  for (const s of sentences) {
    if (current.length && size + s.text.length > BLOCK_CHARS) {
      yield current;
      current = [];
      size = 0;
    }
    current.push(s);
    size += s.text.length;
  }
  if (current.length) yield current;
}

/** Sorted, non-overlapping: BIO spans absorb the names inside them; overlapping names merge. */
export function resolveOverlaps(spans: SensitiveSpan[]): SensitiveSpan[] {
  const sorted = [...spans].sort(
    (a, b) => a.start - b.start || (a.kind === b.kind ? 0 : a.kind === 'BIO' ? -1 : 1) || b.end - a.end,
  );
  const out: SensitiveSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) {
      if (s.kind === 'BIO' && last.kind === 'NAME') {
        out[out.length - 1] = { start: last.start, end: Math.max(last.end, s.end), kind: 'BIO' };
      } else last.end = Math.max(last.end, s.end);
      continue;
    }
    out.push({ ...s });
  }
  return out;
}
