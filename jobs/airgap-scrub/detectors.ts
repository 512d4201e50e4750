/**
 * Pattern detectors of airgap-scrub's standard mode. Each returns spans of
 * the input (UTF-16 offsets, end exclusive); spans.ts resolves overlaps.
 *
 * - EMAIL: RFC 5322 "dot-atom" local part @ a domain with a letter TLD.
 * - CREDIT_CARD: runs of digits, optionally grouped by spaces or dashes (or
 *   dots, in groups of four); every sub-run of 13-19 digits (12 after a card
 *   word: Maestro) is checked by card-validator (brand prefix, brand length,
 *   Luhn, UnionPay included) and, past it, by the issuer ranges it does not
 *   list (EXTRA_BRANDS) with Luhn; grouped numbers must follow the brand's own
 *   grouping (its `gaps`), groups of four, or a first group of 4 or 6 digits
 *   then groups of 3-6 (Visa 13 as 4-3-3-3); a run whose separator changes is
 *   read as two numbers; not after EAN/GTIN/ISBN/IMEI/order/tracking words.
 * - SSN: AAA-GG-SSSS / AAA GG SSSS with the SSA's structural rules (area not
 *   000, 666 or 900-999; group not 00; serial not 0000); nine bare digits only
 *   next to an SSN keyword (a bare nine-digit number is more often something
 *   else: an order, a routing number).
 * - PHONE: libphonenumber-js' matcher (international numbers anywhere, `+` or
 *   a `00` exit code; national
 *   ones in the configured default region); a candidate is kept when it is a
 *   valid number, or a possible one written the way phone numbers are (grouped
 *   with separators); bare digit strings need a phone keyword before them.
 *   National formats of every other region: national-phones.ts.
 * - ADDRESS (addresses.ts) and ZIP (postal-codes.ts).
 * findStandardEntities runs them on the structured-text view (structured-text.ts), adds what a field's key names
 * as PII (field-evidence.ts) and drops what the context keeps (non-pii.ts).
 *
 * Hand-written because no installed library finds these kinds in free text
 * except phone numbers (libphonenumber-js, used) and card numbers
 * (card-validator validates; finding candidates is the digit-run scan here).
 */
import cardValidator from 'card-validator';
import { searchPhoneNumbersInText, type CountryCode } from 'libphonenumber-js/max';
import { withoutStackTraces } from './without-stack-traces.js';
import { findAddresses } from './addresses.js';
import { findZips } from './postal-codes.js';
import { findNationalPhones } from './national-phones.js';
import { fieldEvidence } from './field-evidence.js';
import { findNonPii, withoutKept } from './non-pii.js';
import { readStructure } from './structured-text.js';
import type { Span } from './spans.js';

// ------------------------------------------------------------------ email

const EMAIL_RE =
  /(?<![\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-])[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+\p{L}{2,63}(?![\p{L}\p{N}-]|\.[\p{L}\p{N}])/gu;

/** "jane [at] example [dot] com", "jane(at)example(dot)com", "jane at example dot com". */
const AT = '(?:[ \\t]*[\\[({][ \\t]*at[ \\t]*[\\])}][ \\t]*|[ \\t]+at[ \\t]+)';
const DOT = '(?:[ \\t]*[\\[({][ \\t]*dot[ \\t]*[\\])}][ \\t]*|[ \\t]+dot[ \\t]+)';
const OBFUSCATED_EMAIL_RE = new RegExp(
  `(?<![\\p{L}\\p{N}._%+-])[\\p{L}\\p{N}._%+-]+${AT}[\\p{L}\\p{N}-]+(?:${DOT}[\\p{L}\\p{N}-]+)*${DOT}\\p{L}{2,24}(?![\\p{L}\\p{N}])`,
  'giu',
);

export function findEmails(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(EMAIL_RE)) out.push({ start: m.index, end: m.index + m[0].length, kind: 'EMAIL' });
  for (const m of text.matchAll(OBFUSCATED_EMAIL_RE))
    out.push({ start: m.index, end: m.index + m[0].length, kind: 'EMAIL' });
  return out;
}

