/**
 * Postal codes for airgap-scrub (the ZIP label): see addresses.ts for the
 * rules; this file holds the shapes and their contexts.
 */
import type { Span } from './spans.js';

const STATES: Record<string, string> = {
  AL: 'Alabama',
  AK: 'Alaska',
  AZ: 'Arizona',
  AR: 'Arkansas',
  CA: 'California',
  CO: 'Colorado',
  CT: 'Connecticut',
  DE: 'Delaware',
  DC: 'District of Columbia',
  FL: 'Florida',
  GA: 'Georgia',
  HI: 'Hawaii',
  ID: 'Idaho',
  IL: 'Illinois',
  IN: 'Indiana',
  IA: 'Iowa',
  KS: 'Kansas',
  KY: 'Kentucky',
  LA: 'Louisiana',
  ME: 'Maine',
  MD: 'Maryland',
  MA: 'Massachusetts',
  MI: 'Michigan',
  MN: 'Minnesota',
  MS: 'Mississippi',
  MO: 'Missouri',
  MT: 'Montana',
  NE: 'Nebraska',
  NV: 'Nevada',
  NH: 'New Hampshire',
  NJ: 'New Jersey',
  NM: 'New Mexico',
  NY: 'New York',
  NC: 'North Carolina',
  ND: 'North Dakota',
  OH: 'Ohio',
  OK: 'Oklahoma',
  OR: 'Oregon',
  PA: 'Pennsylvania',
  RI: 'Rhode Island',
  SC: 'South Carolina',
  SD: 'South Dakota',
  TN: 'Tennessee',
  TX: 'Texas',
  UT: 'Utah',
  VT: 'Vermont',
  VA: 'Virginia',
  WA: 'Washington',
  WV: 'West Virginia',
  WI: 'Wisconsin',
  WY: 'Wyoming',
  PR: 'Puerto Rico',
  GU: 'Guam',
  VI: 'Virgin Islands',
  AS: 'American Samoa',
  MP: 'Northern Mariana Islands',
  AA: 'Armed Forces Americas',
  AE: 'Armed Forces Europe',
  AP: 'Armed Forces Pacific',
};
/** US state, territory and military "state" codes (a header-less export's state column: structured-text.ts). */
export const US_STATE_CODES: ReadonlySet<string> = new Set(Object.keys(STATES));
/** State codes that are also everyday uppercase words or abbreviations ("Order ID 12345"): only after a comma. */
const AMBIGUOUS_CODES = new Set([
  'ID',
  'IN',
  'OR',
  'ME',
  'OK',
  'HI',
  'OH',
  'AS',
  'AA',
  'AE',
  'AP',
  'PA',
  'CO',
  'DE',
  'MA',
  'LA',
]);
/** Words that, right before "XX 12345", make it an identifier rather than a city and state. */
const NOT_CITY =
  /\b(?:order|invoice|ticket|case|ref|reference|account|item|part|model|build|room|job|batch|sku|lot|unit|serial|version|id|no|number|code|route|flight|page|chapter|section|table|figure|step|level|grade|class|type|size|total)\s*$/i;

