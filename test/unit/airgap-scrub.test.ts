/**
 * airgap-scrub's processor: each entity kind with its label, the spec's
 * example, deterministic overlap resolution, strict mode through any AI
 * provider (and its absence: 503 ai_unavailable), input errors as coded 4xx
 * whose messages never quote the text, and the default phone region.
 */
import { describe, expect, it } from 'vitest';
import { AirgapScrubOutput } from '../../jobs/airgap-scrub/sku.js';
import { createAiProvider } from '../../core/ai/create-ai-provider.js';
import { AiUpstreamTimeoutError, type AiProvider, type SensitiveSpan } from '../../core/ai/ai-provider.js';
import type { JobError } from '../../core/queue/queue.js';
import { createAirgapScrubProcessor, type AirgapScrubResponse } from '../../jobs/airgap-scrub/processor.js';
import { applyRedactions, resolveSpans, type Span } from '../../jobs/airgap-scrub/spans.js';
import { bufferLogger, jobContext, processorDeps } from '../helpers/text-skus.js';
import { jobErrorOf } from '../helpers/job-error.js';

const standard = await createAirgapScrubProcessor(processorDeps());
const scrub = async (text: string, strictMode?: boolean): Promise<AirgapScrubResponse> => {
  const body = await standard.handle(strictMode === undefined ? { text } : { text, strictMode }, jobContext());
  expect(AirgapScrubOutput.safeParse(body).success).toBe(true);
  return body;
};

async function rejection(p: Promise<unknown>): Promise<JobError> {
  return jobErrorOf(p);
}

/** The provider methods strict-mode redaction never calls. */
const unused = {
  embed: () => Promise.reject(new Error('not used by airgap-scrub')),
  summarize: () => Promise.reject(new Error('not used by airgap-scrub')),
  sentiment: () => Promise.reject(new Error('not used by airgap-scrub')),
};

/** An AI provider that reports every occurrence of the given names (NAME) and phrases (BIO). */
function fakeProvider(
  names: string[],
  bios: string[] = [],
  extra: SensitiveSpan[] = [],
): AiProvider & { calls: number } {
  const provider = {
    ...unused,
    adapter: 'local' as const,
    calls: 0,
    async findSensitiveSpans(text: string) {
      provider.calls++;
      const spans: SensitiveSpan[] = [...extra];
      for (const [list, kind] of [
        [names, 'NAME'],
        [bios, 'BIO'],
      ] as const) {
        for (const needle of list) {
          for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1))
            spans.push({ start: at, end: at + needle.length, kind });
        }
      }
      return { spans, model: 'fake-ner-1' };
    },
  };
  return provider;
}

