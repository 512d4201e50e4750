/**
 * Blocks of an article that are page furniture rather than its text, found
 * by what they say (Readability keeps them when they sit inside the article
 * element): calls to subscribe or sign up, "related"/"you may also like"
 * sections with their link lists, "posted/updated" time stamps, photo
 * credits, and lines that are only a date. Each rule needs a short block, so
 * a paragraph that merely mentions a newsletter stays.
 */

const words = (s: string) => (s.match(/[\p{L}\p{N}]+/gu) ?? []).length;
const plain = (block: string) =>
  block
    .replace(/^(?:#{1,6}|[-*>]|\d+\.)\s+/, '')
    .replace(/[*_`[\]]/g, '')
    .trim();

/** Headings that open a section of links to other pages, not the article's own. */
const FURNITURE_HEADING =
  /^(?:more (?:great |from |on |stories|news|in|to read)|related(?: (?:articles|stories|posts|coverage|content|reading))?|you (?:may|might) also like|don'?t miss|recommended|read (?:more|next|also)|(?:most )?popular|trending|latest (?:news|stories|videos)|most read|top stories|breaking news emails|subscribe|sign up|newsletter|highlights|also on|what to read next|keep reading|further reading|share (?:this|the story)|comments?)\b/i;
/** Short blocks that are a call to action or a widget's label. */
const FURNITURE_LINE =
  /^(?:subscribe|sign (?:up|in)|log ?in|register|advertisement|advertising|sponsored|read more|see more|show more|load(?:ing)? (?:more|content)|continue reading|click here|share(?: this)?|follow us|get (?:breaking news|the latest|our)|let our news|sign up (?:to|for)|don'?t miss|more great|related|popular|trending|highlights|via \S+|copyright|©|all rights reserved|photo(?:graph)?:|image:|\(image:|credit:|source:)/i;
const STAMP =
  /^(?:\|?\s*)?(?:posted|updated|published|last (?:updated|modified)|modified|first published|created)\b[\s:]/i;
const MONTH =
  '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?';
const DATE_ONLY = new RegExp(
  `^(?:on\\s+)?(?:(?:mon|tue|wed|thu|fri|sat|sun)\\w*,?\\s+)?(?:${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+\\d{4}|\\d{1,2}\\s+${MONTH}\\s+\\d{4}|\\d{4}-\\d{2}-\\d{2})(?:[\\s,-]+(?:at\\s+)?\\d{1,2}[:.]\\d{2}(?:\\s*[ap]\\.?m\\.?)?(?:\\s+[A-Z]{2,4})?)?\\.?$`,
  'i',
);
/** A photo credit that ends a block: an agency's name, or a bracketed "(Photo: …)" (isCredit). */
const CREDIT_NAME =
  /\b(?:getty images|shutterstock|ap photo|afp via getty|reuters\/[A-Z][a-z]+|\/ ap(?: file)?|\(ap\))\s*\.?$/i;
/** The bracket that closes a block (blanks and a full stop may follow). */
const CLOSING_BRACKET = /\)\s*\.?$/;
const CREDIT_OPENING = /\((?:image|photo|picture|credit)s?:/i;

/**
 * Whether a block ends with a photo credit. The bracketed form is found from the closing bracket back to the one
 * before it: one regex `\((?:photo|…):[^)]*\)$` retried its `[^)]*` from every "(photo:" of the block to the end.
 */
function isCredit(text: string): boolean {
  if (CREDIT_NAME.test(text)) return true;
  const close = CLOSING_BRACKET.exec(text);
  if (!close) return false;
  // The credit's "(photo:" lies after the previous ")": its text may hold no ")".
  return CREDIT_OPENING.test(text.slice(text.lastIndexOf(')', close.index - 1) + 1, close.index));
}

/** The rules of dropFurniture, by the name the rules bench switches them off by. */
export const FURNITURE_RULES = ['furniture-heading', 'furniture-line', 'stamp', 'date-only', 'credit'] as const;

/** `blocks` without the furniture; `off` names rules (FURNITURE_RULES) not applied (the rules bench). */
export function dropFurniture(blocks: readonly string[], off?: ReadonlySet<string>): string[] {
  const out: string[] = [];
  let skippingLevel = 0;
  for (const block of blocks) {
    const heading = /^(#{1,6})\s/.exec(block);
    const text = plain(block);
    const n = words(text);
    if (heading) {
      const level = heading[1]!.length;
      if (skippingLevel && level > skippingLevel) continue;
      skippingLevel = 0;
      if (!off?.has('furniture-heading') && FURNITURE_HEADING.test(text) && n <= 8) {
        skippingLevel = level;
        continue;
      }
    } else if (skippingLevel) {
      // A furniture section runs until the next heading of its level, as long as it holds lists and short lines.
      if (/^[-*]\s|^\d+\.\s/.test(block) || n <= 30) continue;
      skippingLevel = 0;
    }
    if (n <= 14 && !off?.has('furniture-line') && FURNITURE_LINE.test(text)) continue;
    if (n <= 14 && !off?.has('stamp') && STAMP.test(text)) continue;
    if (n <= 12 && !off?.has('date-only') && DATE_ONLY.test(text)) continue;
    if (n <= 40 && !off?.has('credit') && isCredit(text)) continue;
    out.push(block);
  }
  return out;
}
