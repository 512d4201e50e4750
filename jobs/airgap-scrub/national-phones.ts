/**
 * Phone numbers written in a national format of any region ("020 7946 0958",
 * "06 12 34 56 78", "(02) 1234 5678", "090-1234-5678"), which
 * libphonenumber-js' text matcher only finds for its one default region.
 *
 * Candidates are digit groups joined by single spaces, dashes, dots or
 * slashes, with an optional bracketed first group. A candidate is a phone
 * number when it is a valid number of some region (libphonenumber-js, max
 * metadata, over every region it knows) and it is plausible as written:
 *  - its digit groups are exactly those of that region's national format
 *    (how the region's own directories print it), or
 *  - a phone keyword stands right before it (then any grouping).
 * Dates, decimals and amounts are not candidates. The regions are narrowed
 * first by each one's possible lengths and national number pattern
 * (precompiled from the metadata), so the full parse runs for a few regions
 * per candidate, not for all of them.
 */
import { getCountries, Metadata, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { Span } from './spans.js';

interface Plan {
  region: CountryCode;
  nationalPrefix: string | undefined;
  lengths: Set<number>;
  pattern: RegExp;
}

/** Numbering plans by the length of the national number they accept (so a candidate meets only the plans it can fit). */
let byLength: Map<number, Plan[]> | undefined;

function plansOfLength(length: number): readonly Plan[] {
  if (!byLength) {
    byLength = new Map();
    const metadata = new Metadata();
    for (const region of getCountries()) {
      metadata.selectNumberingPlan(region);
      const plan = (
        metadata as unknown as {
          numberingPlan?: {
            nationalPrefix(): string | undefined;
            possibleLengths(): number[] | undefined;
            nationalNumberPattern(): string;
          };
        }
      ).numberingPlan;
      if (!plan) continue;
      const entry: Plan = {
        region,
        nationalPrefix: plan.nationalPrefix() || undefined,
        lengths: new Set(plan.possibleLengths() ?? []),
        pattern: new RegExp(`^(?:${plan.nationalNumberPattern()})$`),
      };
      for (const n of entry.lengths) byLength.set(n, [...(byLength.get(n) ?? []), entry]);
    }
  }
  return byLength.get(length) ?? [];
}

const CANDIDATE_RE =
  /(?<![\p{L}\p{N}_+$€£¥.,:/-]|\d[ .-])(?:\(\d{1,5}\)[ -]?)?\d{1,6}(?:[ ./-]\d{1,8}){0,5}(?![\p{L}\p{N}_]|[.,:]\d|[ -]\d)/gu;
const DATE_RE = /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}|\d{1,2}[./]\d{1,2})$/;
const ZIP4_RE = /^\d{5}-\d{4}$/;

const groupsOf = (s: string): string => (s.match(/\d+/g) ?? []).map((g) => g.length).join(',');

/**
 * Whether `raw` (as dialled at home) is a valid number of some region written the way that region prints it
 * (`anyGrouping`: in any grouping). Cheapest checks first: the plan's lengths and national number pattern, then
 * libphonenumber's parse; the first region that fits ends the search.
 */
function plausibleSomewhere(raw: string, digits: string, anyGrouping: boolean): boolean {
  const key = `${anyGrouping ? 'k' : 'g'}${raw}`;
  const cached = verdicts.get(key);
  if (cached !== undefined) return cached;
  const verdict = search(raw, digits, anyGrouping);
  if (verdicts.size >= 5000) verdicts.clear();
  verdicts.set(key, verdict);
  return verdict;
}

/** Verdicts of recent candidates (a worker sees the same numbers again: signatures, templates). */
const verdicts = new Map<string, boolean>();
/** Full parses per candidate at most: a string that fits this many regions' patterns without fitting their grouping is not written as a phone. */
const MAX_PARSES = 12;

function search(raw: string, digits: string, anyGrouping: boolean): boolean {
  const shape = groupsOf(raw);
  const seen = new Set<Plan>();
  let parses = 0;
  for (const prefixLength of [0, 1, 2]) {
    for (const plan of plansOfLength(digits.length - prefixLength)) {
      if (seen.has(plan)) continue;
      const prefix = plan.nationalPrefix;
      if (prefixLength && (!prefix || prefix.length !== prefixLength || !digits.startsWith(prefix))) continue;
      if (!prefixLength && prefix && digits.startsWith(prefix) && plan.lengths.has(digits.length - prefix.length))
        continue;
      seen.add(plan);
      if (!plan.pattern.test(digits.slice(prefixLength))) continue;
      if (++parses > MAX_PARSES) return false;
      const parsed = parsePhoneNumberFromString(raw, plan.region);
      if (parsed?.isValid() && (anyGrouping || groupsOf(parsed.formatNational()) === shape)) return true;
    }
  }
  return false;
}

/** `taken`: phone spans already found (the international matcher's); a candidate inside one is not read again. */
export function findNationalPhones(
  text: string,
  keywordBefore: (start: number) => boolean,
  isExcluded: (start: number) => boolean,
  taken: readonly Span[] = [],
): Span[] {
  const out: Span[] = [];
  // Candidates come in text order, without overlaps: one sweep over the taken spans (by start) finds the ones a
  // candidate overlaps, where testing every taken span per candidate would be quadratic.
  const byStart = [...taken].sort((a, b) => a.start - b.start);
  let next = 0;
  let reach = -1; // the furthest end among the taken spans that start before the candidate's end
  for (const m of text.matchAll(CANDIDATE_RE)) {
    const raw = m[0];
    for (; next < byStart.length && byStart[next]!.start < m.index + raw.length; next++) {
      reach = Math.max(reach, byStart[next]!.end);
    }
    if (reach > m.index) continue;
    // SSN-shaped (AAA-GG-SSSS) is the SSN detector's.
    if (/^\d{3}-\d{2}-\d{4}$/.test(raw)) continue;
    const digits = raw.replace(/\D/g, '');
    if (digits.length < 6 || digits.length > 13 || DATE_RE.test(raw) || ZIP4_RE.test(raw)) continue;
    // Two numbers joined by a dash read as a range ("pages 101-145"), unless the first dials a trunk prefix.
    if (/^\d+-\d+$/.test(raw) && !raw.startsWith('0')) continue;
    const grouped = /[ ./()-]/.test(raw);
    const keyword = keywordBefore(m.index);
    if (!grouped && !keyword) continue;
    if (isExcluded(m.index)) continue;
    if (plausibleSomewhere(raw, digits, keyword))
      out.push({ start: m.index, end: m.index + raw.length, kind: 'PHONE' });
  }
  return out;
}

/** Compiles the numbering plans now (about a quarter of a second), so the first request does not pay for it. */
export function warmUpNationalPhones(): void {
  plausibleSomewhere('020 7946 0958', '02079460958', false);
}