describe('airgap-scrub: standard mode', () => {
  it('answers the catalogue example exactly', async () => {
    expect(await scrub('Call me at 555-010-9999 or mail jane@example.com')).toEqual({
      success: true,
      scrubbed: 'Call me at [PHONE] or mail [EMAIL]',
      entities_redacted: ['PHONE', 'EMAIL'],
      source: 'airgap-scrub',
      mode: 'standard',
    });
  });

  it('replaces each kind by its label and lists the kinds in order of appearance', async () => {
    const text =
      'Card 5527-6018-9555-9795, SSN 412-58-3391. Ship to 350 Fifth Ave, Suite 3300, New York, NY 10118; call +44 20 7946 0958 or write ops@example.org.';
    const body = await scrub(text);
    expect(body.scrubbed).toBe(
      'Card [CREDIT_CARD], SSN [SSN]. Ship to [ADDRESS], New York, NY [ZIP]; call [PHONE] or write [EMAIL].',
    );
    expect(body.entities_redacted).toEqual(['CREDIT_CARD', 'SSN', 'ADDRESS', 'ZIP', 'PHONE', 'EMAIL']);
  });

  it('leaves text without entities untouched (hard negatives)', async () => {
    const text =
      'Order #48213 shipped 2024-01-15 for $12,345.67 (v2.14.3); card 4111 1111 1111 1112 fails Luhn; SSN 666-45-1234 is invalid.';
    expect(await scrub(text)).toMatchObject({ scrubbed: text, entities_redacted: [] });
  });

  it('checks every card brand with Luhn and the brand grouping', async () => {
    const valid = [
      '4526 0181 5908 3012',
      '3442 366712 76843',
      '6011-5995-2890-7863',
      '3528472803852803',
      '2221 7114 7104 9743',
      '6285 3933 6338 7509',
    ];
    for (const card of valid)
      expect((await scrub(`pay with ${card} today`)).scrubbed, card).toBe('pay with [CREDIT_CARD] today');
    // Luhn-invalid, and a valid number in an impossible grouping.
    for (const text of ['pay with 4526 0181 5908 3015 today', 'pay with 45 2601 8159 0830 12 today'])
      expect((await scrub(text)).scrubbed).toBe(text);
  });

  it('finds SSNs with or without separators (bare ones only after an SSN keyword)', async () => {
    expect((await scrub('SSN 219876543 on file')).scrubbed).toBe('SSN [SSN] on file');
    expect((await scrub('ref 219876543 on file')).scrubbed).toBe('ref 219876543 on file');
    expect((await scrub('ids 531 72 8840 and 531.72.8840')).scrubbed).toBe('ids [SSN] and [SSN]');
    expect((await scrub('area 000-12-3456, group 123-00-4567, serial 123-45-0000')).entities_redacted).toEqual([]);
  });

  it('resolves overlaps to the longest, most specific span, whatever the detector order', () => {
    const text = 'x'.repeat(40);
    const spans: Span[] = [
      { start: 2, end: 8, kind: 'PHONE' },
      { start: 5, end: 12, kind: 'NAME' }, // partial overlap: the union is redacted
      { start: 20, end: 25, kind: 'ZIP' },
      { start: 20, end: 25, kind: 'SSN' }, // same length: SSN is more specific than ZIP
      { start: 30, end: 38, kind: 'BIO' },
      { start: 31, end: 33, kind: 'EMAIL' }, // inside the BIO
    ];
    const expected = [
      { start: 2, end: 12, kind: 'NAME', kinds: ['NAME', 'PHONE'] },
      { start: 20, end: 25, kind: 'SSN', kinds: ['SSN', 'ZIP'] },
      { start: 30, end: 38, kind: 'BIO', kinds: ['BIO', 'EMAIL'] },
    ];
    for (let i = 0; i < 20; i++) {
      const shuffled = [...spans].sort(() => Math.random() - 0.5);
      expect(resolveSpans(shuffled, text.length)).toEqual(expected);
    }
    const { scrubbed, kinds } = applyRedactions(text, resolveSpans(spans, text.length));
    expect(scrubbed).toBe('xx[NAME]xxxxxxxx[SSN]xxxxx[BIO]xx');
    expect(kinds).toEqual(['NAME', 'PHONE', 'SSN', 'ZIP', 'BIO', 'EMAIL']);
  });

  it('finds national numbers of every region, whatever AIRGAP_PHONE_REGION says (issue 14)', async () => {
    const gb = await createAirgapScrubProcessor(processorDeps({}, { AIRGAP_PHONE_REGION: 'GB' }));
    const text = 'Ring the office on 020 7946 0958 today.';
    expect((await gb.handle({ text }, jobContext())).scrubbed).toBe('Ring the office on [PHONE] today.');
    expect((await scrub(text)).scrubbed).toBe('Ring the office on [PHONE] today.');
    // National formats as each region prints them (libphonenumber's example numbers), and a keyword for other groupings.
    for (const n of [
      '06 12 34 56 78',
      '(02) 1234 5678',
      '030 123456',
      '090-1234-5678',
      '0412 345 678',
      '07400 123456',
    ]) {
      expect((await scrub(`Call me on ${n}.`)).scrubbed, n).toBe('Call me on [PHONE].');
    }
    // Not phones: ranges, ZIP+4, dates, conference codes.
    for (const t of ['Read pages 101-145.', 'Cambridge, MA 02139-4307', 'Due 2024-06-01.', 'dial-in code 847 2210 93'])
      expect((await scrub(t)).entities_redacted, t).not.toContain('PHONE');
    await expect(createAirgapScrubProcessor(processorDeps({}, { AIRGAP_PHONE_REGION: 'ZZ' }))).rejects.toThrow(
      /AIRGAP_PHONE_REGION/,
    );
  });
});

