/**
 * domain-check through the SSRF-safe fetcher: an RDAP registry (loopback
 * server, RFC 9083 answers) whose redirects point at cloud-metadata, private
 * or IPv4-mapped literals, at credentials, at internal names, or at names a
 * real DNS server (test/helpers/web-fixtures-dns.ts, FETCH_DNS_SERVERS)
 * resolves to 10.0.0.0/8. Every such hop is refused with 502
 * `upstream_url_not_allowed` (reason, hop, address) before any connection; a
 * bootstrap-listed base URL on a private address (hop 0) too. Controls: a
 * redirect to a name resolving to the loopback registrar (loopback admitted
 * by the test-only allowance) is followed, with one resolution and the
 * request landing on the registrar; a name answering one loopback and one
 * private address is refused and the registrar it partly points at receives
 * nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPairs } from '../../core/markets/pairs.js';
import type { JobError } from '../../core/queue/queue.js';
import { type JobContext } from '../../core/queue/queue.js';
import { createDomainCheckProcessor, type DomainCheckResult } from '../../jobs/domain-check/processor.js';
import type { SkuProcessor } from '../../jobs/sku-processor.js';
import type { DomainCheckRequest } from '../../jobs/domain-check/sku.js';
import { testConfig, testLogger } from '../helpers/config.js';
import { rdapFixture, RdapServer, writeBootstrapFile } from '../helpers/rdap-server.js';
import { startFixtureDns, type FixtureDns } from '../helpers/web-fixtures-dns.js';
import { jobErrorOf } from '../helpers/job-error.js';

const pairs = loadPairs();
let registry: RdapServer;
let registrar: RdapServer;
let dns: FixtureDns;
let dir: string;
let processor: SkuProcessor<DomainCheckRequest, DomainCheckResult>;

const ctx = (): JobContext => ({
  jobId: 'test',
  attempt: 1,
  deadline: Date.now() + 60_000,
  signal: new AbortController().signal,
});
const port = (server: RdapServer) => new URL(server.url).port;

async function failure(domain: string, p = processor): Promise<JobError> {
  return jobErrorOf(p.handle({ domain }, ctx()));
}

const config = (bootstrapFile: string) =>
  testConfig({
    RDAP_BOOTSTRAP_FILE: bootstrapFile,
    RDAP_BOOTSTRAP_REFRESH_MS: '0',
    RDAP_ALLOW_HTTP: 'true',
    // Long, so that a connection attempt waited for would stand out from a refusal on any machine.
    RDAP_TIMEOUT_MS: '30000',
    FETCH_DNS_SERVERS: dns.server,
  });

beforeAll(async () => {
  registry = await RdapServer.start();
  registrar = await RdapServer.start();
  dns = await startFixtureDns((name, type, previous) => {
    if (type === 'AAAA') return [];
    if (name === 'rdap.registrar-example.net') return ['127.0.0.1'];
    if (name === 'rdap.private-registrar.net') return ['10.0.0.5'];
    if (name === 'rdap.split-registrar.net') return ['127.0.0.1', '10.20.30.40'];
    // Rebinding: loopback (admitted in tests) first, a private address on any later query.
    if (name === 'rdap.rebind-registrar.net') return previous === 0 ? ['127.0.0.1'] : ['10.0.0.9'];
    return null;
  });
  dir = await mkdtemp(join(tmpdir(), 'domain-check-ssrf-'));
  const file = writeBootstrapFile(dir, [[['net'], [`${registry.url}/net/v1/`]]], '2026-01-01T00:00:00Z');

  const redirect = (name: string, location: string) =>
    registry.route(`/net/v1/domain/${name}`, { kind: 'redirect', status: 302, location });
  redirect('meta-http.net', 'http://169.254.169.254/latest/meta-data/iam/security-credentials/');
  redirect('meta-https.net', 'https://169.254.169.254/rdap/domain/meta-https.net');
  redirect('ecs-meta.net', 'http://169.254.170.2/v2/credentials/');
  redirect('private-literal.net', 'http://10.0.0.1/rdap/domain/private-literal.net');
  redirect('decimal-private.net', 'http://167772161/rdap/domain/decimal-private.net'); // 10.0.0.1
  redirect('mapped.net', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/'); // ::ffff:169.254.169.254
  redirect('ula.net', 'http://[fd00:ec2::254]/latest/meta-data/');
  redirect('gcp-name.net', 'http://metadata.google.internal/computeMetadata/v1/');
  redirect('creds.net', `http://user:secret@127.0.0.1:${port(registrar)}/rdap/domain/creds.net`);
  redirect('private-name.net', `http://rdap.private-registrar.net:${port(registrar)}/rdap/domain/private-name.net`);
  redirect('split-name.net', `http://rdap.split-registrar.net:${port(registrar)}/rdap/domain/split-name.net`);
  redirect('named.net', `http://rdap.registrar-example.net:${port(registrar)}/rdap/domain/named.net`);
  redirect('rebind.net', `http://rdap.rebind-registrar.net:${port(registrar)}/rdap/domain/rebind.net`);
  // Second hop refused: registry -> registrar (allowed) -> metadata.
  redirect('two-hops.net', `${registrar.url}/rdap/domain/two-hops.net`);
  registrar.route('/rdap/domain/two-hops.net', {
    kind: 'redirect',
    status: 301,
    location: 'http://169.254.169.254/latest/user-data',
  });
  for (const name of ['named.net', 'rebind.net', 'split-name.net', 'creds.net']) {
    registrar.domain('/rdap/', name, { ...rdapFixture('registrar-example-net.json'), ldhName: name.toUpperCase() });
  }

  processor = await createDomainCheckProcessor({ config: config(file), logger: testLogger(), pairs });
});

afterAll(async () => {
  await processor?.close?.();
  await registry?.close();
  await registrar?.close();
  await dns?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('registry redirects the SSRF policy refuses', () => {
  it.each([
    ['meta-http.net', 'cloud_metadata', '169.254.169.254'],
    ['meta-https.net', 'cloud_metadata', '169.254.169.254'],
    ['ecs-meta.net', 'cloud_metadata', '169.254.170.2'],
    ['private-literal.net', 'private', '10.0.0.1'],
    ['decimal-private.net', 'private', '10.0.0.1'],
    ['mapped.net', 'ipv4_mapped', '::ffff:a9fe:a9fe'],
    ['ula.net', 'cloud_metadata', 'fd00:ec2::254'],
  ] as const)('%s: 502 upstream_url_not_allowed (%s), nothing fetched', async (domain, reason, address) => {
    const t0 = performance.now();
    const err = await failure(domain);
    expect(err).toMatchObject({ code: 'upstream_url_not_allowed', status: 502, details: { hop: 1, reason, address } });
    expect(err.message).toContain('redirect 1');
    // Refused before any connection: no connect timeout (RDAP_TIMEOUT_MS is 30 s) was waited for.
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('a metadata name and a URL with credentials are refused without DNS', async () => {
    const queriesBefore = dns.queries.length;
    expect(await failure('gcp-name.net')).toMatchObject({
      code: 'upstream_url_not_allowed',
      status: 502,
      details: { hop: 1, reason: 'cloud_metadata' },
    });
    expect(await failure('creds.net')).toMatchObject({
      code: 'upstream_url_not_allowed',
      status: 502,
      details: { hop: 1, reason: 'credentials_in_url' },
    });
    expect(dns.queries.length).toBe(queriesBefore);
    expect(registrar.requestsTo('/rdap/domain/creds.net')).toHaveLength(0);
  });

  it('a name resolving to 10.x (real DNS answer) is refused after one resolution', async () => {
    const err = await failure('private-name.net');
    expect(err).toMatchObject({
      code: 'upstream_url_not_allowed',
      status: 502,
      details: { hop: 1, reason: 'private', address: '10.0.0.5' },
    });
    expect(err.message).toContain('rdap.private-registrar.net resolves to 10.0.0.5');
    expect(dns.count('rdap.private-registrar.net', 'A')).toBe(1);
  });

  it('a name answering one loopback and one private address is refused: the registrar gets no request', async () => {
    const err = await failure('split-name.net');
    expect(err).toMatchObject({
      code: 'upstream_url_not_allowed',
      details: { hop: 1, reason: 'private', address: '10.20.30.40' },
    });
    expect(registrar.requestsTo('/rdap/domain/split-name.net')).toHaveLength(0);
  });

  it('the second hop is checked like the first (registrar -> metadata)', async () => {
    const err = await failure('two-hops.net');
    expect(err).toMatchObject({ code: 'upstream_url_not_allowed', details: { hop: 2, reason: 'cloud_metadata' } });
    expect(registrar.requestsTo('/rdap/domain/two-hops.net')).toHaveLength(1);
  });

  it('a bootstrap base URL on a private address is refused at hop 0', async () => {
    const sub = await mkdtemp(join(dir, 'private-base-'));
    const file = writeBootstrapFile(sub, [
      [['com'], ['http://10.1.2.3/rdap/']],
      [['org'], ['https://[fe80::1]/rdap/']],
    ]);
    const p = await createDomainCheckProcessor({ config: config(file), logger: testLogger(), pairs });
    try {
      expect(await failure('example.com', p)).toMatchObject({
        code: 'upstream_url_not_allowed',
        status: 502,
        details: { hop: 0, reason: 'private', address: '10.1.2.3' },
      });
      expect(await failure('example.org', p)).toMatchObject({
        code: 'upstream_url_not_allowed',
        status: 502,
        details: { hop: 0, reason: 'link_local' },
      });
    } finally {
      await p.close?.();
    }
  });
});

describe('controls: allowed hops still work through the pinned connection', () => {
  it('a redirect to a name resolving to the (loopback) registrar is followed; one resolution', async () => {
    const out = await processor.handle({ domain: 'named.net' }, ctx());
    expect(out).toMatchObject({
      domain: 'named.net',
      available: false,
      registrar: 'NameCheap, Inc.',
      rdapServer: `http://rdap.registrar-example.net:${port(registrar)}`,
    });
    expect(registrar.requestsTo('/rdap/domain/named.net')).toHaveLength(1);
    expect(dns.count('rdap.registrar-example.net', 'A')).toBe(1);
  });

  it('DNS rebinding: the name is resolved once and the connection pinned to the vetted answer', async () => {
    const out = await processor.handle({ domain: 'rebind.net' }, ctx());
    expect(out.available).toBe(false);
    expect(registrar.requestsTo('/rdap/domain/rebind.net')).toHaveLength(1);
    // A second lookup would have answered 10.0.0.9; there was none.
    expect(dns.count('rdap.rebind-registrar.net', 'A')).toBe(1);
  });
});
