/**
 * What a field's key says about its value (the fields come from structured-text.ts: JSON members, form lines,
 * CSV columns under their header).
 *
 * A key that names a kind of PII makes the value that kind when the value has that kind's shape, even where the
 * pattern detectors want more context:
 *  - ZIP (`zip`, `zipCode`, `postal_code`, `postcode`, `PLZ`, `eircode`): a US ZIP / ZIP+4, a four-digit code,
 *    a UK, Canadian or Irish postcode;
 *  - SSN (`ssn`, `social security`): nine digits, bare or grouped 3-2-4, within the SSA's rules;
 *  - PHONE (`phone`, `tel`, `mobile`, `cell`, `fax`, `contact number`): 7-15 digits written as a phone number
 *    (`+`, `00`, brackets, blanks, dots, dashes, an extension);
 *  - CREDIT_CARD (`card`, `card_number`, `cc`, `pan`): 12-19 digits, any grouping, Luhn-valid;
 *  - ADDRESS (`address`, `street`, `addr1`, `line1`, `residence`): a value that starts with a house number, a unit
 *    or a PO box: the value up to its first comma (the street line; the town and code after it stay to the
 *    other detectors).
 * A key that names something else (`id`, `order`, `invoice`, `tracking`, `imei`, `serial`, `version`, `ts`,
 * `created_at`, `amount`, `ip`, `uuid`, `isbn`, ...) keeps its value: detectors.ts drops what they found there.
 * A PII key wins over a non-PII word in the same key (`contact number`, `card_number`, `phone_id`).
 */
import { isValidSsn, luhnValid } from './detectors.js';
import type { Span } from './spans.js';
import type { Field } from './structured-text.js';

type KeyedKind = 'ZIP' | 'SSN' | 'PHONE' | 'CREDIT_CARD' | 'ADDRESS' | 'EMAIL';

/** A key in lower-case words: `zipCode` → `zip code`, `card_number` → `card number`, `Address line 1` → `address line 1`. */
function keyWords(key: string): string {
  return key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/[^a-z0-9#]+/g, ' ')
    .trim();
}

const PII_KEYS: [RegExp, KeyedKind][] = [
  [/\b(?:e ?mail|mail address)\b/, 'EMAIL'],
  [/\b(?:ssn|social security|soc sec)\b/, 'SSN'],
  [/\b(?:card|cc|pan|ccnum|cardnumber|creditcard)\b/, 'CREDIT_CARD'],
  [/\b(?:zip|zipcode|zip4|postal|postcode|post code|plz|postleitzahl|eircode)\b/, 'ZIP'],
  [
    /\b(?:phone|phones|tel|telephone|mobile|cell|cellphone|fax|msisdn|mob|whatsapp|contact number|phonenumber)\b/,
    'PHONE',
  ],
  [/\b(?:address|street|addr|addr ?1|address ?1|line ?1|residence|street address)\b/, 'ADDRESS'],
];

const NOT_PII_KEY =
  /\b(?:id|ids|uid|ref|reference|order|invoice|ticket|case|tracking|parcel|shipment|waybill|imei|imei ?2|meid|iccid|serial|sku|version|ver|build|release|ts|time|timestamp|date|created|updated|at|amount|total|price|qty|quantity|weight|ip|uuid|guid|isbn|hash|msg|request|session|txn|transaction|vat|account|acct|po|rma|no|number|duration|ms|bytes|size|count|status|code|exp|expiry|cvv|cvc)\b/;

/** The kind a key names: a PII kind, 'KEEP' (something else), or undefined (the key says nothing). */
export function keyKind(key: string): KeyedKind | 'KEEP' | undefined {
  const words = keyWords(key);
  for (const [re, kind] of PII_KEYS) if (re.test(words)) return kind;
  return NOT_PII_KEY.test(words) ? 'KEEP' : undefined;
}

const ZIP_VALUE_RE =
  /^(?:\d{5}(?:-\d{4})?|\d{4}|[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}|[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z][ \t]?\d[ABCEGHJ-NPRSTV-Z]\d|[AC-FHKNPRTV-Y]\d{2}[ \t]?[AC-FHKNPRTV-Y\d]{4})$/i;
const SSN_VALUE_RE = /^(\d{3})([- .]?)(\d{2})\2(\d{4})$/;
const PHONE_VALUE_RE =
  /^(?:\+|00)?[ \t]?(?:\(\d{1,5}\)[ \t.-]?)?\d[\d \t./-]{4,22}\d(?:[ \t]*(?:ext\.?|x|#)[ \t]*\d{1,6})?$/i;
const CARD_VALUE_RE = /^\d[\d .-]{10,26}\d$/;
/** A street line's start: a house number (`12`, `12B`, `12-14`), a unit, or a PO box. */
const STREET_START_RE =
  /^(?:\d{1,6}[A-Za-z]?(?:[-/]\d{1,5}[A-Za-z]?)?[ \t,]+\p{L}|(?:Flat|Unit|Apt|Suite|Apartment|P\.?[ \t]?O\.?[ \t]?Box|PO Box)\b)/iu;
/** The longest street line taken from a value. */
const MAX_STREET = 120;

export interface FieldEvidence {
  /** Values that their key names as PII, with the kind. */
  spans: Span[];
  /** Values that their key names as something else. */
  kept: { start: number; end: number }[];
}

export function fieldEvidence(text: string, fields: readonly Field[]): FieldEvidence {
  const spans: Span[] = [];
  const kept: { start: number; end: number }[] = [];
  for (const f of fields) {
    const kind = keyKind(f.key);
    if (!kind || kind === 'EMAIL') continue;
    if (kind === 'KEEP') {
      kept.push({ start: f.start, end: f.end });
      continue;
    }
    const value = text.slice(f.start, f.end);
    const span = (end = f.end): void => void spans.push({ start: f.start, end, kind });
    switch (kind) {
      case 'ZIP':
        if (ZIP_VALUE_RE.test(value)) span();
        break;
      case 'SSN': {
        const m = SSN_VALUE_RE.exec(value);
        if (m && isValidSsn(m[1]!, m[3]!, m[4]!)) span();
        break;
      }
      case 'PHONE': {
        const digits = value.replace(/\D/g, '').length;
        if (digits >= 7 && digits <= 18 && PHONE_VALUE_RE.test(value)) span();
        break;
      }
      case 'CREDIT_CARD': {
        const digits = value.replace(/\D/g, '');
        if (CARD_VALUE_RE.test(value) && digits.length >= 12 && digits.length <= 19 && luhnValid(digits)) span();
        break;
      }
      case 'ADDRESS': {
        if (!STREET_START_RE.test(value)) break;
        const comma = value.search(/[,\n]/);
        const end = f.start + Math.min(comma < 0 ? value.length : comma, MAX_STREET);
        span(end);
        break;
      }
    }
  }
  return { spans, kept };
}