describe('airgap-scrub: strict mode', () => {
  const bio = 'a retired cardiologist from Ohio who coaches little league';
  const text = `Alice Johnson (alice.j@example.com) is ${bio}. Call Alice Johnson at 415-555-0139.`;

  it('answers 503 ai_unavailable without an AI provider, naming strictMode', async () => {
    const err = await rejection(standard.handle({ text, strictMode: true }, jobContext()));
    expect(err).toMatchObject({ code: 'ai_unavailable', status: 503, details: { field: 'strictMode' } });
  });

  it('adds the provider NAME and BIO spans to the pattern ones, mode deep', async () => {
    const ai = fakeProvider(['Alice Johnson'], [bio]);
    const deep = await createAirgapScrubProcessor(processorDeps({ ai }));
    const body = await deep.handle({ text, strictMode: true }, jobContext());
    expect(AirgapScrubOutput.safeParse(body).success).toBe(true);
    expect(body).toEqual({
      success: true,
      scrubbed: '[NAME] ([EMAIL]) is [BIO]. Call [NAME] at [PHONE].',
      entities_redacted: ['NAME', 'EMAIL', 'BIO', 'PHONE'],
      source: 'airgap-scrub+local:fake-ner-1',
      mode: 'deep',
    });
    // Without strictMode the provider is not asked.
    const calls = ai.calls;
    expect((await deep.handle({ text }, jobContext())).mode).toBe('standard');
    expect(ai.calls).toBe(calls);
  });

  it('merges provider spans that overlap pattern spans and ignores malformed ones', async () => {
    const t = 'Write to bob.smith@example.com, Bob Smith.';
    const at = t.indexOf('bob.smith');
    const ai = fakeProvider(
      ['Bob Smith'],
      [],
      [
        { start: at, end: at + 9, kind: 'NAME' }, // "bob.smith" inside the email: the email wins
        { start: -4, end: 3, kind: 'NAME' },
        { start: 10, end: 5, kind: 'BIO' },
        { start: 0, end: 10_000, kind: 'BIO' },
        { start: 1.5, end: 4, kind: 'NAME' },
        { start: 0, end: 5, kind: 'SSN' as never },
      ],
    );
    const deep = await createAirgapScrubProcessor(processorDeps({ ai }));
    const body = await deep.handle({ text: t, strictMode: true }, jobContext());
    expect(body.scrubbed).toBe('Write to [EMAIL], [NAME].');
    expect(body.entities_redacted).toEqual(['EMAIL', 'NAME']);
  });

  it("works with the project's own local AI provider (AI_PROVIDER=local)", async () => {
    const deps = processorDeps({}, { AI_PROVIDER: 'local' });
    const ai = await createAiProvider(deps.config, deps.logger);
    try {
      const deep = await createAirgapScrubProcessor({ ...deps, ai });
      const t =
        'Dr. Alice Johnson can be reached at alice.j@example.com or 415-555-0139. Her colleague Bob Smith lives at 12 Oak Street.';
      const body = await deep.handle({ text: t, strictMode: true }, jobContext());
      expect(AirgapScrubOutput.safeParse(body).success).toBe(true);
      expect(body.mode).toBe('deep');
      expect(body.source).toMatch(/^airgap-scrub\+local:/);
      for (const secret of ['Alice Johnson', 'Bob Smith', 'alice.j@example.com', '415-555-0139', '12 Oak Street'])
        expect(body.scrubbed).not.toContain(secret);
      expect(body.entities_redacted).toEqual(expect.arrayContaining(['NAME', 'EMAIL', 'PHONE']));
    } finally {
      await ai.close?.();
    }
  });

  it('turns a provider failure into a 502 that does not carry the provider message (which may echo the text)', async () => {
    const { logger, lines } = bufferLogger();
    const secret = 'SSN 412-58-3391 of Alice Johnson';
    const failing: AiProvider = {
      ...unused,
      adapter: 'openai',
      async findSensitiveSpans(t: string) {
        throw new Error(`upstream 400: could not process input "${t}"`);
      },
    };
    const coded: AiProvider = {
      ...unused,
      adapter: 'openai',
      async findSensitiveSpans(t: string) {
        throw new AiUpstreamTimeoutError(`timed out on "${t}"`, { input: t });
      },
    };
    const a = await rejection(
      (await createAirgapScrubProcessor(processorDeps({ ai: failing, logger }))).handle(
        { text: secret, strictMode: true },
        jobContext(),
      ),
    );
    expect(a).toMatchObject({ code: 'ai_failed', status: 502 });
    const b = await rejection(
      (await createAirgapScrubProcessor(processorDeps({ ai: coded, logger }))).handle(
        { text: secret, strictMode: true },
        jobContext(),
      ),
    );
    expect(b).toMatchObject({ code: 'ai_upstream_timeout', status: 504, details: {} });
    for (const err of [a, b])
      expect(JSON.stringify({ m: err.message, d: err.details, s: err.stack })).not.toMatch(/412-58-3391|Alice/);
    expect(lines()).toContain('AI provider failed');
    expect(lines()).not.toMatch(/412-58-3391|Alice/);
  });
});

