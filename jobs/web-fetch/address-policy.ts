/**
 * Which URLs and which IP addresses the outbound fetcher may reach (SSRF
 * policy). Two stages, both applied to the first URL and to every redirect:
 *
 *  1. `checkUrl`: the URL as the WHATWG URL parser sees it. The parser is the
 *     normaliser: `http://2130706433/`, `http://0177.0.0.1/`, `http://0x7f.1/`,
 *     `http://127.1/` all come out as host `127.0.0.1`, `[::ffff:127.0.0.1]`
 *     as `[::ffff:7f00:1]`; the policy then judges what the parser produced,
 *     never the raw text. Only http and https, no credentials, no port of the
 *     Fetch standard's "bad port" list, no name that is internal by design
 *     (`localhost`, `*.internal`, single-label names, cloud metadata names).
 *  2. `checkAddress`: every address the name resolved to (or the literal).
 *     The public Internet only: anything ipaddr.js classifies as other than
 *     global unicast is refused with the range as the reason; IPv6 outside
 *     2000::/3 is refused; addresses embedding an IPv4 (NAT64, 6to4) are
 *     judged by the embedded IPv4; IPv4-mapped/compatible/translated IPv6 is
 *     refused outright.
 *
 * `allowLoopback` (tests only: the config accepts FETCH_ALLOW_LOOPBACK only
 * when NODE_ENV=test) lets 127.0.0.0/8, ::1 and `localhost` through and
 * nothing else.
 */
import ipaddr from 'ipaddr.js';

export type RefusalReason =
  | 'invalid_url'
  | 'scheme_not_allowed'
  | 'credentials_in_url'
  | 'port_not_allowed'
  | 'internal_hostname'
  | 'cloud_metadata'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'carrier_grade_nat'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'unique_local'
  | 'site_local'
  | 'ipv4_mapped'
  | 'ipv4_compatible'
  | 'ipv4_translated'
  | 'nat64_embedded'
  | '6to4_embedded'
  | 'teredo'
  | 'not_global_unicast';

export interface Refusal {
  reason: RefusalReason;
  message: string;
  /** The address refused (after normalisation), when the refusal is about an address. */
  address?: string;
  /** For NAT64 / 6to4: the embedded IPv4 and why it is refused. */
  embedded?: { address: string; reason: RefusalReason };
}

export interface PolicyOptions {
  allowLoopback: boolean;
}

export interface CheckedUrl {
  url: URL;
  /** Host without brackets and without a trailing dot (a name, or an IP literal). */
  host: string;
  /** Set when the host is an IP literal: no resolution happens. */
  literal?: { address: string; family: 4 | 6 };
  port: number;
}

/**
 * Ports the Fetch standard refuses to connect to (https://fetch.spec.whatwg.org/#port-blocking):
 * SMTP, IRC, SIP, ... reached through an HTTP request are protocol-smuggling targets.
 * Written out because no maintained package exports the list.
 */
const BAD_PORTS = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Names of cloud instance-metadata services (GCP, AWS, Alibaba, ...). */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.azure.com',
]);

/** Instance-metadata addresses, refused with their own reason before the range check. */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
  '169.254.170.2', // AWS ECS task metadata
  '169.254.169.123', // AWS time sync
  '100.100.100.200', // Alibaba Cloud
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS DNS over IPv6
]);

/** Suffixes reserved for private or local use: such names never reach the public Internet. */
const INTERNAL_SUFFIXES = [
  '.internal',
  '.local',
  '.localdomain',
  '.home.arpa',
  '.lan',
  '.intranet',
  '.corp',
  '.private',
];

const IPV4_REASONS: Record<string, RefusalReason> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link_local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier_grade_nat',
  private: 'private',
  reserved: 'reserved',
  as112: 'reserved',
  amt: 'reserved',
};

const IPV6_REASONS: Record<string, RefusalReason> = {
  unspecified: 'unspecified',
  linkLocal: 'link_local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique_local',
  ipv4Mapped: 'ipv4_mapped',
  rfc6145: 'ipv4_translated',
  deprecatedSiteLocal: 'site_local',
  discard: 'reserved',
  teredo: 'teredo',
  benchmarking: 'benchmarking',
  amt: 'reserved',
  as112v6: 'reserved',
  deprecatedOrchid: 'reserved',
  orchid2: 'reserved',
  droneRemoteIdProtocolEntityTags: 'reserved',
  segmentRouting: 'reserved',
  reserved: 'reserved',
};

