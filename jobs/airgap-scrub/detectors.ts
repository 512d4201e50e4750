/**
 * Pattern detectors of airgap-scrub's standard mode. Each returns spans of
 * the input (UTF-16 offsets, end exclusive); spans.ts resolves overlaps.
 *
 * - EMAIL: RFC 5322 "dot-atom" local part @ a domain with a letter TLD.
 * - CREDIT_CARD: runs of digits, optionally grouped by spaces or dashes;
 *   every sub-run of 13-19 digits is checked by card-validator (brand prefix,
 *   brand length, Luhn, UnionPay included); grouped numbers must follow the
 *   brand's own grouping (its `gaps`) or groups of four.
 * - SSN: AAA-GG-SSSS / AAA GG SSSS with the SSA's structural rules (area not
 *   000, 666 or 900-999; group not 00; serial not 0000); nine bare digits only
 *   next to an SSN keyword (a bare nine-digit number is more often something
 *   else: an order, a routing number).
 * - PHONE: libphonenumber-js' matcher (international numbers anywhere, national
 *   ones in the configured default region); a candidate is kept when it is a
 *   valid number, or a possible one written the way phone numbers are (grouped
 *   with separators); bare digit strings need a phone keyword before them.
 * - ADDRESS: US-style street lines (number, optional direction, capitalised
 *   street name, USPS street suffix, optional direction and unit), numbered
 *   routes/highways, PO boxes.
 * - ZIP: ZIP / ZIP+4 only in postal context: after a state (code or name),
 *   after a zip/postal-code keyword, or right after a street address. A bare
 *   five-digit number is never a ZIP.
 *
 * Hand-written because no installed library finds these kinds in free text
 * except phone numbers (libphonenumber-js, used) and card numbers
 * (card-validator validates; finding candidates is the digit-run scan here).
 */
import cardValidator from 'card-validator';
import { searchPhoneNumbersInText, type CountryCode } from 'libphonenumber-js/max';
import { findNationalPhones } from './national-phones.js';
import type { Span } from './spans.js';

// ------------------------------------------------------------------ email

const EMAIL_RE =
  /(?<![\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-])[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+\p{L}{2,63}(?![\p{L}\p{N}-]|\.[\p{L}\p{N}])/gu;

/** "jane [at] example [dot] com", "jane(at)example(dot)com", "jane at example dot com". */
const AT = '(?:[ \\t]*[\\[({][ \\t]*at[ \\t]*[\\])}][ \\t]*|[ \\t]+at[ \\t]+)';
const DOT = '(?:[ \\t]*[\\[({][ \\t]*dot[ \\t]*[\\])}][ \\t]*|[ \\t]+dot[ \\t]+)';
const OBFUSCATED_EMAIL_RE = new RegExp(`(?<![\\p{L}\\p{N}._%+-])[\\p{L}\\p{N}._%+-]+${AT}[\\p{L}\\p{N}-]+(?:${DOT}[\\p{L}\\p{N}-]+)*${DOT}\\p{L}{2,24}(?![\\p{L}\\p{N}])`, 'giu');

export function findEmails(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(EMAIL_RE)) out.push({ start: m.index, end: m.index + m[0].length, kind: 'EMAIL' });
  for (const m of text.matchAll(OBFUSCATED_EMAIL_RE)) out.push({ start: m.index, end: m.index + m[0].length, kind: 'EMAIL' });
  return out;
}

// ------------------------------------------------------------------ credit cards

/** Digit groups joined by single spaces or dashes, not glued to other digits, letters or decimals. */
const DIGIT_RUN_RE = /(?<![\p{L}\p{N}_.,$€£-])\d+(?:[ -]\d+)*(?![\p{L}\p{N}_]|[.,]\d)/gu;

interface Group {
  start: number;
  end: number;
  digits: string;
}

function groupsOf(run: string, offset: number): Group[] {
  const groups: Group[] = [];
  const re = /\d+/g;
  for (const m of run.matchAll(re)) groups.push({ start: offset + m.index, end: offset + m.index + m[0].length, digits: m[0] });
  return groups;
}