describe('airgap-scrub: input errors and logs', () => {
  it('answers coded 400s naming the field, never quoting the text', async () => {
    const secret = '412-58-3391';
    const cases: [unknown, string, string][] = [
      [{ text: `SSN ${secret}`, strictMode: 'yes' }, 'invalid_parameter', 'strictMode'],
      [{ text: '' }, 'invalid_parameter', 'text'],
      [{ text: 42 }, 'invalid_parameter', 'text'],
      [{}, 'invalid_parameter', 'text'],
      [{ text: `SSN ${secret}`, extra: secret }, 'unknown_parameter', 'extra'],
    ];
    for (const [data, code, field] of cases) {
      const err = await rejection(standard.handle(data, jobContext()));
      expect(err, JSON.stringify(data)).toMatchObject({ code, status: 400, details: { field } });
      expect(err.message).not.toContain(secret);
    }
  });

  it('logs counts at debug level, never the text or a match', async () => {
    const { logger, lines } = bufferLogger('trace');
    const p = await createAirgapScrubProcessor(processorDeps({ logger }));
    await p.handle({ text: 'mail zed.quux@example.com or call (415) 555-2671, unique-marker-7f3a' }, jobContext());
    expect(lines()).toContain('airgap-scrub: done');
    expect(lines()).not.toMatch(/zed\.quux|555-2671|unique-marker-7f3a/);
  });
});

describe('airgap-scrub: strict mode keeps the standard labels (issue 14)', () => {
  it('labels structured PII inside a bio as itself, and the bio only around it', async () => {
    const t =
      'Patient is a retired teacher, SSN 219-45-8876, card 4111 1111 1111 1111, living at 12 Oak Street, Springfield, IL 62704, who enjoys chess.';
    const ai = fakeProvider([], [], [{ start: 0, end: t.length - 1, kind: 'BIO' }]);
    const deep = await createAirgapScrubProcessor(processorDeps({ ai }));
    const body = await deep.handle({ text: t, strictMode: true }, jobContext());
    expect(body.scrubbed).toContain('[SSN]');
    expect(body.scrubbed).toContain('[CREDIT_CARD]');
    expect(body.scrubbed).toContain('[ADDRESS]');
    expect(body.scrubbed).toContain('[ZIP]');
    expect(body.scrubbed).toContain('[BIO]');
    for (const secret of ['219-45-8876', '4111 1111 1111 1111', '12 Oak Street', '62704', 'retired teacher', 'chess'])
      expect(body.scrubbed).not.toContain(secret);
    expect(body.entities_redacted).toEqual(expect.arrayContaining(['BIO', 'SSN', 'CREDIT_CARD', 'ADDRESS', 'ZIP']));
  });
});

