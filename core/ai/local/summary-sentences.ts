/**
 * Which sentences the local summariser may pick (issue 23, item 6): a summary sentence says something, so it is
 * never page furniture that came along with an article's text, and never a fragment:
 *  - at least MIN_SENTENCE_WORDS words (list numbers such as `7.`, `Photo`, `(Reuters)`, headings, labels);
 *  - not furniture, by what it says: `Advertisement`, `Continue reading…`, `Read more…`, calls to sign up,
 *    subscribe, follow or share, photo and image credits and captions (`Photograph: …/AP`, `Image copyright …`),
 *    bylines (`By Jane Doe and John Roe`), `Updated …` stamps, copyright lines;
 *  - in English, with a verb. Cheap signs first (an auxiliary or modal, a reporting verb, a word in -ed); failing
 *    those, compromise's part-of-speech tagger (an npm package with its lexicon, offline) on the sentence's first
 *    MAX_TAGGED_WORDS words, so the work per sentence is bounded. A sentence with fewer than two common English
 *    function words is not English as far as this check goes: it skips the verb test (compromise knows English only).
 * isSummarySentence is asked lazily, for the sentences a selection is about to pick, so its cost is a few
 * sentences per summary, not one per sentence of the input.
 */
import nlp from 'compromise';
import { countWords } from '../text.js';

export const MIN_SENTENCE_WORDS = 5;
const MAX_TAGGED_WORDS = 40;

/** Furniture by its opening words. */
const FURNITURE_START =
  /^(?:advertisement|advertising|sponsored|promoted|continue reading|read (?:more|next|also|the full|our)|(?:click|tap) here|(?:sign up|sign in|log in|subscribe|register)\b|follow (?:us|@)|share (?:this|on|via)|like us on|download (?:the|our) app|(?:image|photo|picture|video) (?:copyright|caption|credit)s?|(?:photo(?:graph)?|image|picture|video|graphic|illustration|source|credit)s?\s*[:|]|(?:updated|published|posted|last (?:updated|modified)|first published)\b|(?:related|recommended|most (?:read|popular)|trending|more from)\s*[:|]|(?:copyright|©))/i;
/** A photo credit or agency tag ending a short line ("John Smith/AP", "Getty Images"). */
const CREDIT_END =
  /(?:getty images|shutterstock|reuters|associated press|\bafp|\bap photo|\/ ?ap|\bepa|\bpa media|\bap)\s*\.?\)?$/i;
/** "By Jane Doe", "By Jane Doe and John Roe, Reuters": a byline (checked on short lines only). */
const BYLINE = /^by\s+\p{Lu}[\p{L}.'’-]*(?:\s+(?:\p{Lu}[\p{L}.'’-]*|and|&|,|de|van|von|der|la|le))*[\s,|]*\p{L}*$/u;
const ALL_RIGHTS = /all rights reserved/i;

/** Words that make a sentence English for the verb check (two of them: one could be a loan word). */
const ENGLISH_FUNCTION_WORDS =
  /\b(?:the|an|of|to|and|is|are|was|were|for|that|with|it|this|at|by|from|he|she|they|we|you|his|her|their|has|have|had|been|will|would|not)\b/gi;
const looksEnglish = (text: string) => {
  let n = 0;
  for (const _ of text.matchAll(ENGLISH_FUNCTION_WORDS)) if (++n === 2) return true;
  return false;
};
/** Signs of a verb that need no tagger: auxiliaries, modals, reporting verbs, a word in -ed. */
const CLEAR_VERB =
  /\b(?:is|are|was|were|be|been|being|am|has|have|had|do|does|did|will|would|can|could|may|might|must|shall|should|said|says|say|told|tells|added|\p{L}{3,}ed)\b/iu;

/** Whether `sentence` may be picked for a summary (see the header). */
export function isSummarySentence(sentence: string): boolean {
  const text = sentence
    .trim()
    .replace(/^(?:[-*•‣▪]|\d{1,3}[.)])\s+/u, '')
    .trim();
  const words = countWords(text);
  if (words < MIN_SENTENCE_WORDS) return false;
  if (FURNITURE_START.test(text) || ALL_RIGHTS.test(text)) return false;
  if (words <= 12 && CREDIT_END.test(text)) return false;
  if (words <= 10 && BYLINE.test(text)) return false;
  if (!looksEnglish(text)) return true;
  if (CLEAR_VERB.test(text)) return true;
  const head = text.split(/\s+/u).slice(0, MAX_TAGGED_WORDS).join(' ');
  return nlp(head).has('#Verb');
}