// ------------------------------------------------------------------ credit cards

/** Digit groups joined by single spaces or dashes, not glued to other digits, letters, decimals or a `+` (a phone). */
const DIGIT_RUN_RE = /(?<![\p{L}\p{N}_.,$€£+-])\d+(?:[ -]\d+)*(?![\p{L}\p{N}_]|[.,]\d)/gu;

interface Group {
  start: number;
  end: number;
  digits: string;
}

function groupsOf(run: string, offset: number): Group[] {
  const groups: Group[] = [];
  const re = /\d+/g;
  for (const m of run.matchAll(re))
    groups.push({ start: offset + m.index, end: offset + m.index + m[0].length, digits: m[0] });
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
  if (sizes.slice(0, -1).every((n) => n === 4) && sizes[sizes.length - 1]! <= 4) return true;
  // Or an issuer's other printed groupings (Visa 13 as 4-3-3-3, Maestro 4-4-5, 6-13): a first group of four or six
  // digits, then groups of three to six (the last one two or more). A phone number's groups are shorter or fewer.
  return (
    (sizes[0] === 4 || sizes[0] === 6) &&
    sizes.length >= 2 &&
    sizes.slice(1, -1).every((n) => n >= 3 && n <= 6) &&
    sizes[sizes.length - 1]! >= 2 &&
    sizes[sizes.length - 1]! <= 13
  );
}

/**
 * Brands and lengths card-validator does not list, from the issuers' published ranges: Visa at 13, 16 and 19 digits
 * (the 13-digit legacy numbers; Visa issues no 14, 15, 17 or 18: a 15-digit Luhn number from 49 is an IMEI), UATP (1, 15 digits), Diners enRoute (2014/2149, 15), JCB's 15-digit
 * ranges (2131/1800), RuPay/Verve/Dankort/Troy/UnionPay 8x ranges (16-19). Each must still pass Luhn.
 */
const EXTRA_BRANDS: { prefix: RegExp; lengths: number[]; gaps: number[] }[] = [
  { prefix: /^4/, lengths: [13, 16, 19], gaps: [4, 8, 12] },
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
  // Every brand card-validator accepts (UnionPay too, with luhnValidateUnionPay) must pass Luhn: the cheap check
  // first, so the brand lookup runs for about one window in ten.
  if (!luhnValid(digits)) return undefined;
  const v = cardValidator.number(digits, { luhnValidateUnionPay: true, maxLength: 19 });
  if (v.isValid && v.card) return v.card.gaps;
  return EXTRA_BRANDS.find((b) => b.prefix.test(digits) && b.lengths.includes(digits.length))?.gaps;
}

/**
 * Words right before a number that say it is a card. A "no." or "#" after the word is part of the separators (the
 * class holds "." and "#"), so they run once, unambiguously: the pattern stays linear (recheck: safe).
 */