/** Ranges ipaddr.js files under `reserved` that deserve a more precise reason. */
const V4_DOCUMENTATION = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'].map((c) => ipaddr.IPv4.parseCIDR(c));
const V4_BENCHMARKING = ipaddr.IPv4.parseCIDR('198.18.0.0/15');
const V6_DOCUMENTATION = ['2001:db8::/32', '3fff::/20'].map((c) => ipaddr.IPv6.parseCIDR(c));
const V6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const V6_NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

const refuse = (reason: RefusalReason, message: string, extra: Partial<Refusal> = {}): Refusal => ({
  reason,
  message,
  ...extra,
});

function checkIPv4(ip: ipaddr.IPv4, options: PolicyOptions): Refusal | null {
  const address = ip.toString();
  if (METADATA_ADDRESSES.has(address))
    return refuse('cloud_metadata', `${address} is a cloud instance-metadata address`, { address });
  const range = ip.range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && options.allowLoopback) return null;
  let reason = IPV4_REASONS[range] ?? 'reserved';
  if (range === 'reserved') {
    if (V4_DOCUMENTATION.some((cidr) => ip.match(cidr))) reason = 'documentation';
    else if (ip.match(V4_BENCHMARKING)) reason = 'benchmarking';
  }
  return refuse(reason, `${address} is not a public address (${reason})`, { address });
}

function checkIPv6(ip: ipaddr.IPv6, options: PolicyOptions): Refusal | null {
  const address = ip.toString();
  if (METADATA_ADDRESSES.has(address))
    return refuse('cloud_metadata', `${address} is a cloud instance-metadata address`, { address });
  const range = ip.range();
  if (range === 'loopback')
    return options.allowLoopback ? null : refuse('loopback', `${address} is the loopback address`, { address });
  if (range === 'rfc6052' || range === '6to4') {
    // NAT64 (64:ff9b::/96 carries the IPv4 in its last 32 bits) and 6to4 (2002:AABB:CCDD::/48) reach an IPv4 host:
    // judge that host. The local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) is site-specific: refused.
    const parts = ip.parts;
    const embeddedParts = range === '6to4' ? [parts[1]!, parts[2]!] : [parts[6]!, parts[7]!];
    if (range === 'rfc6052' && !ip.match(V6_NAT64_WELL_KNOWN))
      return refuse('reserved', `${address} is in the local-use NAT64 prefix`, { address });
    const embedded = new ipaddr.IPv4([
      embeddedParts[0]! >> 8,
      embeddedParts[0]! & 0xff,
      embeddedParts[1]! >> 8,
      embeddedParts[1]! & 0xff,
    ]);
    const inner = checkIPv4(embedded, { allowLoopback: false });
    if (!inner) return null;
    const reason: RefusalReason = range === '6to4' ? '6to4_embedded' : 'nat64_embedded';
    return refuse(reason, `${address} embeds ${embedded.toString()}, which is not public (${inner.reason})`, {
      address,
      embedded: { address: embedded.toString(), reason: inner.reason },
    });
  }
  if (range !== 'unicast') {
    let reason = IPV6_REASONS[range] ?? 'reserved';
    if (range === 'reserved' && V6_DOCUMENTATION.some((cidr) => ip.match(cidr))) reason = 'documentation';
    return refuse(reason, `${address} is not a public address (${reason})`, { address });
  }
  // ipaddr.js calls everything it does not list "unicast". Deprecated IPv4-compatible addresses (::a.b.c.d)
  // and anything outside the global unicast block 2000::/3 are not the public Internet.
  if (ip.parts.slice(0, 6).every((p) => p === 0))
    return refuse('ipv4_compatible', `${address} is an IPv4-compatible IPv6 address`, { address });
  if (!ip.match(V6_GLOBAL_UNICAST))
    return refuse('not_global_unicast', `${address} is outside the IPv6 global unicast block 2000::/3`, { address });
  return null;
}

/** Judges one IP address (canonical text, as a resolver or the URL parser gives it). */
export function checkAddress(address: string, options: PolicyOptions): Refusal | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // Only canonical forms: dotted-quad IPv4 or an IPv6 literal. ipaddr.parse would also accept
    // "0x7f.1" and friends; those never reach here (the URL parser or the resolver normalised them).
    if (ipaddr.IPv4.isValidFourPartDecimal(address)) ip = ipaddr.IPv4.parse(address);
    else if (ipaddr.IPv6.isValid(address)) ip = ipaddr.IPv6.parse(address);
    else return refuse('invalid_url', `${address} is not an IP address`, { address });
  } catch {
    return refuse('invalid_url', `${address} is not an IP address`, { address });
  }
  return ip.kind() === 'ipv4' ? checkIPv4(ip as ipaddr.IPv4, options) : checkIPv6(ip as ipaddr.IPv6, options);
}