const ZIP = '(\\d{5}(?:-\\d{4})?)(?![\\p{L}\\p{N}_]|[-.,]\\d)';
const STATE_CODE_ZIP_RE = new RegExp(
  `(?<![\\p{L}\\p{N}])(${Object.keys(STATES).join('|')})\\.?(?:[ \\t]*,[ \\t]*|[ \\t]+)${ZIP}`,
  'gu',
);
const STATE_NAME_ZIP_RE = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:${Object.values(STATES)
    .map((s) => s.replace(/ /g, '[ \\t]+'))
    .join('|')})(?:[ \\t]*,[ \\t]*|[ \\t]+)${ZIP}`,
  'giu',
);
const KEYWORD_ZIP_RE = new RegExp(
  `\\b(?:zip(?:[ \\t]*\\+[ \\t]*4)?(?:[ \\t-]*code)?|zipcode|postal[ \\t]*code|post[ \\t]*code|postcode|plz|postleitzahl)\\b[ \\t:#.-]*(?:is[ \\t]+|was[ \\t]+)?${ZIP}`,
  'giu',
);
/** US military post offices: `APO AE 09123`. */
const MILITARY_ZIP_RE = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:APO|FPO|DPO)[ \\t]+(?:AA|AE|AP)(?:[ \\t]*,[ \\t]*|[ \\t]+)${ZIP}`,
  'gu',
);
/** Canada Post: `K1A 0B1` (letters D, F, I, O, Q, U never; W, Z not first). */
const CA_POSTCODE = '([ABCEGHJ-NPRSTVXY]\\d[ABCEGHJ-NPRSTV-Z][ \\t]?\\d[ABCEGHJ-NPRSTV-Z]\\d)(?![\\p{L}\\p{N}])';
const CA_RE = new RegExp(`(?<![\\p{L}\\p{N}])${CA_POSTCODE}`, 'gu');
/** Royal Mail: outward code, a space, inward code (`SW1A 1AA`, `M1 1AE`, `DN6Y 8JT`). */
export const UK_RE = /(?<![\p{L}\p{N}])([A-Z]{1,2}\d[A-Z\d]?[ \t]+\d[A-Z]{2})(?![\p{L}\p{N}])/gu;
/** Australia Post: four digits after the state or territory. */
const AU_RE =
  /(?<![\p{L}\p{N}])(?:NSW|VIC|QLD|SA|WA|TAS|NT|ACT|Victoria|Queensland|Tasmania)\.?(?:[ \t]*,[ \t]*|[ \t]+)(\d{4})(?![\p{L}\p{N}_]|[-.,]\d)/gu;
/**
 * After a street line: an optional town (up to two parts of one to four capitalised words, split by blanks, a comma
 * or a line break), then a code. Written so that each character has one reading: a word is taken whole (the
 * lookahead forbids splitting `NewYork` into two words, which reads the same text) and blanks belong to the
 * separator, not to the word before it. The ambiguous form (optional blanks inside and between words) took
 * exponential time on a run of capitals after an address ("WDWD…": three minutes for 60 letters).
 */
const TOWN_WORD = "[A-Z][\\p{L}.'-]*(?![\\p{L}.'-])";
const TOWN_SEPARATOR = '[ \\t]*(?:[,\\n][ \\t]*)?';
const AFTER_ADDRESS_RE = new RegExp(
  `^${TOWN_SEPARATOR}(?:${TOWN_WORD}(?:[ \\t]+${TOWN_WORD}){0,3}${TOWN_SEPARATOR}){0,2}(?:${ZIP}|${CA_POSTCODE})`,
  'u',
);
/** German order: the code, then the town, right after the street line (`Hauptstraße 5, 10115 Berlin`). */
const AFTER_ADDRESS_DE_RE = /^[ \t]*(?:[,\n][ \t]*)?(?:D-)?(\d{5})[ \t]+\p{Lu}/u;
/** How far after a street line its town and code may run (characters), and so how far a ZIP looks back for one. */
const ADDRESS_TAIL = 80;
const TOWN_CHARS_RE = /^[\p{L}\s.,'-]*$/u;
/** Trailing blanks, matched from the start of their run only (an unanchored `[ \t]+$` retries every blank). */
const TRAILING_BLANKS_RE = /(?<![ \t])[ \t]+$/;
/** A word's letters (with `.'-`), from the start of the word only. */
const LAST_WORD_RE = /(?<![\p{L}.'-])[\p{L}.'-]+$/u;
/** A capital that starts a word part (not after a letter) and is not the word's last character. */
const CAPITAL_START_RE = /(?<!\p{L})[A-Z](?!$)/u;

/**
 * Whether `before` ends with a capitalised word and blanks (a city before a state code): the linear form of
 * `/(?:^|[^\p{L}])[A-Z][\p{L}.'-]+[ \t]+$/u`, which retries from every capital of a long `A'A'A'…` run.
 */
function endsWithCapitalisedWord(before: string): boolean {
  const blanks = TRAILING_BLANKS_RE.exec(before);
  if (!blanks) return false;
  const word = LAST_WORD_RE.exec(before.slice(0, blanks.index));
  return word !== null && CAPITAL_START_RE.test(word[0]);
}

/**
 * Whether `at` follows a street line within ADDRESS_TAIL characters, with only a town's characters between.
 * `byEnd`: the addresses by end; a binary search finds the few that end in reach (linear in all, where testing
 * every address per candidate code would be quadratic).
 */
function followsAddress(text: string, byEnd: readonly Span[], at: number): boolean {
  let lo = 0;
  let hi = byEnd.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byEnd[mid]!.end < at - ADDRESS_TAIL) lo = mid + 1;
    else hi = mid;
  }
  for (let k = lo; k < byEnd.length && byEnd[k]!.end <= at; k++) {
    if (TOWN_CHARS_RE.test(text.slice(byEnd[k]!.end, at))) return true;
  }
  return false;
}

export function findZips(text: string, addresses: readonly Span[]): Span[] {
  const out: Span[] = [];
  const push = (m: RegExpMatchArray, zip: string, offset = 0) => {
    const start = offset + m.index! + m[0].length - zip.length;
    out.push({ start, end: start + zip.length, kind: 'ZIP' });
  };
  const byEnd = [...addresses].sort((a, b) => a.end - b.end);
  const nearAddress = (at: number) => followsAddress(text, byEnd, at);
  for (const m of text.matchAll(STATE_CODE_ZIP_RE)) {
    const code = m[1]!;
    const before = text.slice(Math.max(0, m.index - 40), m.index);
    const afterComma = /,[ \t]*$/.test(before);
    const afterCity = endsWithCapitalisedWord(before) && !NOT_CITY.test(before) && !AMBIGUOUS_CODES.has(code);
    const lineStart = /(?:^|\n)[ \t]*$/.test(before) && !AMBIGUOUS_CODES.has(code);
    if (afterComma || nearAddress(m.index) || afterCity || lineStart) push(m, m[2]!);
  }
  for (const re of [STATE_NAME_ZIP_RE, KEYWORD_ZIP_RE, MILITARY_ZIP_RE, AU_RE, UK_RE])
    for (const m of text.matchAll(re)) push(m, m[1]!);
  for (const m of text.matchAll(CA_RE)) {
    // Spaced, the shape is distinctive; unspaced (`M9A2S3`) only near an address or after a province.
    if (
      /\s/.test(m[1]!) ||
      nearAddress(m.index) ||
      /\b(?:AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT)\.?,?[ \t]+$/.test(text.slice(Math.max(0, m.index - 6), m.index))
    )
      push(m, m[1]!);
  }
  for (const a of addresses) {
    const tail = text.slice(a.end, a.end + ADDRESS_TAIL);
    const m = AFTER_ADDRESS_RE.exec(tail) ?? AFTER_ADDRESS_DE_RE.exec(tail);
    if (m) {
      const zip = m[1] ?? m[2]!;
      const start = a.end + m[0].lastIndexOf(zip);
      out.push({ start, end: start + zip.length, kind: 'ZIP' });
    }
  }
  return out;
}
