/**
 * airgap-scrub off the fixtures (issue 23, item 6): the structured-text pass (JSON keys, CSV columns by header or
 * by column consistency, form lines, quoted replies), the detector generalisations (`00` exit codes, card
 * groupings, adjacent cards, UK street lines without a street type) and the context rules that keep identifiers,
 * versions, timestamps, IMEIs, tracking numbers, IPs, ISBNs, UUIDs and amounts. Each case failed before the pass.
 * Inputs are written here (not taken from either corpus).
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../jobs/airgap-scrub/processor.js';
import { readStructure } from '../../jobs/airgap-scrub/structured-text.js';

const scrub = (text: string) => redact(text, 'US').scrubbed;

describe('airgap-scrub structured text', () => {
  it('reads a JSON zip, ssn and phone by their keys, string or number', () => {
    expect(scrub('{"name": "Ann", "zip": "02139", "ssn": "219099999", "tel": "617 555 0199"}')).toBe(
      '{"name": "Ann", "zip": "[ZIP]", "ssn": "[SSN]", "tel": "[PHONE]"}',
    );
    expect(scrub('{"address":{"postalCode":94103,"line1":"1 Market"}}')).toBe(
      '{"address":{"postalCode":[ZIP],"line1":"[ADDRESS]"}}',
    );
  });

  it('reads CSV columns by header, and a header-less zip column after a state column', () => {
    expect(scrub('customer,ssn,zip\nAnn,219099999,02139\nBob,078051120,10001\n')).toBe(
      'customer,ssn,zip\nAnn,[SSN],[ZIP]\nBob,[SSN],[ZIP]\n',
    );
    expect(scrub('OR,97201,12.50\nTX,73301,8.00\nME,04101,3.10\n')).toBe(
      'OR,[ZIP],12.50\nTX,[ZIP],8.00\nME,[ZIP],3.10\n',
    );
    // A card after a comma, and a street cell after a phone cell.
    expect(
      scrub(
        'id,card,phone,street\n7,4111111111111111,(617) 555-0199,12 Elm Street\n8,5500000000000004,(617) 555-0198,9 Oak Lane\n',
      ),
    ).toBe('id,card,phone,street\n7,[CREDIT_CARD],[PHONE],[ADDRESS]\n8,[CREDIT_CARD],[PHONE],[ADDRESS]\n');
  });

  it('reads form lines, query strings and log fields', () => {
    expect(scrub('Zip code: 60614\nSocial Security ..... 219099999\nOrder no: 123456789')).toBe(
      'Zip code: [ZIP]\nSocial Security ..... [SSN]\nOrder no: 123456789',
    );
    expect(scrub('GET /u?zip=60614&phone=6175550199&ts=1727386927 HTTP/1.1')).toBe(
      'GET /u?zip=[ZIP]&phone=[PHONE]&ts=1727386927 HTTP/1.1',
    );
  });

  it('reads a quoted reply as the original message, offsets unchanged', () => {
    const text = 'Thanks!\n\n> Send it to:\n> 12 Elm Street\n> Springfield, IL 62704\n>> call 0044 20 7946 0958';
    expect(scrub(text)).toBe('Thanks!\n\n> Send it to:\n> [ADDRESS]\n> Springfield, IL [ZIP]\n>> call [PHONE]');
    const { view } = readStructure(text);
    expect(view).toHaveLength(text.length);
  });
});

describe('airgap-scrub detector generalisations', () => {
  it('dials 00 as the international prefix', () => {
    expect(scrub('Ring 0044 20 7946 0958 or 001 212 555 0100.')).toBe('Ring [PHONE] or [PHONE].');
  });

  it('finds cards in uncommon groupings and side by side in different styles', () => {
    expect(scrub('Visa 4222 222 222 222 on file')).toBe('Visa [CREDIT_CARD] on file');
    expect(scrub('cards 4111 1111 1111 1111 5500-0000-0000-0004 were used')).toBe(
      'cards [CREDIT_CARD] [CREDIT_CARD] were used',
    );
  });

  it('finds a UK street line without a street type before a postcode', () => {
    expect(scrub('Deliver to 138 Kingsway, London WC2B 6NH please')).toBe('Deliver to [ADDRESS], London [ZIP] please');
    expect(scrub('Flat 2\n7 The Pavement\nLondon\nSW4 0HY')).toBe('[ADDRESS]\nLondon\n[ZIP]');
  });
});

describe('airgap-scrub context rules keep what is not PII', () => {
  it.each([
    'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0.5707.246 Safari/537.36',
    'invoice INV-2023-000047 and order ORD-20250926-4471',
    'logged at 26.09.2025 21:42 and 2025-09-26T21:42:07.123Z',
    'IMEI 35-209900-176148-1, IMEI: 490154203237518',
    'tracking 9400 1000 0000 0000 0000 00 and 1Z999AA10123456784',
    'server 203.0.113.42:8443 and 2001:db8::42',
    'ISBN 978-0-306-40615-7, id 3f2b8c1e-9a4d-4e2b-8f1c-2d3e4f5a6b7c',
    'took 316.517 ms, total $1,234.56',
    '{"imei": "490154203237518", "order_id": "202509264471"}',
  ])('%s', (text) => {
    expect(scrub(text)).toBe(text);
  });

  it('still redacts PII after its keyword, whatever joins them', () => {
    expect(scrub('SSN#219099999 and tel-6175550199')).toBe('SSN#[SSN] and tel-[PHONE]');
  });
});
