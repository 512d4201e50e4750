/**
 * Street addresses and postal codes for airgap-scrub's standard mode.
 *
 * ADDRESS is the street line: what locates a building, not the town it is in
 * (city, state and country stay; the postal code is its own ZIP label):
 *  - English-language street lines (US, UK, CA, AU): a house number (digits,
 *    `12B`, `31/06`, `85-1190`, or spelled out), an optional direction, up to
 *    four name words and a street type (street-words.ts), an optional
 *    direction and units (`Apt 4`, `Suite 200`, `#12`); a leading unit
 *    (`Flat 3, 12 High Street`, `Unit 7 79 Smith Crescent`), and UK lines
 *    whose unit stands for the number (`Flat 7\nBethan Route`);
 *  - German street lines: a name ending in a street word, then the number
 *    (`Hauptstraße 5`, `Otto-Hahn-Allee 1/3`, `Löwerstr. 7`);
 *  - numbered routes (`4500 State Route 9`), PO boxes, and US military
 *    addresses (`PSC 1234, Box 5678`, `Unit 2536 Box 5315`, a ship's name
 *    before APO/FPO/DPO);
 *  - street lines split by a comma or a line break (`PO Box 12, 6645 Main
 *    St`) are one address.
 * ZIP is a postal code in postal context: US ZIP / ZIP+4 after a state (code
 * or name, space or comma: CSV rows too), after APO/FPO/DPO and their
 * "state", after a zip/postal-code keyword or right after a street line;
 * Canadian and UK postcodes by their own shapes; Australian ones after a
 * state; German ones before the town right after a street line. A bare
 * five-digit number is never a ZIP.
 *
 * Hand-written: no npm package finds addresses in free text (the ones that
 * parse addresses expect the address alone).
 */
import type { Span } from './spans.js';
import { UK_RE } from './postal-codes.js';
import { GERMAN_SUFFIXES, SUFFIXES, UNIT_WORDS } from './street-words.js';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const cased = (w: string) => [w, w.toLowerCase(), w.toUpperCase()];
const SUFFIX = `(?:${[...new Set(SUFFIXES.flatMap(cased))].map(escape).join('|')})`;
const DIR =
  '(?:North|South|East|West|Northeast|Northwest|Southeast|Southwest|NORTH|SOUTH|EAST|WEST|NE|NW|SE|SW|N|S|E|W)\\.?';
const NUMBER_WORD =
  '(?:One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Eleven|Twelve|Twenty|Thirty|Forty|Fifty|Sixty|Seventy|Eighty|Ninety|Hundred|Thousand)';
const HOUSE = `(?:\\d{1,6}[A-Za-z]?(?:[-/]\\d{1,5}[A-Za-z]?)?|${NUMBER_WORD}(?:[ -]${NUMBER_WORD}){0,3})`;
const NAME_WORD =
  "(?:[A-Z][A-Za-z'’.-]*|\\d{1,4}(?:st|nd|rd|th|ST|ND|RD|TH)|Mc[A-Z][a-z]+|O'[A-Z][a-z]+|of|de|la|du|del|von|van)";
/**
 * A unit's number, after the unit word and its blanks (`Apt 4`, `Suite #200`). The blanks after a `#` are the
 * only ones it takes: with `#?[ \t]*` a run of blanks could be split between the unit word's and the number's in
 * as many ways as it is long, and a failing match tried them all (quadratic).
 */
const UNIT_ID = '(?:#[ \\t]*)?[A-Za-z0-9][A-Za-z0-9-]{0,5}\\b';
// A unit on the same line (after a blank or a comma) or on the next line of a multi-line address.
const UNIT = `(?:(?:(?:,?[ \\t]*|[ \\t]*\\n[ \\t]*)(?:${UNIT_WORDS})\\.?[ \\t]*${UNIT_ID}|,?[ \\t]*#[ \\t]*[A-Za-z0-9-]{1,6}\\b){1,2})`;
const LEADING_UNIT = `(?:(?:${UNIT_WORDS})\\.?[ \\t]*${UNIT_ID}(?:[ \\t]*,[ \\t]*|[ \\t]*\\n[ \\t]*|[ \\t]+))`;
/** Not inside a word, a number (`1,500`), an amount, a path or an id; after a comma only when no digit precedes it (CSV). */
const BOUNDARY = '(?<![\\p{L}\\p{N}_$./#-])(?<!\\d,)';