const CARD_KEYWORD_RE = /\b(?:card|cc|pan|maestro|debit|credit)\b[\s.:#=-]*(?:(?:no|number|num)[\s.:#=-]*)?$/i;

/** Words before a bare digit run that make it a product, parcel or device number rather than a card. */
const NOT_CARD_KEYWORD_RE =
  /\b(?:ean|gtin|upc|isbn|issn|imei|meid|iccid|barcode|serial|tracking|parcel|shipment|order|invoice|timestamp|epoch|ts)\b[\s.:#=-]*(?:(?:no|number)[\s.:#=-]*)?$/i;

/** Four-digit groups joined by dots (`4012.8888.8888.1881`): a card only in that exact grouping. */
const DOTTED_CARD_RE = /(?<![\p{L}\p{N}_.,$€£-])\d{4}(?:\.\d{4}){2,3}(?:\.\d{1,3})?(?![\p{L}\p{N}_]|[.,]\d)/gu;

export function findCreditCards(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(DOTTED_CARD_RE)) {
    const digits = m[0].replace(/\./g, '');
    if (
      digits.length >= 13 &&
      cardGaps(digits) &&
      !NOT_CARD_KEYWORD_RE.test(text.slice(Math.max(0, m.index - 30), m.index))
    )
      out.push({ start: m.index, end: m.index + m[0].length, kind: 'CREDIT_CARD' });
  }
  for (const m of text.matchAll(DIGIT_RUN_RE)) {
    const run = m[0];
    // Maestro's 12-digit numbers only after a card word, or grouped 4-4-4 from a Maestro range: twelve digits are
    // more often something else.
    const minDigits =
      CARD_KEYWORD_RE.test(text.slice(Math.max(0, m.index - 24), m.index)) || MAESTRO_12_RE.test(run) ? 12 : 13;
    if (run.length < minDigits) continue;
    const notCard = (g: Group) => NOT_CARD_KEYWORD_RE.test(text.slice(Math.max(0, g.start - 30), g.start));
    // Two numbers side by side in different separator styles (`4111 1111 1111 1111-5500-0000-0000-0004`): each
    // stretch of one separator is read on its own (neighbouring stretches share their boundary group).
    for (const part of uniformStretches(groupsOf(run, m.index), text)) {
      for (const w of cardWindows(part, minDigits, notCard)) {
        out.push({ start: part[w.i]!.start, end: part[w.j]!.end, kind: 'CREDIT_CARD' });
      }
    }
  }
  return out;
}

/** A Maestro number of 12 digits grouped 4-4-4 (5018, 5020, 5038, 6304, 6759, 6761-6763). */
const MAESTRO_12_RE = /^(?:50(?:18|20|38)|6304|67(?:59|6[1-3]))[ -]\d{4}[ -]\d{4}$/;

/** A run's groups cut where the separator changes: each stretch is joined by one separator only. */
function uniformStretches(groups: readonly Group[], text: string): Group[][] {
  const out: Group[][] = [];
  let from = 0;
  for (let k = 1; k < groups.length; k++) {
    const sep = text[groups[k]!.start - 1];
    if (k > 1 && sep !== text[groups[k - 1]!.start - 1]) {
      out.push(groups.slice(from, k));
      from = k - 1;
    }
  }
  out.push(groups.slice(from));
  return out;
}

/** The most digits a card number has (ISO/IEC 7812): the window that bounds the scan of a digit run. */
const MAX_CARD_DIGITS = 19;

/**
 * The card numbers among a run's digit groups, as windows of groups i..j (inclusive) in text order: from each start
 * group the longest window that is a valid card in its brand's grouping, leftmost first; windows never overlap
 * (the scan resumes after a card, or at the next group when `notCard` rejects the card's first group). Linear in
 * the groups: a window holds at most MAX_CARD_DIGITS digits, so from each start only the windows within that bound
 * (at most 19 groups, and 8 digit counts from 12 to 19) are built and checked; `hi`, the last group that fits
 * from `i`, only moves forward.
 */
function cardWindows(
  groups: readonly Group[],
  minDigits: number,
  notCard: (first: Group) => boolean,
): { i: number; j: number }[] {
  const found: { i: number; j: number }[] = [];
  // before[k]: digits in groups 0..k-1.
  const before = [0];
  for (const g of groups) before.push(before[before.length - 1]! + g.digits.length);
  const digitsIn = (i: number, j: number) => before[j + 1]! - before[i]!;
  let hi = -1;
  let i = 0;
  while (i < groups.length) {
    if (hi < i) hi = i;
    while (hi + 1 < groups.length && digitsIn(i, hi + 1) <= MAX_CARD_DIGITS) hi++;
    let end = -1;
    for (let j = hi; j >= i && digitsIn(i, j) >= minDigits; j--) {
      if (digitsIn(i, j) > MAX_CARD_DIGITS) continue; // a single group longer than any card
      const window = groups.slice(i, j + 1);
      const gaps = cardGaps(window.map((g) => g.digits).join(''));
      if (gaps && isCardGrouping(window, gaps)) {
        end = j;
        break;
      }
    }
    if (end >= 0 && !notCard(groups[i]!)) {
      found.push({ i, j: end });
      i = end + 1;
    } else i++;
  }
  return found;
}

// ------------------------------------------------------------------ SSN

const SSN_SEPARATED_RE = /(?<![\p{L}\p{N}_$.-])(\d{3})([- .])(\d{2})\2(\d{4})(?![\p{L}\p{N}_]|[-.]\d)/gu;
const SSN_BARE_RE = /(?<![\p{L}\p{N}_$.-])(\d{3})(\d{2})(\d{4})(?![\p{L}\p{N}_]|[.,-]\d)/gu;
const SSN_KEYWORD_RE =
  /\b(?:ssn|ss#|ss no|soc(?:ial)?\.?\s*sec(?:urity)?(?:\s*(?:no|num|number|#))?|social security(?:\s*(?:no|num|number|#))?)\b/gi;
/** The most characters (no line break among them) between an SSN keyword and the number it labels. */
const SSN_KEYWORD_REACH = 24;

/**
 * Whether `before` ends within SSN_KEYWORD_REACH characters of an SSN keyword, on the keyword's line. The distance is
 * measured here rather than by a `[^\n]{0,24}$` tail on the pattern, which a backtracking engine retries from every
 * keyword (and recheck cannot prove linear).
 */
function ssnKeywordBefore(before: string): boolean {
  let last = -1;
  for (const m of before.matchAll(SSN_KEYWORD_RE)) last = m.index + m[0].length;
  return last >= 0 && before.length - last <= SSN_KEYWORD_REACH && !before.includes('\n', last);
}

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
    if (ssnKeywordBefore(before)) out.push({ start: m.index, end: m.index + m[0].length, kind: 'SSN' });
  }
  return out;
}

