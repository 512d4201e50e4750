/**
 * domain-check's pure rules: the shipped IANA bootstrap snapshot (format and
 * coverage), bootstrap parsing and longest-match lookup, domain-name
 * normalisation (punycode, LDH, registrable domain), RDAP status mapping,
 * date normalisation and Retry-After parsing.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BootstrapRegistry, DEFAULT_BOOTSTRAP_FILE, parseBootstrap } from '../../jobs/domain-check/bootstrap.js';
import { normaliseDomain } from '../../jobs/domain-check/domain-name.js';
import { isoUtc, mapDomainObject, mapStatus, retryAfterSeconds, vcardFn } from '../../jobs/domain-check/rdap.js';
import { JobError } from '../../core/queue/queue.js';
import { testLogger } from '../helpers/config.js';

describe('the shipped bootstrap snapshot', () => {
  const raw = JSON.parse(readFileSync(DEFAULT_BOOTSTRAP_FILE, 'utf8')) as Record<string, unknown>;

  it('has exactly the members of IANA dns.json, services as [[labels], [base URLs]]', () => {
    expect(Object.keys(raw).sort()).toEqual(['description', 'publication', 'services', 'version']);
    expect(raw.version).toBe('1.0');
    expect(Number.isNaN(Date.parse(String(raw.publication)))).toBe(false);
    for (const service of raw.services as unknown[]) {
      expect(Array.isArray(service) && service.length === 2).toBe(true);
      const [labels, urls] = service as [string[], string[]];
      expect(labels.length).toBeGreaterThan(0);
      for (const l of labels) expect(l).toMatch(/^[a-z0-9-]+$/);
      for (const u of urls) expect(u).toMatch(/^https:\/\/[^/]+\/(.+\/)?$/);
    }
  });

  it('covers com, net, org and a set of other gTLDs and ccTLDs with their registries', () => {
    const reg = new BootstrapRegistry({
      file: DEFAULT_BOOTSTRAP_FILE,
      url: 'https://data.iana.org/rdap/dns.json',
      refreshMs: 0,
      allowHttp: false,
      logger: testLogger(),
    });
    expect(reg.lookup('example.com')).toEqual(['https://rdap.verisign.com/com/v1/']);
    expect(reg.lookup('example.net')).toEqual(['https://rdap.verisign.com/net/v1/']);
    expect(reg.lookup('example.org')).toEqual(['https://rdap.publicinterestregistry.org/rdap/']);
    for (const tld of [
      'info',
      'io',
      'app',
      'dev',
      'xyz',
      'shop',
      'uk',
      'fr',
      'nl',
      'br',
      'ca',
      'au',
      'ch',
      'cz',
      'pl',
    ]) {
      expect(reg.lookup(`example.${tld}`), tld).toHaveLength(1);
    }
    expect(reg.info().labels).toBeGreaterThanOrEqual(60);
    expect(reg.lookup('example.zz')).toEqual([]);
  });
});

describe('bootstrap parsing and lookup', () => {
  it('picks the longest matching label suffix, https first, http only when allowed', () => {
    const parsed = parseBootstrap({
      version: '1.0',
      publication: '2026-01-01T00:00:00Z',
      services: [
        [['uk'], ['http://rdap.example/uk', 'https://rdap.example/uk/']],
        [['CO.UK'], ['https://rdap.example/co-uk/']],
      ],
    });
    expect(parsed.services.get('co.uk')).toEqual(['https://rdap.example/co-uk/']);
    expect(parsed.services.get('uk')).toEqual(['http://rdap.example/uk/', 'https://rdap.example/uk/']);
  });

  it('refuses documents without services or of another major version', () => {
    expect(() => parseBootstrap({ version: '1.0', publication: '2026-01-01T00:00:00Z', services: [] })).toThrow(
      /no service/,
    );
    expect(() =>
      parseBootstrap({ version: '2.0', publication: '2026-01-01T00:00:00Z', services: [[['com'], ['https://x/']]] }),
    ).toThrow(/version/);
    expect(() =>
      parseBootstrap({ version: '1.0', publication: 'yesterday', services: [[['com'], ['https://x/']]] }),
    ).toThrow();
  });
});

describe('domain names', () => {
  const invalid = (name: string) => {
    try {
      normaliseDomain(name);
    } catch (err) {
      expect(err).toBeInstanceOf(JobError);
      expect(err).toMatchObject({ code: 'invalid_domain', status: 400, details: { field: 'domain' } });
      return true;
    }
    return false;
  };

  it('normalises case, a trailing dot, IDNs (punycode) and IDNA dot separators', () => {
    expect(normaliseDomain('Example.COM.')).toEqual({ ascii: 'example.com', input: 'example.com' });
    expect(normaliseDomain('bücher.de')).toEqual({
      ascii: 'xn--bcher-kva.de',
      input: 'xn--bcher-kva.de',
      unicode: 'bücher.de',
    });
    expect(normaliseDomain('пример.рф').ascii).toBe('xn--e1afmkfd.xn--p1ai');
    expect(normaliseDomain('例え。テスト').ascii).toBe('xn--r8jz45g.xn--zckzah');
    expect(normaliseDomain('xn--bcher-kva.de').unicode).toBe('bücher.de');
  });

  it('reduces a host name to its registrable domain (ICANN suffixes only)', () => {
    expect(normaliseDomain('www.example.co.uk')).toMatchObject({ ascii: 'example.co.uk', input: 'www.example.co.uk' });
    expect(normaliseDomain('a.b.c.example.com').ascii).toBe('example.com');
    expect(normaliseDomain('user.github.io').ascii).toBe('github.io');
  });

  it('refuses what is not a registrable domain name', () => {
    for (const bad of [
      '',
      ' ',
      'com',
      'co.uk',
      'a..com',
      '-a.com',
      'a-.com',
      'a_b.com',
      `${'a'.repeat(64)}.com`,
      '10.0.0.1',
      'http://x.com',
      'x.com/path',
      'x.com:443',
      'user@x.com',
      'xn--zz.com',
    ]) {
      expect(invalid(bad), JSON.stringify(bad)).toBe(true);
    }
    expect(invalid(`${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.com`)).toBe(false); // 247 characters
    expect(invalid(`${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.eeeeee.com`)).toBe(true); // 254
  });
});

describe('RDAP mapping', () => {
  it('maps RDAP status lists to the response status', () => {
    expect(mapStatus(['active'])).toBe('REGISTERED');
    expect(mapStatus(['client hold', 'server hold', 'inactive'])).toBe('REGISTERED');
    expect(mapStatus(['pending transfer'])).toBe('REGISTERED');
    expect(mapStatus(['Redemption Period'])).toBe('REDEMPTION_PERIOD');
    expect(mapStatus(['redemption period', 'pending delete'])).toBe('PENDING_DELETE');
  });

  it('normalises event dates to UTC ISO 8601, null when unreadable', () => {
    expect(isoUtc('2026-04-01T08:00:00+02:00')).toBe('2026-04-01T06:00:00Z');
    expect(isoUtc('2025-03-04T19:05:22.398Z')).toBe('2025-03-04T19:05:22.398Z');
    expect(isoUtc('not a date')).toBeNull();
    expect(isoUtc(42)).toBeNull();
  });

  it('finds the registrar entity, nested or not, and falls back to its handle without a vCard name', () => {
    expect(
      vcardFn({
        vcardArray: [
          'vcard',
          [
            ['version', {}, 'text', '4.0'],
            ['fn', {}, 'text', ' Acme Registrar '],
          ],
        ],
      }),
    ).toBe('Acme Registrar');
    const nested = mapDomainObject({
      objectClassName: 'domain',
      entities: [{ roles: ['registrant'], entities: [{ roles: ['Registrar'], handle: '9999' }] }],
      nameservers: [{ unicodeName: 'NS.Bücher.de' }, { ldhName: 'ns.example.' }, { ldhName: 'NS.EXAMPLE' }],
      events: [],
    });
    expect(nested.registrar).toBe('9999');
    expect(nested.nameservers).toEqual(['ns.bücher.de', 'ns.example']);
    expect(nested).toMatchObject({
      registeredDate: null,
      expirationDate: null,
      lastUpdated: null,
      handle: null,
      status: 'REGISTERED',
    });
  });

  it('reads Retry-After as seconds or an HTTP date, with a default', () => {
    expect(retryAfterSeconds('120')).toBe(120);
    expect(retryAfterSeconds(new Date(Date.UTC(2026, 0, 1, 0, 1, 30)).toUTCString(), Date.UTC(2026, 0, 1))).toBe(90);
    expect(retryAfterSeconds(null)).toBe(60);
    expect(retryAfterSeconds('soon')).toBe(60);
  });
});