const STREET_RE = new RegExp(
  `${BOUNDARY}(${LEADING_UNIT})?(?:No\\.?[ \\t]*)?(${HOUSE})[ \\t]+(?:${DIR}[ \\t]+)?(?:${NAME_WORD}[ \\t]+){0,4}${SUFFIX}\\b\\.?(?:[ \\t]+${DIR}(?![\\p{L}]))?${UNIT}?(?:[ \\t]*\\((?:Route|Rte|Highway|Hwy)[ \\t]+\\d{1,4}\\))?`,
  'gu',
);
/** UK lines whose unit is the number: `Flat 7, Bethan Route`, `Studio 94\nHayward Ways`. */
const UNIT_LED_RE = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:Flat|Studio|Apartment|Apt|Unit|Suite|Room|Maisonette)\\.?[ \\t]+[A-Za-z0-9-]{1,6}(?:[ \\t]*,[ \\t]*|[ \\t]*\\n[ \\t]*)(?:[A-Z][A-Za-z'’-]*[ \\t]+){1,3}${SUFFIX}\\b`,
  'gu',
);
const ROUTE_RE = new RegExp(
  `${BOUNDARY}${HOUSE}[ \\t]+(?:(?:State|County|US|U\\.S\\.|Farm to Market)[ \\t]+)?(?:Route|Rte|Highway|Hwy|Road|Rd|Interstate)[ \\t]+\\d{1,4}[A-Z]?\\b${UNIT}?`,
  'gu',
);
const STOP =
  '(?:the|a|an|of|on|in|at|to|our|my|your|his|her|their|its|this|that|these|those|and|or|but|down|up|across|along|for|from|by|with|per|each|every|other|same|next|last|first)';
const STREET_LOWER_RE = new RegExp(
  `${BOUNDARY}${HOUSE}[ \\t]+(?:(?!${STOP}\\b)[a-z][a-z'-]*[ \\t]+){1,2}(?:street|avenue|road|boulevard|drive|lane|court|place|terrace|parkway|highway)\\b${UNIT}?`,
  'gu',
);
const PO_BOX_RE =
  /(?<![\p{L}\p{N}])(?:P\.?[ \t]?O\.?[ \t]?Box|Post[ \t]+Office[ \t]+Box|POB)[ \t]*(?:#[ \t]*)?\d{1,8}\b/giu;
const MILITARY_RE =
  /(?<![\p{L}\p{N}])(?:(?:PSC|CMR|Unit)[ \t]+\d{1,5},?[ \t]+Box[ \t]+\d{1,5}\b|(?:USNS|USNV|USS|USCGC|USNA)[ \t]+[A-Z][A-Za-z'-]+(?=[ \t]*(?:,|\n)[ \t]*(?:APO|FPO|DPO)\b))/gu;
/**
 * German street lines take at most GERMAN_NAME_WORDS words before the street word ("Karl-Friedrich-Schinkel-Straße",
 * "Am Alten Markt"): unbounded, every capitalised word of a long run of them started a scan to the run's end
 * (quadratic); bounded, each word is read by at most five starts.
 */
const GERMAN_NAME_WORDS = 4;
const GERMAN_RE = new RegExp(
  `(?<![\\p{L}\\p{N}-])(?:(?:\\p{Lu}[\\p{L}]*[- ]){1,${GERMAN_NAME_WORDS}}|\\p{Lu}[\\p{L}]*?)(?:${GERMAN_SUFFIXES.flatMap(
    (s) => [s, s[0]!.toUpperCase() + s.slice(1)],
  )
    .map(escape)
    .join('|')})[ \\t]+\\d{1,5}[a-z]?(?:[ \\t]*[-/][ \\t]*\\d{1,5}[a-z]?)?(?![\\p{L}\\p{N}])`,
  'gu',
);
const ABBREVIATED_END_RE =
  /(?:^|[ \t])(?:St|Ave|Av|Rd|Blvd|Ln|Dr|Ct|Pl|Ter|Wy|Cir|Pkwy|Hwy|Expy|Fwy|Sq|Trl|Aly|Plz|Pt|Rdg|Tpke|Xing|Hts|Ctr|Cswy|Cv|Crk|Grv|Hbr|Lndg|Mnr|Mdws|Vly|Vw|Vlg|Cres|Cl|Pde|Esp|Str|Apt|Ste|N|S|E|W|NE|NW|SE|SW)\.$/i;
/** Blanks and commas that end a match, from the start of their run only (unanchored `[ \t,]+$` retries each). */
const TRAILING_SEPARATORS_RE = /(?<![ \t,])[ \t,]+$/;
/** What may stand between two parts of one street line: blanks, and at most one comma or line break. */
const LINE_JOIN_RE = /^[ \t]*(?:[,\n][ \t]*)?$/;
/** "In 2019 Park Avenue ..." reads a year, not a house number. */
const YEAR_BEFORE_RE = /\b(?:in|since|by|of|from|until|till|during|year|circa|before|after)\s*$/i;

export function findAddresses(text: string): Span[] {
  const spans: Span[] = [];
  for (const re of [STREET_RE, STREET_LOWER_RE, ROUTE_RE, UNIT_LED_RE]) {
    for (const m of text.matchAll(re)) {
      const house = /^\d+/.exec(m[0]);
      if (
        house &&
        /^(?:19|20)\d\d$/.test(house[0]) &&
        YEAR_BEFORE_RE.test(text.slice(Math.max(0, m.index - 12), m.index))
      )
        continue;
      if (house && /^0+$/.test(house[0])) continue;
      // A number and one lower-case word ("98101 points") is a count, not a street.
      if (/^\d+[ \t]+[a-z]+\.?$/.test(m[0].trim())) continue;
      // "44 sq. ft.", "3131 Dr. Matthew": an abbreviation right after the number is a unit or a title, not a street type.
      if (
        /^\d+[A-Za-z]?[ \t]+(?:Sq|Dr|St|Pl|Ct)\b\.?(?:[ \t]+(?:ft|feet|m|mi|km|yd|in)\b|[ \t]+[A-Z][a-z]*[A-Z]?)/i.test(
          m[0] + text.slice(m.index + m[0].length, m.index + m[0].length + 12),
        )
      )
        continue;
      let matched = m[0].replace(TRAILING_SEPARATORS_RE, '');
      // A sentence's full stop after a full street type ("Baker Street.") is not part of the address.
      if (matched.endsWith('.') && !ABBREVIATED_END_RE.test(matched)) matched = matched.slice(0, -1);
      spans.push({ start: m.index, end: m.index + matched.length, kind: 'ADDRESS' });
    }
  }
  for (const re of [PO_BOX_RE, MILITARY_RE, GERMAN_RE])
    for (const m of text.matchAll(re)) spans.push({ start: m.index, end: m.index + m[0].length, kind: 'ADDRESS' });
  spans.push(...findTypelessStreets(text));
  return joinLines(text, spans);
}

/** How far before a UK postcode its street line may start (characters). */
const TYPELESS_REACH = 160;
/** A town before a postcode (without the blanks around it): up to four words (`Newcastle upon Tyne`), or nothing. */
const TOWN_PART_RE = /^(?:\p{Lu}[\p{L}'’.-]*(?:[ \t]+(?:upon|on|under|in|le|by|the|\p{Lu}[\p{L}'’.-]*)){0,3})?$/u;
const HOUSE_NUMBER_RE = /^\d{1,4}[A-Za-z]?$/;
const CAPITALISED_RE = /^\p{Lu}[\p{L}'’-]*$/u;
/** A unit alone on its line or before a comma (`Flat 2`, `Unit 7B`). */
const UNIT_PART_RE = /^(?:Flat|Unit|Apartment|Apt|Suite|Studio|Room)\.?[ \t]+[A-Za-z0-9-]{1,6}$/;
/** The most words of a street name without a type (`The Old Parade`). */
const TYPELESS_WORDS = 3;

/**
 * UK street lines without a street type (`138 Kingsway`, `20 Electragate`, `4 The Bealachmor`), only where the
 * context makes them an address: a UK postcode follows, after an optional town, with at most a comma, a tab or a
 * line break between the parts (`138 Kingsway, London WC2B 6NH`, `138 Kingsway\nLondon\nWC2B 6NH`). The street is
 * the house number and the one to three capitalised words after it that end the part. Each postcode reads at most
 * TYPELESS_REACH characters before it: linear in the text.
 */
function findTypelessStreets(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(UK_RE)) {
    const from = Math.max(0, m.index - TYPELESS_REACH);
    const parts = text.slice(from, m.index).split(/[\n,\t]/);
    let k = parts.length - 1;
    for (let skipped = 0; skipped < 2 && k > 0 && TOWN_PART_RE.test(parts[k]!.trim()); skipped++) k--;
    if (k === parts.length - 1) continue; // nothing but the street before the code: not this shape
    const part = parts[k]!;
    const words = part.trimEnd().split(/[ \t]+/);
    const partEnd = from + parts.slice(0, k).reduce((n, p) => n + p.length + 1, 0) + part.trimEnd().length;
    for (let n = 1; n <= TYPELESS_WORDS && n < words.length; n++) {
      const name = words.slice(words.length - n);
      const house = words[words.length - n - 1]!;
      if (!HOUSE_NUMBER_RE.test(house) || /^0+$/.test(house)) continue;
      if (!name.every((w, i) => CAPITALISED_RE.test(w) || (i === 0 && w === 'The' && n > 1))) continue;
      const length = [house, ...name].join(' ').length;
      // The words must be written with single blanks for the span to be measured this way.
      if (text.slice(partEnd - length, partEnd) !== [house, ...name].join(' ')) continue;
      // A unit alone on the line (or before the comma) just before the street line is part of the address.
      const streetStart = partEnd - length;
      const partStart = (i: number) => from + parts.slice(0, i).reduce((n, p) => n + p.length + 1, 0);
      const previous = k > 0 ? parts[k - 1]! : '';
      const unit = UNIT_PART_RE.test(previous.trim()) && !text.slice(partStart(k), streetStart).trim();
      const start = unit ? partStart(k - 1) + previous.length - previous.trimStart().length : streetStart;
      out.push({ start, end: partEnd, kind: 'ADDRESS' });
      break;
    }
  }
  return out;
}

/** Address spans that overlap, or follow each other with only a comma or a line break between, are one street line. */
function joinLines(text: string, spans: Span[]): Span[] {
  const sorted = spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && (s.start <= last.end || LINE_JOIN_RE.test(text.slice(last.end, s.start))))
      last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}
