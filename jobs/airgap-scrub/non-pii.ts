/**
 * Context rules that KEEP text airgap-scrub's pattern detectors would otherwise take for PII: digit strings whose
 * shape or context says what else they are. `findNonPii(text)` returns the ranges of
 *  - versions: product tokens (`Chrome/126.0.5707.246`, `Safari/605.1.15`), `v1.2.3`, numbers after a version
 *    word (`version 10.0.19045`, `build 22631.4169`, `iOS 17.4`), and dotted numbers of three or more parts with
 *    a one-digit part after the first (`126.0.5707.246`; a dotted phone's groups are two digits or more);
 *  - dates and timestamps: ISO 8601 (`2025-09-26T21:42:07Z`), day-month-year and month-day-year with `.`, `/`
 *    or `-` and an optional time (`26.09.2025 21:42`, `09/26/2025 9:42 PM`), year-first (`2025/09/26 21:42`),
 *    web-server logs (`26/Sep/2025:21:42:07 +0000`), month names (`Sep 26, 2025 21:42`, `26-Sep-2025`), times;
 *  - identifiers: a letter prefix glued to five or more digits (`INV-2023-000047`, `ORD-20250926-4471`,
 *    `PO-4500012345`, `SR123456789`, `CUST-12345-A12`, `REF/2025/00012`) unless the prefix is a PII keyword
 *    (`SSN123…`, `tel-…`), `#` and six or more digits;
 *  - device and parcel numbers: IMEIs (`IMEI` and the number after it; the 2-6-6-1 grouping), the number after a
 *    tracking/parcel/shipment/waybill word, UPS `1Z…`, USPS 20-22 digits starting 91-95, S10 (`RR123456789US`);
 *  - network and catalogue numbers: IPv4 (with a port), IPv6, UUIDs, ISBN-13 with a valid check digit;
 *  - amounts: a currency sign or code with a number, decimals with one to three decimal places (`316.517`),
 *    and an access log's status and size (`HTTP/1.1" 200 5814`).
 * detectors.ts drops every detection (except e-mail addresses, which none of these can be) that overlaps a kept
 * range; a value that a field's key names as PII (field-evidence.ts) is redacted all the same.
 * Every pattern is linear (test/unit/regex-redos.test.ts); the ISBN check digit is verified in code.
 */

interface Range {
  start: number;
  end: number;
}

const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]{0,6}\\.?';
const TIME = '\\d{1,2}:\\d{2}(?::\\d{2}(?:[.,]\\d{1,9})?)?(?:[ \\t]?[AaPp]\\.?[Mm]\\.?)?';
const ZONE = '(?:Z|[ \\t]?[+-]\\d{2}:?\\d{2}|[ \\t]?UTC|[ \\t]?GMT)?';
/** A day or a month number (1-31). */
const DAY = '(?:0?[1-9]|[12]\\d|3[01])';
const NB = '(?<![\\p{L}\\p{N}_])';
const NA = '(?![\\p{L}\\p{N}_]|[-./:]\\d)';