// ------------------------------------------------------------------ phone

const PHONE_KEYWORD_RE =
  /\b(?:phone|tel|telephone|call|calling|mobile|cell|cellphone|fax|sms|text|whatsapp|signal|contact|reach|dial|ph|mob|number|hotline|helpline)\b[^\n\d]{0,20}$/i;
const NOT_PHONE_KEYWORD_RE =
  /\b(?:order|invoice|account|acct|tracking|ref|reference|ticket|case|po|serial|sku|item|confirmation|transaction|txn|id|isbn|routing|member|policy|claim|part)\b[\s.:#-]*(?:(?:no|num(?:ber)?)[\s.:#-]*)?$/i;

const LOCAL_RE = /(?<![\p{L}\p{N}_$.,()+-]|\d[ .-]|\)[ ]?)\d{3}[-.]\d{4}(?![\p{L}\p{N}_]|[-.]\d)/gu;

/**
 * A trailing extension ("ext. 12", "x12", "#12") and the blanks before it. The lookbehind starts a match only where
 * a run of blanks starts: without it the engine retries from every blank of a long run (quadratic).
 */
const EXTENSION_RE = /(?<!\s)\s*(?:ext\.?|extension|x|#)\s*\d+$/i;
/** Trailing blanks and dots, matched from the start of their run only (linear, as EXTENSION_RE). */
const TRAILING_BLANKS_AND_DOTS_RE = /(?<![\s.])[\s.]+$/;

/** A possible-but-not-valid national number still counts when written in the region's usual grouping. */
const GROUPED_RE = /^(?:\+?1[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}$/;

/**
 * `00` dialled as the international prefix (`0044 20 7946 0958`, `001 212 …`): the matcher only knows `+`, so it
 * reads a copy where such a `00` is ` +` (same length); a match that starts at that `+` is moved back over the `0`.
 */
const EXIT_CODE_RE = /(?<![\p{L}\p{N}+])00(?=[1-9])/gu;

export function findPhones(text: string, region: CountryCode): Span[] {
  const out: Span[] = [];
  const dial = text.includes('00') ? text.replace(EXIT_CODE_RE, ' +') : text;
  let from = 0;
  // Restarted after a cut (see below) so a number swallowed as a false extension is scanned again.
  restart: while (from < text.length) {
    const slice = from === 0 ? dial : dial.slice(from);
    for (const m of searchPhoneNumbersInText(slice, { defaultCountry: region, extended: true })) {
      let start = from + m.startsAt;
      let end = from + m.endsAt;
      if (start > 0 && dial[start] === '+' && text.startsWith('00', start - 1)) start--;
      let raw = text.slice(start, end);
      // libphonenumber reads ", 212" or "; 1" after a number as an extension; only an explicit marker is one.
      if (m.number.ext && !/(?:ext\.?|extension|x|#)\s*\d+$/i.test(raw)) {
        const cut = Math.max(raw.lastIndexOf(','), raw.lastIndexOf(';'));
        if (cut > 0) {
          raw = raw.slice(0, cut).replace(TRAILING_BLANKS_AND_DOTS_RE, '');
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
    // A code or PIN to type in is not a number to call, whatever stands before it ("dial-in code 847 2210 93").
    if (/\b(?:code|pin|passcode|password|otp|id)\b[\s.:#-]*$/i.test(before)) return true;
    return NOT_PHONE_KEYWORD_RE.test(before) && !PHONE_KEYWORD_RE.test(before);
  };
  out.push(...findNationalPhones(text, keywordBefore, excluded, [...out]));
  // Seven-digit local numbers ("call 555-0123") are below what the matcher reports without an area code.
  for (const m of text.matchAll(LOCAL_RE)) {
    if (PHONE_KEYWORD_RE.test(text.slice(Math.max(0, m.index - 32), m.index)))
      out.push({ start: m.index, end: m.index + m[0].length, kind: 'PHONE' });
  }
  return out;
}

function accept(text: string, start: number, raw: string, n: { isValid(): boolean; isPossible(): boolean }): boolean {
  const before = text.slice(Math.max(0, start - 32), start);
  const international = raw.startsWith('+') || /^00\d/.test(raw);
  const core = raw.replace(EXTENSION_RE, '');
  const grouped = /[\s().-]/.test(core);
  if (NOT_PHONE_KEYWORD_RE.test(before) && !PHONE_KEYWORD_RE.test(before)) return false;
  if (n.isValid()) return international || grouped || PHONE_KEYWORD_RE.test(before);
  if (!n.isPossible()) return false;
  return (international && grouped) || GROUPED_RE.test(core);
}

// ------------------------------------------------------------------ all of them

/**
 * Every standard detection. The detectors read the structured-text view (quote markers blanked, export cells
 * split by tabs: structured-text.ts; same length, so offsets hold for `text`); what a field's key names as PII is
 * added, and what the context keeps (non-pii.ts: versions, identifiers, timestamps, device and parcel numbers;
 * values under a non-PII key) is dropped from the pattern detections.
 */
export function findStandardEntities(text: string, region: CountryCode): Span[] {
  const { view, fields } = readStructure(text);
  const addresses = findAddresses(view);
  const found = [
    ...findEmails(view),
    ...findCreditCards(view),
    ...findSsns(view),
    ...withoutStackTraces(() => findPhones(view, region)),
    ...addresses,
    ...findZips(view, addresses),
  ];
  const evidence = fieldEvidence(view, fields);
  return [...withoutKept(found, [...findNonPii(view), ...evidence.kept]), ...evidence.spans];
}