describe('airgap-scrub: the misses of issue 14', () => {
  const kinds = async (text: string) => (await scrub(text)).entities_redacted;

  it('cards of every length Luhn admits: 13-digit Visa, 15-digit Amex/UATP/enRoute, 14-digit Diners, 19-digit', async () => {
    for (const [number, note] of [
      ['4222222222222', 'Visa 13'],
      ['378282246310005', 'Amex 15'],
      ['135410014004955', 'UATP 15'],
      ['201400000000009', 'enRoute 15'],
      ['30569309025904', 'Diners 14'],
      ['6205500000000000004', 'UnionPay 19'],
      ['4917610000000000003', 'Visa 19'],
    ]) {
      const text = `Card on file: ${number}, exp 04/29.`;
      expect((await scrub(text)).scrubbed, note).toBe('Card on file: [CREDIT_CARD], exp 04/29.');
    }
  });

  it('4012888888881881 in all its forms', async () => {
    for (const form of ['4012888888881881', '4012 8888 8888 1881', '4012-8888-8888-1881', '4012.8888.8888.1881']) {
      for (const [before, after] of [
        ['card ', '.'],
        ['card#', ' exp'],
        ['{"pan":"', '"}'],
        ['cc=', '&cvv=123'],
        ['(', ')'],
        ['Visa\n', '\n'],
      ]) {
        const text = `${before}${form}${after}`;
        const body = await scrub(text);
        expect(body.scrubbed, text).toBe(`${before}[CREDIT_CARD]${after}`);
      }
    }
  });

  it('12-digit Maestro numbers after a card word only', async () => {
    expect((await scrub('Maestro card 501857566829 expires soon')).scrubbed).toBe(
      'Maestro card [CREDIT_CARD] expires soon',
    );
    expect(await kinds('Order 501857566829 shipped')).not.toContain('CREDIT_CARD');
  });

  it('does not take barcodes, epoch timestamps or Luhn-invalid numbers for cards', async () => {
    for (const text of [
      'EAN 4006381333931 in stock',
      'ts=1700000000000 ms',
      'Ref 4012888888881882 rejected',
      'GTIN: 4012345678901',
    ])
      expect(await kinds(text), text).not.toContain('CREDIT_CARD');
  });

  it('phone numbers outside the US format', async () => {
    for (const phone of [
      '+44 20 7946 0958',
      '020 7946 0958',
      '+33 1 42 68 53 00',
      '01 42 68 53 00',
      '+49 30 901820',
      '030 901820',
      '(02) 9876 5432',
      '+61 2 9876 5432',
      '0412 345 678',
      '+91 98765 43210',
      '+81 3-1234-5678',
      '03-1234-5678',
      '+7 495 123-45-67',
      '+55 11 96123-4567',
    ]) {
      const text = `Please call ${phone} after lunch.`;
      expect((await scrub(text)).scrubbed, phone).toBe('Please call [PHONE] after lunch.');
    }
  });

  it('military addresses, with their ZIP', async () => {
    for (const [text, expected] of [
      ['Ship to PSC 1234, Box 5678, APO AE 09123 please', 'Ship to [ADDRESS], APO AE [ZIP] please'],
      ['Mail: Unit 2536 Box 5315\nDPO AP 96521', 'Mail: [ADDRESS]\nDPO AP [ZIP]'],
      ['USNS Comfort\nFPO AA 34055', '[ADDRESS]\nFPO AA [ZIP]'],
      ['CMR 402 Box 1234, APO AE 09180', '[ADDRESS], APO AE [ZIP]'],
    ] as const)
      expect((await scrub(text)).scrubbed, text).toBe(expected);
  });

  it('comma-separated (CSV) and multi-line addresses', async () => {
    expect((await scrub('name,street,city,state,zip\nJane Doe,123 Main St,Springfield,IL,62704')).scrubbed).toBe(
      'name,street,city,state,zip\nJane Doe,[ADDRESS],Springfield,IL,[ZIP]',
    );
    expect((await scrub('Jane Doe\n742 Evergreen Terrace\nApt 4B\nSpringfield, IL 62704')).scrubbed).toBe(
      'Jane Doe\n[ADDRESS]\nSpringfield, IL [ZIP]',
    );
    expect((await scrub('Send it to PO Box 2243, 6645 N Ensign St, Portland, OR 97217.')).scrubbed).toBe(
      'Send it to [ADDRESS], Portland, OR [ZIP].',
    );
  });

  it('UK, Canadian, Australian and German addresses, street line and postcode', async () => {
    for (const [text, expected] of [
      ['10 Downing Street, London SW1A 2AA', '[ADDRESS], London [ZIP]'],
      ['Flat 3, 12 High Street\nOxford\nOX1 4AW', '[ADDRESS]\nOxford\n[ZIP]'],
      ['1730 McPherson Crt. Unit 35, Pickering, ON L1W 3E6', '[ADDRESS], Pickering, ON [ZIP]'],
      ['Unit 4, 12 Smith Street, Parramatta NSW 2150', '[ADDRESS], Parramatta NSW [ZIP]'],
      ['Hauptstraße 5, 10115 Berlin', '[ADDRESS], [ZIP] Berlin'],
      ['Otto-Hahn-Allee 12a\n28359 Bremen', '[ADDRESS]\n[ZIP] Bremen'],
    ] as const)
      expect((await scrub(text)).scrubbed, text).toBe(expected);
  });

  it('the street line goes with the ZIP, not the ZIP alone', async () => {
    for (const text of [
      'Deliver to 8 Old Farm Road, Anytown, VT 05001',
      'Billing: 500 W 2nd St #1800, Austin, TX 78701',
      'Lives at 3785 Kristen Junctions Apt. 310\nWest Brittanyville, WV 68968',
    ]) {
      const body = await scrub(text);
      expect(body.entities_redacted, text).toEqual(['ADDRESS', 'ZIP']);
    }
  });
});