function checkHostname(name: string, options: PolicyOptions): Refusal | null {
  if (METADATA_NAMES.has(name)) return refuse('cloud_metadata', `${name} is a cloud instance-metadata name`);
  if (name === 'localhost' || name.endsWith('.localhost')) {
    return options.allowLoopback && name === 'localhost'
      ? null
      : refuse('loopback', `${name} names the loopback interface`);
  }
  if (!name.includes('.'))
    return refuse('internal_hostname', `${name} is a single-label name, resolved through local search domains`);
  const suffix = INTERNAL_SUFFIXES.find((s) => name.endsWith(s));
  if (suffix) return refuse('internal_hostname', `${name} is under ${suffix}, reserved for private networks`);
  return null;
}

export type UrlCheck = { ok: true; checked: CheckedUrl } | { ok: false; refusal: Refusal };

/** Parses `input` (optionally against `base`, for a redirect's Location) and applies the URL-level rules. */
export function checkUrl(input: string, options: PolicyOptions, base?: URL): UrlCheck {
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    return { ok: false, refusal: refuse('invalid_url', 'not a valid absolute URL') };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      ok: false,
      refusal: refuse(
        'scheme_not_allowed',
        `scheme ${url.protocol.replace(/:$/, '')} is not allowed; only http and https`,
      ),
    };
  }
  if (url.username || url.password)
    return {
      ok: false,
      refusal: refuse('credentials_in_url', 'URLs with credentials (user:password@) are not fetched'),
    };
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (BAD_PORTS.has(port))
    return { ok: false, refusal: refuse('port_not_allowed', `port ${port} is not allowed for HTTP fetches`) };

  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) {
    const address = host.slice(1, -1);
    const refusal = checkAddress(address, options);
    if (refusal) return { ok: false, refusal };
    return {
      ok: true,
      checked: { url, host: address, literal: { address: ipaddr.IPv6.parse(address).toString(), family: 6 }, port },
    };
  }
  host = host.replace(/\.$/, '');
  if (!host) return { ok: false, refusal: refuse('invalid_url', 'the URL has no host') };
  // The WHATWG parser turns every IPv4 spelling (decimal, octal, hex, short) into a dotted quad.
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) {
    const refusal = checkAddress(host, options);
    if (refusal) return { ok: false, refusal };
    return { ok: true, checked: { url, host, literal: { address: host, family: 4 }, port } };
  }
  const refusal = checkHostname(host, options);
  if (refusal) return { ok: false, refusal };
  return { ok: true, checked: { url, host, port } };
}

/**
 * The URL rules that need neither DNS nor configuration, for refusing a URL
 * input synchronously, before any work or payment (the API's input schemas;
 * this module imports nothing but ipaddr.js): `checkUrl` without loopback, so
 * the scheme, credentials, bad ports, internal and metadata names and every
 * non-public IP literal, in any spelling the URL parser normalises
 * (`http://2130706433/`, `http://0x7f.1/`, `http://[::1]/`,
 * `http://[::ffff:10.0.0.1]/`), are refused here as the worker would refuse
 * them.
 *
 * One exception: whether loopback may be reached depends on the configuration
 * (FETCH_ALLOW_LOOPBACK, tests only), which a schema does not see. A loopback
 * IPv4 written as a plain dotted quad (`http://127.0.0.1:8080/`, the form the
 * tests' loopback servers use) passes, and the worker's fetcher judges it with
 * the config (in production it refuses it, before any connection and without
 * settlement). Other loopback spellings (decimal, octal, hex, short forms,
 * `[::1]`, `localhost`) serve no test and are refused here. Names still need
 * the worker's resolution and address check. Null when the URL may go on.
 */
export function staticUrlRefusal(input: string): Refusal | null {
  const check = checkUrl(input, { allowLoopback: false });
  if (check.ok) return null;
  const { refusal } = check;
  if (
    refusal.reason === 'loopback' &&
    refusal.address &&
    ipaddr.IPv4.isValidFourPartDecimal(refusal.address) &&
    writtenAsDottedQuad(input, refusal.address)
  ) {
    return null;
  }
  return refusal;
}

/** True when `input` spells its host exactly as `address` (no other IPv4 notation the parser would normalise). */
function writtenAsDottedQuad(input: string, address: string): boolean {
  const text = input.trim().toLowerCase();
  const scheme = /^https?:/.exec(text)?.[0];
  if (!scheme) return false;
  const prefix = `${scheme}//${address}`;
  return text.startsWith(prefix) && /^(?:[:/?#]|$)/.test(text.slice(prefix.length));
}