function isCardGrouping(groups: Group[], gaps: number[]): boolean {
  if (groups.length === 1) return true;
  const sizes = groups.map((g) => g.digits.length);
  // The brand's own grouping (e.g. Amex 4-6-5: gaps [4, 10]).
  let at = 0;
  const cuts = sizes.slice(0, -1).map((n) => (at += n));
  if (cuts.length === gaps.length && cuts.every((c, i) => c === gaps[i])) return true;
  // Or plain groups of four, the last one 1-4 digits.
  return sizes.slice(0, -1).every((n) => n === 4) && sizes[sizes.length - 1]! <= 4;
}

/**
 * Brands and lengths card-validator does not list, from the issuers' published ranges: Visa at every length
 * 13-19 (the 13-digit legacy numbers), UATP (1, 15 digits), Diners enRoute (2014/2149, 15), JCB's 15-digit
 * ranges (2131/1800), RuPay/Verve/Dankort/Troy/UnionPay 8x ranges (16-19). Each must still pass Luhn.
 */
const EXTRA_BRANDS: { prefix: RegExp; lengths: number[]; gaps: number[] }[] = [
  { prefix: /^4/, lengths: [13, 14, 15, 16, 17, 18, 19], gaps: [4, 8, 12] },
  { prefix: /^1/, lengths: [15], gaps: [4, 9] },
  { prefix: /^(?:2014|2149)/, lengths: [15], gaps: [4, 10] },
  { prefix: /^(?:2131|1800)/, lengths: [15], gaps: [4, 8, 12] },
  { prefix: /^(?:60|65|81|82|508|5019|5061|6500|9792)/, lengths: [16, 17, 18, 19], gaps: [4, 8, 12] },
];

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The card's grouping (its brand's `gaps`) when `digits` is a valid card number; undefined otherwise. */
function cardGaps(digits: string): number[] | undefined {
  const v = cardValidator.number(digits, { luhnValidateUnionPay: true, maxLength: 19 });
  if (v.isValid && v.card) return v.card.gaps;
  if (!luhnValid(digits)) return undefined;
  return EXTRA_BRANDS.find((b) => b.prefix.test(digits) && b.lengths.includes(digits.length))?.gaps;
}

/** Words before a bare digit run that make it a product, parcel or device number rather than a card. */
const NOT_CARD_KEYWORD_RE = /\b(?:ean|gtin|upc|isbn|issn|imei|meid|iccid|barcode|serial|tracking|parcel|shipment|order|invoice|timestamp|epoch|ts)\b[\s.:#=-]*(?:no\.?|number|#)?[\s.:#=-]*$/i;

export function findCreditCards(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(DIGIT_RUN_RE)) {
    const run = m[0];
    if (run.length < 13) continue;
    const seps = new Set(run.replace(/\d/g, ''));
    if (seps.size > 1) continue; // mixed separators: not a card as written
    const groups = groupsOf(run, m.index);
    // Longest valid window first, leftmost on ties; windows never overlap.
    let i = 0;
    while (i < groups.length) {
      let found: { j: number } | undefined;
      for (let j = groups.length - 1; j >= i && !found; j--) {
        const window = groups.slice(i, j + 1);
        const digits = window.map((g) => g.digits).join('');
        if (digits.length < 13 || digits.length > 19) continue;
        const gaps = cardGaps(digits);
        if (gaps && isCardGrouping(window, gaps)) found = { j };
      }
      if (found && NOT_CARD_KEYWORD_RE.test(text.slice(Math.max(0, groups[i]!.start - 30), groups[i]!.start))) found = undefined;
      if (found) {
        out.push({ start: groups[i]!.start, end: groups[found.j]!.end, kind: 'CREDIT_CARD' });
        i = found.j + 1;
      } else i++;
    }
  }
  return out;
}

// ------------------------------------------------------------------ SSN

