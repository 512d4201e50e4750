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

let plans: Plan[] | undefined;

function numberingPlans(): Plan[] {
  if (plans) return plans;
  const metadata = new Metadata();
  plans = [];
  for (const region of getCountries()) {
    metadata.selectNumberingPlan(region);
    const plan = (metadata as unknown as { numberingPlan?: { nationalPrefix(): string | undefined; possibleLengths(): number[] | undefined; nationalNumberPattern(): string } }).numberingPlan;
    if (!plan) continue;
    plans.push({ region, nationalPrefix: plan.nationalPrefix() || undefined, lengths: new Set(plan.possibleLengths() ?? []), pattern: new RegExp(`^(?:${plan.nationalNumberPattern()})$`) });
  }
  return plans;
}

const CANDIDATE_RE = /(?<![\p{L}\p{N}_+$€£¥.,:/-]|\d[ .-])(?:\(\d{1,5}\)[ -]?)?\d{1,6}(?:[ ./-]\d{1,8}){0,5}(?![\p{L}\p{N}_]|[.,:]\d|[ -]\d)/gu;
const DATE_RE = /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}|\d{1,2}[./]\d{1,2})$/;

const ZIP4_RE = /^\d{5}-\d{4}$/;

const groupsOf = (s: string): string => (s.match(/\d+/g) ?? []).map((g) => g.length).join(',');

/** Regions where `digits` (as dialled at home) is a valid number, cheapest checks first. */
function validIn(raw: string, digits: string): { region: CountryCode; national: string }[] {
  const out: { region: CountryCode; national: string }[] = [];
  for (const plan of numberingPlans()) {
    const nn = plan.nationalPrefix && digits.startsWith(plan.nationalPrefix) ? digits.slice(plan.nationalPrefix.length) : digits;
    if (!plan.lengths.has(nn.length) || !plan.pattern.test(nn)) continue;
    const parsed = parsePhoneNumberFromString(raw, plan.region);
    if (parsed?.isValid()) out.push({ region: plan.region, national: parsed.formatNational() });
  }
  return out;
}

export function findNationalPhones(text: string, keywordBefore: (start: number) => boolean, isExcluded: (start: number) => boolean): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(CANDIDATE_RE)) {
    const raw = m[0];
    const digits = raw.replace(/\D/g, '');
    if (digits.length < 6 || digits.length > 13 || DATE_RE.test(raw) || ZIP4_RE.test(raw)) continue;
    // Two numbers joined by a dash read as a range ("pages 101-145"), unless the first dials a trunk prefix.
    if (/^\d+-\d+$/.test(raw) && !raw.startsWith('0')) continue;
    const grouped = /[ ./()-]/.test(raw);
    const keyword = keywordBefore(m.index);
    if (!grouped && !keyword) continue;
    if (isExcluded(m.index)) continue;
    const regions = validIn(raw, digits);
    if (!regions.length) continue;
    const shape = groupsOf(raw);
    if (keyword || regions.some((r) => groupsOf(r.national) === shape)) out.push({ start: m.index, end: m.index + raw.length, kind: 'PHONE' });
  }
  return out;
}