const KEEP_PATTERNS: RegExp[] = [
  // ISO 8601 date, optional time and zone.
  new RegExp(`${NB}\\d{4}-\\d{2}-\\d{2}(?:[T ]${TIME})?${ZONE}${NA}`, 'gu'),
  // Day-month-year / month-day-year, optional time.
  new RegExp(`${NB}${DAY}([./-])${DAY}\\1\\d{2,4}(?:,?[ T]${TIME}${ZONE})?${NA}`, 'gu'),
  // Year first with slashes or dots.
  new RegExp(`${NB}\\d{4}([./])\\d{1,2}\\1\\d{1,2}(?:[ T]${TIME}${ZONE})?${NA}`, 'gu'),
  // Web-server logs: 26/Sep/2025:21:42:07 +0000.
  new RegExp(`${NB}\\d{1,2}/${MONTH}/\\d{4}(?::\\d{2}){3}(?:[ \\t][+-]\\d{4})?`, 'gu'),
  // Month names: Sep 26, 2025 21:42 / 26 Sep 2025 / 26-Sep-2025 21:42:07.
  new RegExp(`${NB}${MONTH}[ \\t]\\d{1,2}(?:st|nd|rd|th)?,?[ \\t]\\d{4}(?:,?[ \\t](?:at[ \\t])?${TIME})?`, 'gu'),
  new RegExp(`${NB}\\d{1,2}[ -]${MONTH}[ -]\\d{4}(?:[ T]${TIME})?`, 'gu'),
  // A time of day on its own (`21:42`, `9:42 PM`, `21:42:07.123`).
  new RegExp(`${NB}${TIME}${NA}`, 'gu'),
  // Product tokens and v-prefixed versions.
  /(?<![\w./-])(?:[A-Za-z][\w-]{0,30}\/|[vV])\d+(?:\.\d+)+(?:[-+][\w.]{1,20})?/g,
  // Numbers after a version word.
  /\b(?:[Vv]ersion|VERSION|[Vv]er|[Bb]uild|BUILD|[Rr]elease|[Ff]irmware|FW|OS|iOS|[Aa]ndroid|[Ww]indows|macOS|[Aa]pp|SDK|API|[Kk]ernel|[Pp]atch|[Uu]pdate|[Rr]ev)\b[ \t:=#]{0,3}v?\d+(?:\.\d+)+/g,
  // IPv4 (with a port).
  /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?::\d{1,5})?(?![\w]|\.\d)/g,
  // IPv6: hex groups with at least two colons, one of them `::` or seven of them.
  /(?<![\w:])[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6}::(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6})?(?![\w:])|(?<![\w:])[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){7}(?![\w:])/g,
  // UUIDs.
  /(?<![\w-])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![\w-])/g,
  // Parcel numbers by shape: UPS, USPS IMpb (20-22 digits from 91-95), S10 (UPU).
  /(?<![\w])1Z[0-9A-Z]{16}(?![\w])/g,
  /(?<![\w])9[1-5]\d{2}(?:[ ]?\d{4}){4}(?:[ ]?\d{2}){0,1}(?![\w])/g,
  /(?<![\w])[A-Z]{2}\d{9}[A-Z]{2}(?![\w])/g,
  // The number after a tracking or parcel word (letters, digits, groups of them).
  /\b(?:[Tt]racking|TRACKING|[Pp]arcel|PARCEL|[Ss]hipment|[Ww]aybill|AWB|[Cc]onsignment|[Ss]endungsnummer)(?:[ \t]*(?:[Nn]o\.?|[Nn]umber|#|[Ii][Dd]|[Cc]ode))?[ \t:=#.-]{0,4}(?:is[ \t]+)?[A-Z0-9]{4,40}(?:[ -][0-9]{2,6}){0,6}(?![\w])/g,
  // IMEIs: the keyword and its number, and the 2-6-6-1 grouping.
  /\b(?:IMEI|imei|MEID|meid)(?:[ \t]?[12])?[ \t]{0,2}[:#=]?[ \t]{0,2}\d[\d -]{13,20}\d/g,
  /(?<![\w-])\d{2}[- ]\d{6}[- ]\d{6}[- ]\d(?![\w-])/g,
  // Currency amounts and decimals with one to three places.
  /[$€£¥][ \t]?\d[\d,.]{0,20}\d|\b(?:USD|EUR|GBP|CAD|AUD|CHF|JPY)[ \t]?\d[\d,.]{0,20}/g,
  /(?<![\w.,])\d[\d,.]{0,20}[ \t]?(?:€|EUR|USD|GBP)\b/g,
  /(?<![\w.,+-])\d{1,6}\.\d{1,3}(?![\w]|[.,]\d)/g,
  // An access log's status and response size.
  /HTTP\/\d(?:\.\d)?"[ \t]\d{3}[ \t]\d+/g,
  // `#` and six or more digits: an order, ticket or case number.
  /(?<![\w#])#\d{6,}(?![\w])/g,
];

/** A letter prefix glued to digits (`INV-2023-000047`): an identifier when it holds five or more digits. */
const PREFIXED_ID_RE =
  /(?<![\p{L}\p{N}_.+-])([A-Za-z]{1,8})([-/#_]?)(\d[\dA-Za-z]*(?![\dA-Za-z])(?:[-/_][\dA-Za-z]+(?![\dA-Za-z])){0,4})/gu;
/** Prefixes that label PII glued to it (`SSN123456789`, `tel-0207…`), or a unit or extension. */
const PII_PREFIX_RE = /^(?:ssn|ss|tel|ph|phone|mob|mobile|cell|fax|cc|card|pan|zip|plz|pin|x|ext|apt|ste|no|nr)$/i;

/** Dotted numbers of three or more parts: a version when a part after the first is one digit (checked in code). */
const DOTTED_RE = /(?<![\w.])\d{1,5}(?:\.\d{1,6}){2,7}(?![\w]|\.\d)/g;

/** ISBN-13: 978/979 and ten more digits, optionally hyphenated or spaced; the check digit is verified. */
const ISBN13_RE = /(?<![\w-])97[89](?:[- ]?\d){10}(?![\w-])/g;

function isbn13Valid(s: string): boolean {
  const d = s.replace(/\D/g, '');
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (d.charCodeAt(i) - 48) * (i % 2 ? 3 : 1);
  return (10 - (sum % 10)) % 10 === d.charCodeAt(12) - 48;
}

export function findNonPii(text: string): Range[] {
  const out: Range[] = [];
  for (const re of KEEP_PATTERNS)
    for (const m of text.matchAll(re)) out.push({ start: m.index, end: m.index + m[0].length });
  for (const m of text.matchAll(PREFIXED_ID_RE)) {
    const digits = m[3]!.replace(/\D/g, '').length;
    if (digits >= 5 && !PII_PREFIX_RE.test(m[1]!)) out.push({ start: m.index, end: m.index + m[0].length });
  }
  for (const m of text.matchAll(DOTTED_RE))
    if (
      m[0]
        .split('.')
        .slice(1)
        .some((p) => p.length === 1)
    )
      out.push({ start: m.index, end: m.index + m[0].length });
  for (const m of text.matchAll(ISBN13_RE))
    if (isbn13Valid(m[0])) out.push({ start: m.index, end: m.index + m[0].length });
  return out;
}

/**
 * `spans` without those (other than e-mail addresses) that overlap a kept range. Ranges are merged and sorted once;
 * each span finds its neighbours by binary search (n log n, where testing every range per span is quadratic).
 */
export function withoutKept<S extends Range & { kind: string }>(spans: readonly S[], kept: readonly Range[]): S[] {
  const merged: Range[] = [];
  for (const r of [...kept].sort((a, b) => a.start - b.start)) {
    const last = merged[merged.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else merged.push({ ...r });
  }
  return spans.filter((s) => {
    if (s.kind === 'EMAIL') return true;
    let lo = 0;
    let hi = merged.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (merged[mid]!.end <= s.start) lo = mid + 1;
      else hi = mid;
    }
    return !(lo < merged.length && merged[lo]!.start < s.end);
  });
}