const SSN_SEPARATED_RE = /(?<![\p{L}\p{N}_$.-])(\d{3})([- .])(\d{2})\2(\d{4})(?![\p{L}\p{N}_]|[-.]\d)/gu;
const SSN_BARE_RE = /(?<![\p{L}\p{N}_$.-])(\d{3})(\d{2})(\d{4})(?![\p{L}\p{N}_]|[.,-]\d)/gu;
const SSN_KEYWORD_RE = /\b(?:ssn|ss#|ss no|soc(?:ial)?\.?\s*sec(?:urity)?(?:\s*(?:no|num|number|#))?|social security(?:\s*(?:no|num|number|#))?)\b[^\n]{0,24}$/i;

export function isValidSsn(area: string, group: string, serial: string): boolean {
  const a = Number(area);
  return a !== 0 && a !== 666 && a < 900 && group !== '00' && serial !== '0000';
}

export function findSsns(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(SSN_SEPARATED_RE)) {
    if (isValidSsn(m[1]!, m[3]!, m[4]!)) out.push({ start: m.index, end: m.index + m[0].length, kind: 'SSN' });
  }
  for (const m of text.matchAll(SSN_BARE_RE)) {
    if (!isValidSsn(m[1]!, m[2]!, m[3]!)) continue;
    const before = text.slice(Math.max(0, m.index - 40), m.index);
    if (SSN_KEYWORD_RE.test(before)) out.push({ start: m.index, end: m.index + m[0].length, kind: 'SSN' });
  }
  return out;
}

// ------------------------------------------------------------------ phone

const PHONE_KEYWORD_RE = /\b(?:phone|tel|telephone|call|calling|mobile|cell|cellphone|fax|sms|text|whatsapp|signal|contact|reach|dial|ph|mob|number|hotline|helpline)\b[^\n\d]{0,20}$/i;
const NOT_PHONE_KEYWORD_RE = /\b(?:order|invoice|account|acct|tracking|ref|reference|ticket|case|po|serial|sku|item|confirmation|transaction|txn|id|isbn|routing|member|policy|claim|part)\b[\s.:#-]*(?:no\.?|num(?:ber)?\.?|#)?[\s.:#-]*$/i;

const LOCAL_RE = /(?<![\p{L}\p{N}_$.,()+-]|\d[ .-]|\)[ ]?)\d{3}[-.]\d{4}(?![\p{L}\p{N}_]|[-.]\d)/gu;

