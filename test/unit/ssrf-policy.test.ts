/**
 * The SSRF attack corpus, run through the real fetcher (createSafeFetch) with
 * the loopback allowance OFF unless a case says otherwise. Three stages:
 *  - URL vectors: odd IPv4 spellings, IPv6 forms embedding IPv4, every
 *    non-public range, metadata addresses and names, schemes, credentials,
 *    ports, internal names. Refused before any resolution or connection.
 *  - DNS vectors: public-looking names that a real DNS server on loopback
 *    (the resolver the fetcher is configured with) answers with non-public
 *    addresses. Refused after the one resolution, before any connection.
 *  - Redirect vectors: a real page on loopback (allowance ON for that first
 *    hop only) redirecting to a forbidden target. Refused at hop 1.
 * Each case asserts the exact reason; the fixture site and a connection spy
 * prove nothing was contacted for the first two stages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import type { JobError } from '../../core/queue/queue.js';
import { checkAddress } from '../../jobs/web-fetch/address-policy.js';
import { dnsServerResolver } from '../../jobs/web-fetch/resolver.js';
import { createSafeFetch, type FetchRequest } from '../../jobs/web-fetch/safe-fetch.js';
import { startFixtureDns, type FixtureDns } from '../helpers/web-fixtures-dns.js';
import { loopbackOnlyNetwork, startWebFixtures, type WebFixtures } from '../helpers/web-fixtures.js';
import { jobErrorOf } from '../helpers/job-error.js';

let site: WebFixtures;
let dns: FixtureDns;
const connectAttempts: string[] = [];

const ZONE: Record<string, { A?: string[]; AAAA?: string[] }> = {
  'localtest.me': { A: ['127.0.0.1'] },
  '127.0.0.1.nip.io': { A: ['127.0.0.1'] },
  'internal-api.example.com': { A: ['10.0.0.5'] },
  'metadata.attacker.example': { A: ['169.254.169.254'] },
  'mixed.attacker.example': { A: ['93.184.215.14', '192.168.0.10'] },
  'v6-ula.attacker.example': { AAAA: ['fd00:1234::5'] },
  'v6-mapped.attacker.example': { AAAA: ['::ffff:127.0.0.1'] },
  'cgnat.attacker.example': { A: ['100.64.12.1'] },
  'zero.attacker.example': { A: ['0.0.0.0'] },
  'nat64.attacker.example': { AAAA: ['64:ff9b::a9fe:a9fe'] },
  'private-redirect.attacker.example': { A: ['172.20.0.9'] },
};

function request(url: string, extra: Partial<FetchRequest> = {}): FetchRequest {
  return {
    url,
    field: 'url',
    timeoutMs: 3000,
    maxBytes: 1024 * 1024,
    userAgent: 'ssrf-test',
    accept: '*/*',
    acceptMediaType: () => true,
    acceptedDescription: 'anything',
    ...extra,
  };
}

/**
 * `spy`: the network refuses everything (URL and DNS stages: any connection is a failure of the policy);
 * otherwise loopback-only (redirect stage). Either way no test can reach beyond this machine.
 */
function fetcher(allowLoopback: boolean, spy = true) {
  return createSafeFetch({
    allowLoopback,
    maxRedirects: 5,
    resolver: dnsServerResolver([dns.server]),
    connect: spy
      ? (target) => {
          connectAttempts.push(`${target.address}:${target.port}`);
          throw new Error(`connection attempted to ${target.address}`);
        }
      : loopbackOnlyNetwork(),
  });
}

async function refusal(promise: Promise<unknown>): Promise<JobError> {
  return jobErrorOf(promise, 'the fetch must be refused');
}

beforeAll(async () => {
  site = await startWebFixtures();
  dns = await startFixtureDns((name, type) => {
    const entry = ZONE[name];
    return entry ? (entry[type] ?? []) : null;
  });
});

afterAll(async () => {
  await site?.close();
  await dns?.close();
});