/** A possible-but-not-valid national number still counts when written in the region's usual grouping. */
const GROUPED_RE = /^(?:\+?1[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}$/;

export function findPhones(text: string, region: CountryCode): Span[] {
  const out: Span[] = [];
  let from = 0;
  // Restarted after a cut (see below) so a number swallowed as a false extension is scanned again.
  restart: while (from < text.length) {
    const slice = from === 0 ? text : text.slice(from);
    for (const m of searchPhoneNumbersInText(slice, { defaultCountry: region, extended: true })) {
      let start = from + m.startsAt;
      let end = from + m.endsAt;
      let raw = text.slice(start, end);
      // libphonenumber reads ", 212" or "; 1" after a number as an extension; only an explicit marker is one.
      if (m.number.ext && !/(?:ext\.?|extension|x|#)\s*\d+$/i.test(raw)) {
        const cut = Math.max(raw.lastIndexOf(','), raw.lastIndexOf(';'));
        if (cut > 0) {
          raw = raw.slice(0, cut).replace(/[\s.]+$/, '');
          end = start + raw.length;
          if (accept(text, start, raw, m.number)) out.push({ start, end, kind: 'PHONE' });
          from = end;
          continue restart;
        }
      }
      // A leading "(" the matcher left out, for "(415) 555-2671" written inside other brackets.
      if (raw.startsWith('(') === false && text[start - 1] === '(' && /^\d{3}\)/.test(raw)) {
        start--;
        raw = text.slice(start, end);
      }
      if (accept(text, start, raw, m.number)) out.push({ start, end, kind: 'PHONE' });
    }
    break;
  }
  // National formats of every other region (national-phones.ts).
  const keywordBefore = (start: number) => PHONE_KEYWORD_RE.test(text.slice(Math.max(0, start - 32), start));
  const excluded = (start: number) => {
    const before = text.slice(Math.max(0, start - 32), start);
    return NOT_PHONE_KEYWORD_RE.test(before) && !PHONE_KEYWORD_RE.test(before);
  };
  out.push(...findNationalPhones(text, keywordBefore, excluded));
  // Seven-digit local numbers ("call 555-0123") are below what the matcher reports without an area code.
  for (const m of text.matchAll(LOCAL_RE)) {
    if (PHONE_KEYWORD_RE.test(text.slice(Math.max(0, m.index - 32), m.index))) out.push({ start: m.index, end: m.index + m[0].length, kind: 'PHONE' });
  }
  return out;
}

function accept(text: string, start: number, raw: string, n: { isValid(): boolean; isPossible(): boolean }): boolean {
  const before = text.slice(Math.max(0, start - 32), start);
  const international = raw.startsWith('+') || /^00\d/.test(raw);
  const grouped = /[\s().-]/.test(raw.replace(/\s*(?:ext\.?|extension|x|#)\s*\d+$/i, ''));
  if (NOT_PHONE_KEYWORD_RE.test(before) && !PHONE_KEYWORD_RE.test(before)) return false;
  if (n.isValid()) return international || grouped || PHONE_KEYWORD_RE.test(before);
  if (!n.isPossible()) return false;
  const core = raw.replace(/\s*(?:ext\.?|extension|x|#)\s*\d+$/i, '');
  return (international && grouped) || GROUPED_RE.test(core);
}

// ------------------------------------------------------------------ street addresses

/** USPS Publication 28 street suffixes (common ones) with their standard abbreviations. */
const SUFFIXES = [
  'Street', 'St', 'Avenue', 'Ave', 'Av', 'Road', 'Rd', 'Boulevard', 'Blvd', 'Lane', 'Ln', 'Drive', 'Dr', 'Court', 'Ct',
  'Place', 'Pl', 'Terrace', 'Ter', 'Way', 'Wy', 'Circle', 'Cir', 'Parkway', 'Pkwy', 'Highway', 'Hwy', 'Expressway', 'Expy',
  'Freeway', 'Fwy', 'Square', 'Sq', 'Trail', 'Trl', 'Loop', 'Alley', 'Aly', 'Crescent', 'Cres', 'Close', 'Row', 'Run',
  'Path', 'Pike', 'Plaza', 'Plz', 'Point', 'Pt', 'Ridge', 'Rdg', 'Turnpike', 'Tpke', 'Walk', 'Crossing', 'Xing',
  'Heights', 'Hts', 'Hill', 'Park', 'Center', 'Ctr', 'Commons', 'Causeway', 'Cswy', 'Cove', 'Cv', 'Creek', 'Crk',
  'Glen', 'Grove', 'Grv', 'Harbor', 'Hbr', 'Landing', 'Lndg', 'Manor', 'Mnr', 'Meadows', 'Mdws', 'Mill', 'Pass',
  'Ranch', 'Summit', 'Trace', 'Valley', 'Vly', 'View', 'Vw', 'Village', 'Vlg', 'Vista', 'Wharf', 'Woods', 'Broadway',
];
const suffixAlt = [...new Set([...SUFFIXES, ...SUFFIXES.map((s) => s.toUpperCase())])].sort((a, b) => b.length - a.length).join('|');
const DIR = '(?:North|South|East|West|Northeast|Northwest|Southeast|Southwest|NORTH|SOUTH|EAST|WEST|NE|NW|SE|SW|N|S|E|W)\\.?';
const HOUSE = '\\d{1,6}(?:-\\d{1,5})?[A-Za-z]?';
const NAME_WORD = "(?:[A-Z][A-Za-z'’.-]*|\\d{1,4}(?:st|nd|rd|th|ST|ND|RD|TH))";
const UNIT = `(?:,?[ \\t]*(?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|Rm|Room|Bldg|Building|Dept|Lot|APT|SUITE|STE|UNIT)\\.?[ \\t]*#?[ \\t]*[A-Za-z0-9-]{1,6}\\b|,?[ \\t]*#[ \\t]*[A-Za-z0-9-]{1,6}\\b)`;
const STREET_RE = new RegExp(
  `(?<![\\p{L}\\p{N}_$.,/#-])(${HOUSE})[ \\t]+(?:${DIR}[ \\t]+)?(?:${NAME_WORD}[ \\t]+){0,4}(?:${suffixAlt})\\b\\.?(?:[ \\t]+${DIR}(?![\\p{L}]))?${UNIT}?`,
  'gu',
);
const ROUTE_RE = new RegExp(
  `(?<![\\p{L}\\p{N}_$.,/#-])${HOUSE}[ \\t]+(?:(?:State|County|US|U\\.S\\.|Farm to Market)[ \\t]+)?(?:Route|Rte|Highway|Hwy|Road|Rd|Interstate)[ \\t]+\\d{1,4}[A-Z]?\\b${UNIT}?`,
  'gu',
);
/** Lower-case street names ("123 main street"): full suffixes only, and no function word in the name ("3 houses down the street"). */
const STOP = '(?:the|a|an|of|on|in|at|to|our|my|your|his|her|their|its|this|that|these|those|and|or|but|down|up|across|along|for|from|by|with|per|each|every|other|same|next|last|first)';
const STREET_LOWER_RE = new RegExp(
  `(?<![\\p{L}\\p{N}_$.,/#-])${HOUSE}[ \\t]+(?:(?!${STOP}\\b)[a-z][a-z'-]*[ \\t]+){1,2}(?:street|avenue|road|boulevard|drive|lane|court|place|terrace|parkway|highway)\\b${UNIT}?`,
  'gu',
);
const PO_BOX_RE = /(?<![\p{L}\p{N}])(?:P\.?[ \t]?O\.?[ \t]?Box|Post[ \t]+Office[ \t]+Box|POB)[ \t]*#?[ \t]*\d{1,8}\b/giu;
const ABBREVIATED_END_RE = new RegExp(`(?:^|[ \\t])(?:${SUFFIXES.filter((x) => x.length <= 4 && !/^(?:Way|Row|Run|Path|Pike|Loop|Mill|Pass|Glen|Park|Hill|View|Walk|Cove)$/.test(x)).join('|')}|${'N|S|E|W|NE|NW|SE|SW'})\\.$`, 'i');
/** "In 2019 Park Avenue ..." reads a year, not a house number. */
const YEAR_BEFORE_RE = /\b(?:in|since|by|of|from|until|till|during|year|circa|before|after)\s*$/i;

export function findAddresses(text: string): Span[] {
  const out: Span[] = [];
  for (const re of [STREET_RE, STREET_LOWER_RE, ROUTE_RE]) {
    for (const m of text.matchAll(re)) {
      const house = /^\d+/.exec(m[0])![0];
      if (/^(?:19|20)\d\d$/.test(house) && YEAR_BEFORE_RE.test(text.slice(Math.max(0, m.index - 12), m.index))) continue;
      let matched = m[0].replace(/[ \t,]+$/, '');
      // A sentence's full stop after a full suffix ("Baker Street.") is not part of the address.
      if (matched.endsWith('.') && !ABBREVIATED_END_RE.test(matched)) matched = matched.slice(0, -1);
      out.push({ start: m.index, end: m.index + matched.length, kind: 'ADDRESS' });
    }
  }
  for (const m of text.matchAll(PO_BOX_RE)) out.push({ start: m.index, end: m.index + m[0].length, kind: 'ADDRESS' });
  return out;
}

// ------------------------------------------------------------------ ZIP

const STATES: Record<string, string> = {
  AL: 'Alabama', AK: 'Alaska', AZ: 'Arizona', AR: 'Arkansas', CA: 'California', CO: 'Colorado', CT: 'Connecticut',
  DE: 'Delaware', DC: 'District of Columbia', FL: 'Florida', GA: 'Georgia', HI: 'Hawaii', ID: 'Idaho', IL: 'Illinois',
  IN: 'Indiana', IA: 'Iowa', KS: 'Kansas', KY: 'Kentucky', LA: 'Louisiana', ME: 'Maine', MD: 'Maryland',
  MA: 'Massachusetts', MI: 'Michigan', MN: 'Minnesota', MS: 'Mississippi', MO: 'Missouri', MT: 'Montana',
  NE: 'Nebraska', NV: 'Nevada', NH: 'New Hampshire', NJ: 'New Jersey', NM: 'New Mexico', NY: 'New York',
  NC: 'North Carolina', ND: 'North Dakota', OH: 'Ohio', OK: 'Oklahoma', OR: 'Oregon', PA: 'Pennsylvania',
  RI: 'Rhode Island', SC: 'South Carolina', SD: 'South Dakota', TN: 'Tennessee', TX: 'Texas', UT: 'Utah',
  VT: 'Vermont', VA: 'Virginia', WA: 'Washington', WV: 'West Virginia', WI: 'Wisconsin', WY: 'Wyoming',
  PR: 'Puerto Rico', GU: 'Guam', VI: 'Virgin Islands', AS: 'American Samoa', MP: 'Northern Mariana Islands',
  AA: 'Armed Forces Americas', AE: 'Armed Forces Europe', AP: 'Armed Forces Pacific',
};
/** State codes that are also everyday uppercase words or abbreviations ("Order ID 12345"): only after a comma. */
const AMBIGUOUS_CODES = new Set(['ID', 'IN', 'OR', 'ME', 'OK', 'HI', 'OH', 'AS', 'AA', 'AE', 'AP', 'PA', 'CO', 'DE', 'MA', 'LA']);
/** Words that, right before "XX 12345", make it an identifier rather than a city and state. */
const NOT_CITY = /\b(?:order|invoice|ticket|case|ref|reference|account|item|part|model|build|room|job|batch|sku|lot|unit|serial|version|id|no|number|code|route|flight|page|chapter|section|table|figure|step|level|grade|class|type|size|total)\s*$/i;

const ZIP = '(\\d{5}(?:-\\d{4})?)(?![\\p{L}\\p{N}_]|[-.,]\\d)';
const STATE_CODE_ZIP_RE = new RegExp(`(?<![\\p{L}\\p{N}])(${Object.keys(STATES).join('|')})\\.?,?[ \\t]+${ZIP}`, 'gu');
const STATE_NAME_ZIP_RE = new RegExp(`(?<![\\p{L}\\p{N}])(?:${Object.values(STATES).map((s) => s.replace(/ /g, '[ \\t]+')).join('|')}),?[ \\t]+${ZIP}`, 'giu');
const KEYWORD_ZIP_RE = new RegExp(`\\b(?:zip(?:[ \\t]*\\+[ \\t]*4)?(?:[ \\t-]*code)?|zipcode|postal[ \\t]*code|post[ \\t]*code)\\b[ \\t:#.-]*(?:is[ \\t]+|was[ \\t]+)?${ZIP}`, 'giu');
/** After a street address: an optional city (capitalised words, commas), then the ZIP. */
const AFTER_ADDRESS_ZIP_RE = new RegExp(`^(?:,?[ \\t]*(?:[A-Z][\\p{L}.'-]*[ \\t]*){1,4}){0,2},?[ \\t]*${ZIP}`, 'u');

export function findZips(text: string, addresses: readonly Span[]): Span[] {
  const out: Span[] = [];
  const push = (m: RegExpMatchArray, zip: string) => {
    const start = m.index! + m[0].length - zip.length;
    out.push({ start, end: start + zip.length, kind: 'ZIP' });
  };
  for (const m of text.matchAll(STATE_CODE_ZIP_RE)) {
    const code = m[1]!;
    const before = text.slice(Math.max(0, m.index - 40), m.index);
    const afterComma = /,[ \t]*$/.test(before);
    const afterAddress = addresses.some((a) => a.end <= m.index && m.index - a.end <= 60 && /^[\p{L}\s.,'-]*$/u.test(text.slice(a.end, m.index)));
    const afterCity = /(?:^|[^\p{L}])[A-Z][\p{L}.'-]+[ \t]+$/u.test(before) && !NOT_CITY.test(before) && !AMBIGUOUS_CODES.has(code);
    const lineStart = /(?:^|\n)[ \t]*$/.test(before) && !AMBIGUOUS_CODES.has(code);
    if (afterComma || afterAddress || afterCity || lineStart) push(m, m[2]!);
  }
  for (const m of text.matchAll(STATE_NAME_ZIP_RE)) push(m, m[1]!);
  for (const m of text.matchAll(KEYWORD_ZIP_RE)) push(m, m[1]!);
  for (const a of addresses) {
    const m = AFTER_ADDRESS_ZIP_RE.exec(text.slice(a.end, a.end + 60));
    if (m) {
      const zip = m[1]!;
      const start = a.end + m[0].length - zip.length;
      out.push({ start, end: start + zip.length, kind: 'ZIP' });
    }
  }
  return out;
}

// ------------------------------------------------------------------ all of them

export function findStandardEntities(text: string, region: CountryCode): Span[] {
  const addresses = findAddresses(text);
  return [...findEmails(text), ...findCreditCards(text), ...findSsns(text), ...findPhones(text, region), ...addresses, ...findZips(text, addresses)];
}