describe('URL vectors (refused before resolution and connection)', () => {
  const P = () => site.port;
  // [label, url, reason, address the policy names (when it is about an address)]
  const cases: [string, () => string, string, string?][] = [
    ['loopback literal (the fixture site)', () => `http://127.0.0.1:${P()}/article`, 'loopback', '127.0.0.1'],
    ['localhost name', () => `http://localhost:${P()}/article`, 'loopback'],
    ['subdomain of localhost', () => `http://api.localhost:${P()}/`, 'loopback'],
    ['decimal IPv4 2130706433', () => `http://2130706433:${P()}/`, 'loopback', '127.0.0.1'],
    ['octal IPv4 0177.0.0.1', () => `http://0177.0.0.1:${P()}/`, 'loopback', '127.0.0.1'],
    ['hex short IPv4 0x7f.1', () => `http://0x7f.1:${P()}/`, 'loopback', '127.0.0.1'],
    ['hex IPv4 0x7f000001', () => `http://0x7f000001:${P()}/`, 'loopback', '127.0.0.1'],
    ['whole octal 017700000001', () => `http://017700000001:${P()}/`, 'loopback', '127.0.0.1'],
    ['short form 127.1', () => `http://127.1:${P()}/`, 'loopback', '127.0.0.1'],
    ['mixed encoding 0x7f.0.0.01', () => `http://0x7f.0.0.01:${P()}/`, 'loopback', '127.0.0.1'],
    ['trailing dot 127.0.0.1.', () => `http://127.0.0.1.:${P()}/`, 'loopback', '127.0.0.1'],
    ['percent-encoded host %31%32%37.0.0.1', () => `http://%31%32%37.0.0.1:${P()}/`, 'loopback', '127.0.0.1'],
    [
      'full-width digits (IDNA-mapped)',
      () => `http://\uff11\uff12\uff17.\uff10.\uff10.\uff11:${P()}/`,
      'loopback',
      '127.0.0.1',
    ],
    ['ideographic full stops 127。0。0。1', () => `http://127\u30020\u30020\u30021:${P()}/`, 'loopback', '127.0.0.1'],
    ['IPv6 loopback [::1]', () => `http://[::1]:${P()}/`, 'loopback', '::1'],
    ['IPv4-mapped [::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${P()}/`, 'ipv4_mapped'],
    ['IPv4-mapped in hex [::ffff:7f00:1]', () => `http://[::ffff:7f00:1]:${P()}/`, 'ipv4_mapped'],
    ['IPv4-mapped long form [0:0:0:0:0:ffff:127.0.0.1]', () => 'http://[0:0:0:0:0:ffff:127.0.0.1]/', 'ipv4_mapped'],
    ['IPv4-mapped metadata [::ffff:a9fe:a9fe]', () => 'http://[::ffff:a9fe:a9fe]/latest/meta-data/', 'ipv4_mapped'],
    ['IPv4-compatible [::127.0.0.1]', () => 'http://[::127.0.0.1]/', 'ipv4_compatible'],
    ['IPv4-translated [::ffff:0:7f00:1]', () => 'http://[::ffff:0:7f00:1]/', 'ipv4_translated'],
    ['NAT64 embedding 10.0.0.1', () => 'http://[64:ff9b::10.0.0.1]/', 'nat64_embedded'],
    ['6to4 embedding 127.0.0.1', () => 'http://[2002:7f00:1::1]/', '6to4_embedded'],
    ['Teredo', () => 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'teredo'],
    [
      'AWS metadata 169.254.169.254',
      () => 'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'cloud_metadata',
      '169.254.169.254',
    ],
    [
      'AWS metadata as decimal 2852039166',
      () => 'http://2852039166/latest/meta-data/',
      'cloud_metadata',
      '169.254.169.254',
    ],
    [
      'AWS IMDS over IPv6 [fd00:ec2::254]',
      () => 'http://[fd00:ec2::254]/latest/meta-data/',
      'cloud_metadata',
      'fd00:ec2::254',
    ],
    ['GCP metadata name', () => 'http://metadata.google.internal/computeMetadata/v1/', 'cloud_metadata'],
    [
      'GCP metadata name, trailing dot and capitals',
      () => 'http://Metadata.Google.Internal./computeMetadata/v1/',
      'cloud_metadata',
    ],
    [
      'Alibaba metadata 100.100.100.200',
      () => 'http://100.100.100.200/latest/meta-data/',
      'cloud_metadata',
      '100.100.100.200',
    ],
    ['link-local 169.254.1.1', () => 'http://169.254.1.1/', 'link_local', '169.254.1.1'],
    ['RFC1918 10/8', () => 'http://10.0.0.1/', 'private', '10.0.0.1'],
    ['RFC1918 172.16/12', () => 'http://172.31.255.254/', 'private', '172.31.255.254'],
    ['RFC1918 192.168/16', () => 'http://192.168.1.1/admin', 'private', '192.168.1.1'],
    ['RFC1918 as hex 0xc0a80101', () => 'http://0xc0a80101/', 'private', '192.168.1.1'],
    ['CGNAT 100.64/10', () => 'http://100.64.0.1/', 'carrier_grade_nat', '100.64.0.1'],
    ['unspecified 0.0.0.0', () => `http://0.0.0.0:${P()}/`, 'unspecified', '0.0.0.0'],
    ['unspecified as 0', () => `http://0:${P()}/`, 'unspecified', '0.0.0.0'],
    ['IPv6 unspecified [::]', () => `http://[::]:${P()}/`, 'unspecified', '::'],
    ['multicast 224.0.0.1', () => 'http://224.0.0.1/', 'multicast', '224.0.0.1'],
    ['IPv6 multicast [ff02::1]', () => 'http://[ff02::1]/', 'multicast', 'ff02::1'],
    ['broadcast 255.255.255.255', () => 'http://255.255.255.255/', 'broadcast', '255.255.255.255'],
    ['reserved 240/4', () => 'http://240.0.0.1/', 'reserved', '240.0.0.1'],
    ['documentation 192.0.2/24', () => 'http://192.0.2.10/', 'documentation', '192.0.2.10'],
    ['documentation 203.0.113/24', () => 'http://203.0.113.7/', 'documentation', '203.0.113.7'],
    ['IPv6 documentation 2001:db8::/32', () => 'http://[2001:db8::1]/', 'documentation', '2001:db8::1'],
    ['benchmarking 198.18/15', () => 'http://198.18.0.1/', 'benchmarking', '198.18.0.1'],
    ['IPv6 link-local [fe80::1]', () => 'http://[fe80::1]/', 'link_local', 'fe80::1'],
    ['IPv6 unique-local [fc00::1]', () => 'http://[fc00::1]/', 'unique_local', 'fc00::1'],
    ['IPv6 unique-local [fd12:3456:789a::1]', () => 'http://[fd12:3456:789a::1]/', 'unique_local', 'fd12:3456:789a::1'],
    ['IPv6 site-local (deprecated) [fec0::1]', () => 'http://[fec0::1]/', 'site_local', 'fec0::1'],
    ['IPv6 outside 2000::/3', () => 'http://[4000::1]/', 'not_global_unicast', '4000::1'],
    ['file scheme', () => 'file:///etc/passwd', 'scheme_not_allowed'],
    ['gopher to redis', () => 'gopher://127.0.0.1:6379/_INFO', 'scheme_not_allowed'],
    ['ftp scheme', () => 'ftp://ftp.example.com/pub/', 'scheme_not_allowed'],
    ['data URL', () => 'data:text/html,<h1>hi</h1>', 'scheme_not_allowed'],
    ['credentials in URL', () => 'http://admin:secret@example.com/', 'credentials_in_url'],
    ['user only, @-confusion', () => 'http://example.com@127.0.0.1/', 'credentials_in_url'],
    ['SMTP port', () => 'http://example.com:25/', 'port_not_allowed'],
    ['single-label name', () => 'http://intranet/', 'internal_hostname'],
    ['mDNS name', () => 'http://printer.local/', 'internal_hostname'],
    ['.internal name', () => 'http://vault.service.internal/', 'internal_hostname'],
    ['not a URL', () => 'http://[::1/', 'invalid_url'],
  ];

  it('has at least 30 vectors', () => expect(cases.length).toBeGreaterThanOrEqual(30));

  it.each(cases)('%s is refused', async (_label, url, reason, address) => {
    const before = {
      requests: site.requests.length,
      connections: site.connections(),
      dns: dns.queries.length,
      spy: connectAttempts.length,
    };
    const err = await refusal(fetcher(false)(request(url())));
    expect(err.code).toBe('url_not_allowed');
    expect(err.status).toBe(400);
    expect(err.details).toMatchObject({ field: 'url', reason, hop: 0 });
    if (address) expect(err.details.address).toBe(address);
    expect(site.requests.length).toBe(before.requests);
    expect(site.connections()).toBe(before.connections);
    expect(dns.queries.length, 'no resolution for a URL refused on its face').toBe(before.dns);
    expect(connectAttempts.length).toBe(before.spy);
  });

  it('the field name given by the caller is the one reported (imageUrl)', async () => {
    const err = await refusal(fetcher(false)(request('http://10.1.2.3/x.png', { field: 'imageUrl' })));
    expect(err.details).toMatchObject({ field: 'imageUrl', reason: 'private' });
  });
});

describe('DNS vectors (refused after the one resolution, before connecting)', () => {
  const cases: [string, string, string, string][] = [
    ['localtest.me resolves to 127.0.0.1', 'localtest.me', 'loopback', '127.0.0.1'],
    ['nip.io style name embedding 127.0.0.1', '127.0.0.1.nip.io', 'loopback', '127.0.0.1'],
    ['public-looking name on 10/8', 'internal-api.example.com', 'private', '10.0.0.5'],
    ['name pointing at the metadata service', 'metadata.attacker.example', 'cloud_metadata', '169.254.169.254'],
    ['one public and one private address', 'mixed.attacker.example', 'private', '192.168.0.10'],
    ['AAAA in fc00::/7', 'v6-ula.attacker.example', 'unique_local', 'fd00:1234::5'],
    ['AAAA IPv4-mapped loopback', 'v6-mapped.attacker.example', 'ipv4_mapped', '::ffff:7f00:1'],
    ['CGNAT answer', 'cgnat.attacker.example', 'carrier_grade_nat', '100.64.12.1'],
    ['0.0.0.0 answer', 'zero.attacker.example', 'unspecified', '0.0.0.0'],
    ['NAT64 AAAA embedding the metadata address', 'nat64.attacker.example', 'nat64_embedded', '64:ff9b::a9fe:a9fe'],
  ];

  it.each(cases)('%s', async (_label, host, reason, address) => {
    const before = { requests: site.requests.length, connections: site.connections(), spy: connectAttempts.length };
    const err = await refusal(fetcher(false)(request(`http://${host}:${site.port}/article`)));
    expect(err.code).toBe('url_not_allowed');
    expect(err.details).toMatchObject({ field: 'url', reason, hop: 0, address });
    expect(dns.count(host, 'A'), 'resolved exactly once').toBe(1);
    expect(site.requests.length).toBe(before.requests);
    expect(site.connections()).toBe(before.connections);
    expect(connectAttempts.length).toBe(before.spy);
  });

  it('an unknown name is an upstream DNS failure (502), not a refusal', async () => {
    const err = await refusal(fetcher(false)(request('http://no-such-host.attacker.example/')));
    expect(err.status).toBe(502);
    expect(err.code).toBe('upstream_error');
    expect(err.details.reason).toBe('dns_not_found');
  });
});

describe('redirect vectors (every hop is checked)', () => {
  const cases: [string, () => string, string][] = [
    ['to RFC1918', () => 'http://10.0.0.1/admin', 'private'],
    ['to the metadata service', () => 'http://169.254.169.254/latest/meta-data/', 'cloud_metadata'],
    ['to the metadata service as decimal', () => 'http://2852039166/latest/meta-data/', 'cloud_metadata'],
    ['to an IPv4-mapped address', () => 'http://[::ffff:10.0.0.1]/', 'ipv4_mapped'],
    ['to a file URL', () => 'file:///etc/passwd', 'scheme_not_allowed'],
    ['to gopher', () => 'gopher://127.0.0.1:6379/_FLUSHALL', 'scheme_not_allowed'],
    ['to a name resolving to 172.16/12', () => 'http://private-redirect.attacker.example/', 'private'],
    ['to credentials', () => 'http://root:toor@example.com/', 'credentials_in_url'],
  ];

  it.each(cases)('a 302 %s is refused at hop 1', async (_label, target, reason) => {
    const before = site.requests.length;
    const err = await refusal(fetcher(true, false)(request(site.url(`/redirect?to=${encodeURIComponent(target())}`))));
    expect(err.code).toBe('url_not_allowed');
    expect(err.details).toMatchObject({ field: 'url', reason, hop: 1 });
    expect(site.requests.length, 'only the first hop reached the site').toBe(before + 1);
  });

  it('a redirect to a loopback address is refused when the allowance is off, on the first hop already', async () => {
    const err = await refusal(fetcher(false)(request(site.url('/redirect?to=/article'))));
    expect(err.details).toMatchObject({ reason: 'loopback', hop: 0 });
  });

  it('with the allowance on, loopback is the only thing allowed: mapped loopback, 0.0.0.0 and private stay refused', async () => {
    const f = fetcher(true, false);
    await expect(f(request(site.url('/article')))).resolves.toMatchObject({ status: 200 });
    for (const [url, reason] of [
      [`http://[::ffff:127.0.0.1]:${site.port}/`, 'ipv4_mapped'],
      [`http://0.0.0.0:${site.port}/`, 'unspecified'],
      ['http://192.168.0.1/', 'private'],
      ['http://169.254.169.254/', 'cloud_metadata'],
    ] as const) {
      const err = await refusal(f(request(url)));
      expect(err.details.reason, url).toBe(reason);
    }
  });
});

describe('address classification', () => {
  it('public unicast addresses pass, IPv4 and IPv6, and NAT64 of a public IPv4', () => {
    for (const address of [
      '93.184.215.14',
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '2a00:1450:4001:82a::200e',
      '64:ff9b::808:808',
    ]) {
      expect(checkAddress(address, { allowLoopback: false }), address).toBeNull();
    }
  });
});

describe('the loopback allowance exists only in test configuration', () => {
  it('is refused with a clear message outside NODE_ENV=test', () => {
    for (const env of ['development', 'production']) {
      expect(() => loadConfig({ NODE_ENV: env, FETCH_ALLOW_LOOPBACK: 'true' })).toThrow(
        /FETCH_ALLOW_LOOPBACK=true: allowed only when NODE_ENV=test/,
      );
    }
  });

  it('is accepted under NODE_ENV=test and off by default', () => {
    expect(loadConfig({ NODE_ENV: 'test', FETCH_ALLOW_LOOPBACK: 'true' }).FETCH_ALLOW_LOOPBACK).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).FETCH_ALLOW_LOOPBACK).toBe(false);
  });
});
