/**
 * domain-check against loopback RDAP servers answering in RFC 9083 format
 * (recorded-shape Verisign .com and PIR .org answers, a registry that
 * redirects to a registrar's RDAP server, 404, 5xx, 429, garbage, a slow
 * server), routed through a test bootstrap document in IANA's dns.json
 * format whose base URLs point at the loopback servers. Covers the record's
 * fields, availability, IDN normalisation, the error codes and statuses, the
 * scheduled bootstrap refresh (a failed refresh keeps the last good copy),
 * and the in-process queue path (coded errors arrive intact). Latency is a
 * bench figure (npm run bench:utility), not a test.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainCheckOutput, type DomainCheckRequest } from '../../jobs/domain-check/sku.js';
import { loadPairs } from '../../core/markets/pairs.js';
import { loadConfig } from '../../core/config.js';
import { createInProcessQueue } from '../../core/queue/inprocess-queue.js';
import type { JobError } from '../../core/queue/queue.js';
import { type JobContext } from '../../core/queue/queue.js';
import { createDomainCheckProcessor, type DomainCheckResult } from '../../jobs/domain-check/processor.js';
import { skuJobName, type SkuProcessor } from '../../jobs/sku-processor.js';
import { eventually, testConfig, testLogger } from '../helpers/config.js';
import {
  bootstrapDocument,
  rdapFixture,
  RdapServer,
  writeBootstrapFile,
  type BootstrapService,
} from '../helpers/rdap-server.js';
import { jobErrorOf } from '../helpers/job-error.js';

const pairs = loadPairs();
let registry: RdapServer;
let registrar: RdapServer;
let dir: string;
let bootstrapFile: string;
let processor: SkuProcessor<DomainCheckRequest, DomainCheckResult>;

const ctx = (timeoutMs = 30_000): JobContext => ({
  jobId: 'test',
  attempt: 1,
  deadline: Date.now() + timeoutMs,
  signal: new AbortController().signal,
});

async function check(domain: string, processorUnderTest = processor): Promise<DomainCheckResult> {
  const out = await processorUnderTest.handle({ domain }, ctx());
  expect(DomainCheckOutput.safeParse(out).success, JSON.stringify(out)).toBe(true);
  return out;
}

async function failure(domain: string, processorUnderTest = processor): Promise<JobError> {
  return jobErrorOf(processorUnderTest.handle({ domain }, ctx()));
}

function services(): BootstrapService[] {
  return [
    [['com'], [`${registry.url}/com/v1/`]],
    [['net'], [`${registry.url}/net/v1/`]],
    [['org', 'ngo'], [`${registry.url}/rdap/`]],
    [['co.uk', 'uk'], [`${registry.url}/uk/`]],
  ];
}

function processorConfig(overrides: Record<string, string> = {}) {
  return testConfig({
    RDAP_BOOTSTRAP_FILE: bootstrapFile,
    RDAP_BOOTSTRAP_URL: `${registry.url}/bootstrap/dns.json`,
    RDAP_BOOTSTRAP_REFRESH_MS: '0',
    RDAP_ALLOW_HTTP: 'true',
    RDAP_TIMEOUT_MS: '1500',
    ...overrides,
  });
}

beforeAll(async () => {
  registry = await RdapServer.start();
  registrar = await RdapServer.start();
  dir = await mkdtemp(join(tmpdir(), 'domain-check-'));
  bootstrapFile = writeBootstrapFile(dir, services(), '2026-01-01T00:00:00Z');

  registry.domain('/com/v1/', 'google.com', rdapFixture('verisign-com-google.json'));
  registry.domain('/rdap/', 'wikipedia.org', rdapFixture('pir-org-wikipedia.json'));
  // A registry that does not hold the object and points at the registrar's RDAP server (RFC 7480 §5.2).
  registry.route('/net/v1/domain/moved-example.net', {
    kind: 'redirect',
    status: 301,
    location: `${registrar.url}/rdap/domain/moved-example.net`,
  });
  registrar.domain('/rdap/', 'moved-example.net', rdapFixture('registrar-example-net.json'));
  // A redirect to a registrar that has no such object.
  registry.route('/net/v1/domain/dangling.net', {
    kind: 'redirect',
    location: `${registrar.url}/rdap/domain/dangling.net`,
  });
  // Four hops: more than RDAP_MAX_REDIRECTS (3).
  for (let i = 0; i < 4; i++)
    registry.route(`/net/v1/domain/hop${i}.net`, { kind: 'redirect', location: `/net/v1/domain/hop${i + 1}.net` });
  registry.route('/net/v1/domain/loop.net', { kind: 'redirect', location: '/net/v1/domain/loop.net' });
  registry.domain('/net/v1/', 'hop4.net', { ...rdapFixture('verisign-com-google.json'), ldhName: 'HOP4.NET' });
  registry.route('/com/v1/domain/broken.com', {
    kind: 'json',
    status: 503,
    body: { errorCode: 503, title: 'Service Unavailable' },
  });
  registry.route('/com/v1/domain/html.com', {
    kind: 'raw',
    status: 200,
    contentType: 'text/html',
    body: '<html><body>Maintenance</body></html>',
  });
  registry.route('/com/v1/domain/garbage.com', {
    kind: 'raw',
    status: 200,
    contentType: 'application/rdap+json',
    body: '{"objectClassName": "domain", "handle": ',
  });
  registry.route('/com/v1/domain/entity.com', { kind: 'json', body: { objectClassName: 'entity', handle: 'X' } });
  // Far slower than RDAP_TIMEOUT_MS (1.5 s): a lookup that waited for it would stand out on any machine.
  registry.route('/com/v1/domain/slow.com', {
    kind: 'json',
    body: rdapFixture('verisign-com-google.json'),
    delayMs: 30_000,
  });
  registry.route('/com/v1/domain/busy.com', {
    kind: 'json',
    status: 429,
    body: { errorCode: 429, title: 'Too Many Requests' },
    headers: { 'retry-after': '120' },
  });
  registry.route('/com/v1/domain/refused.com', {
    kind: 'json',
    status: 400,
    body: {
      errorCode: 400,
      title: 'Bad Request',
      description: ['Domain name label exceeds the registry policy length.'],
    },
  });
  const pendingDelete = rdapFixture('verisign-com-google.json');
  registry.domain('/com/v1/', 'expiring.com', {
    ...pendingDelete,
    ldhName: 'EXPIRING.COM',
    status: ['pending delete', 'redemption period'],
  });
  registry.domain('/com/v1/', 'redeem.com', {
    ...pendingDelete,
    ldhName: 'REDEEM.COM',
    status: ['redemption period', 'client hold'],
  });

  processor = await createDomainCheckProcessor({ config: processorConfig(), logger: testLogger(), pairs });
});

afterAll(async () => {
  await processor?.close?.();
  await registry?.close();
  await registrar?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('registered domains', () => {
  it('maps a Verisign .com answer: events, registrar entity, nameservers, handle, status', async () => {
    const out = await check('google.com');
    expect(out).toEqual({
      success: true,
      domain: 'google.com',
      available: false,
      status: 'REGISTERED',
      registeredDate: '1997-09-15T04:00:00Z',
      expirationDate: '2028-09-14T04:00:00Z',
      lastUpdated: '2019-09-09T15:39:04Z',
      registrar: 'MarkMonitor Inc.',
      nameservers: ['ns1.google.com', 'ns2.google.com', 'ns3.google.com', 'ns4.google.com'],
      handle: '2138514_DOMAIN_COM-VRSN',
      source: 'rdap',
      rdapStatus: rdapFixture('verisign-com-google.json').status as string[],
      rdapServer: registry.url,
    });
    const request = registry.requestsTo('/com/v1/domain/google.com').at(-1);
    expect(request?.accept).toContain('application/rdap+json');
  });

  it('maps a PIR .org answer: the registrar, not the redacted registrant', async () => {
    const out = await check('WikiPedia.ORG.');
    expect(out).toMatchObject({
      domain: 'wikipedia.org',
      available: false,
      status: 'REGISTERED',
      registrar: 'MarkMonitor Inc.',
      handle: 'D51687756-LROR',
      registeredDate: '2001-01-13T00:12:14Z',
      expirationDate: '2027-01-13T00:12:14Z',
      lastUpdated: '2024-12-06T10:03:49Z',
      nameservers: ['ns0.wikimedia.org', 'ns1.wikimedia.org', 'ns2.wikimedia.org'],
    });
  });

  it('looks up the registrable domain of a host name (www.google.com -> google.com)', async () => {
    const before = registry.requestsTo('/com/v1/domain/google.com').length;
    const out = await check('www.google.com');
    expect(out.domain).toBe('google.com');
    expect(out.available).toBe(false);
    expect(registry.requestsTo('/com/v1/domain/google.com').length).toBe(before + 1);
    expect(registry.requestsTo('/com/v1/domain/www.google.com')).toHaveLength(0);
  });

  it('follows a registry redirect to the registrar RDAP server; dates normalised to UTC', async () => {
    const out = await check('moved-example.net');
    expect(out).toMatchObject({
      domain: 'moved-example.net',
      available: false,
      status: 'REGISTERED',
      registrar: 'NameCheap, Inc.',
      registeredDate: '2023-05-02T14:11:09Z',
      lastUpdated: '2026-04-01T06:00:00Z',
      nameservers: ['dns1.registrar-servers.com', 'dns2.registrar-servers.com'],
      rdapStatus: ['client transfer prohibited', 'client hold'],
      rdapServer: registrar.url,
    });
    expect(registry.requestsTo('/net/v1/domain/moved-example.net')).toHaveLength(1);
    expect(registrar.requestsTo('/rdap/domain/moved-example.net')).toHaveLength(1);
  });

  it('maps the lifecycle statuses: pending delete and redemption period', async () => {
    expect((await check('expiring.com')).status).toBe('PENDING_DELETE');
    expect((await check('redeem.com')).status).toBe('REDEMPTION_PERIOD');
  });
});

describe('available domains', () => {
  it('a registry 404 means available, with null dates and no registrar', async () => {
    const out = await check('surely-unregistered-name-4821.com');
    expect(out).toEqual({
      success: true,
      domain: 'surely-unregistered-name-4821.com',
      available: true,
      status: 'AVAILABLE',
      registeredDate: null,
      expirationDate: null,
      lastUpdated: null,
      registrar: null,
      nameservers: [],
      handle: null,
      source: 'rdap',
      rdapStatus: [],
      rdapServer: registry.url,
    });
  });

  it('normalises an IDN to punycode before the query and reports its Unicode form', async () => {
    const out = await check('Bücher.com');
    expect(out).toMatchObject({ domain: 'xn--bcher-kva.com', unicodeName: 'bücher.com', available: true });
    expect(registry.requestsTo('/com/v1/domain/xn--bcher-kva.com')).toHaveLength(1);
  });

  it('uses the longest matching bootstrap entry (co.uk before uk)', async () => {
    const out = await check('example.co.uk');
    expect(out.available).toBe(true);
    expect(registry.requestsTo('/uk/domain/example.co.uk')).toHaveLength(1);
  });
});

describe('errors', () => {
  it('400 tld_not_supported for a TLD without RDAP service, naming the field', async () => {
    const err = await failure('example.zz');
    expect(err).toMatchObject({ code: 'tld_not_supported', status: 400, details: { field: 'domain', tld: 'zz' } });
  });

  it('400 invalid_domain for names that are not registrable domains', async () => {
    for (const bad of [
      'co.uk',
      'exa mple.com',
      '-bad-.com',
      '192.168.0.1',
      'https://example.com/x',
      'single',
      'xn--zz.com',
    ]) {
      const err = await failure(bad);
      expect(err, bad).toMatchObject({ code: 'invalid_domain', status: 400, details: { field: 'domain' } });
    }
  });

  it('400 invalid_domain when the registry itself refuses the name (400)', async () => {
    const err = await failure('refused.com');
    expect(err).toMatchObject({
      code: 'invalid_domain',
      status: 400,
      details: { field: 'domain', upstream_status: 400 },
    });
    expect(err.message).toContain('exceeds the registry policy length');
  });

  it('502 upstream_error for a 5xx, HTML, truncated JSON or a non-domain object', async () => {
    for (const name of ['broken.com', 'html.com', 'garbage.com', 'entity.com']) {
      const err = await failure(name);
      expect(err, name).toMatchObject({ code: 'upstream_error', status: 502 });
    }
    expect((await failure('broken.com')).details).toMatchObject({ upstream_status: 503 });
  });

  it('502 when a redirect leads to a server without the object, too many hops, or a loop', async () => {
    expect(await failure('dangling.net')).toMatchObject({
      code: 'upstream_error',
      status: 502,
      details: { upstream_status: 404 },
    });
    const tooMany = await failure('hop0.net');
    expect(tooMany).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(tooMany.message).toContain('redirects');
    expect(registry.requestsTo('/net/v1/domain/hop4.net')).toHaveLength(0);
    expect((await failure('loop.net')).message).toContain('loop');
  });

  it('accepts exactly RDAP_MAX_REDIRECTS hops', async () => {
    const out = await check('hop1.net');
    expect(out.handle).toBe('2138514_DOMAIN_COM-VRSN');
    expect(registry.requestsTo('/net/v1/domain/hop4.net').length).toBeGreaterThan(0);
  });

  it('503 upstream_rate_limited with retry_after_seconds when the registry answers 429', async () => {
    const err = await failure('busy.com');
    expect(err).toMatchObject({ code: 'upstream_rate_limited', status: 503, details: { retry_after_seconds: 120 } });
  });

  it('504 upstream_timeout when the registry answers after RDAP_TIMEOUT_MS', async () => {
    const t0 = performance.now();
    // A job deadline far past both: only RDAP_TIMEOUT_MS can end the lookup early.
    const err = await jobErrorOf(processor.handle({ domain: 'slow.com' }, ctx(60_000)));
    const elapsed = performance.now() - t0;
    expect(err).toMatchObject({ code: 'upstream_timeout', status: 504 });
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('502 when the registry is unreachable (connection refused)', async () => {
    const gone = await RdapServer.start();
    const url = gone.url;
    await gone.close();
    const file = writeBootstrapFile(await mkdtemp(join(dir, 'gone-')), [[['com'], [`${url}/com/v1/`]]]);
    const p = await createDomainCheckProcessor({
      config: processorConfig({ RDAP_BOOTSTRAP_FILE: file }),
      logger: testLogger(),
      pairs,
    });
    try {
      expect(await failure('google.com', p)).toMatchObject({ code: 'upstream_error', status: 502 });
    } finally {
      await p.close?.();
    }
  });

  it('uses only https base URLs unless the test setting allows http', async () => {
    const p = await createDomainCheckProcessor({
      config: processorConfig({ RDAP_ALLOW_HTTP: 'false' }),
      logger: testLogger(),
      pairs,
    });
    try {
      expect(await failure('google.com', p)).toMatchObject({ code: 'tld_not_supported', status: 400 });
    } finally {
      await p.close?.();
    }
    // The switch itself is refused by the configuration outside tests, for every role.
    for (const env of ['production', 'development']) {
      expect(() => loadConfig({ NODE_ENV: env, RDAP_ALLOW_HTTP: 'true' })).toThrow(
        /RDAP_ALLOW_HTTP=true: allowed only when NODE_ENV=test/,
      );
    }
  });
});

describe('bootstrap refresh', () => {
  it(
    'refreshes on schedule from RDAP_BOOTSTRAP_URL; a failed refresh keeps the last good copy and is logged',
    { timeout: 120_000 },
    async () => {
      const lines: Record<string, unknown>[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString().split('\n'))
            if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      });
      const logger = pino({ level: 'info' }, sink);
      // The published document first fails (500), then is invalid, then a newer one adds .dev.
      let mode: 'fail' | 'garbage' | 'good' = 'fail';
      const newer = bootstrapDocument([...services(), [['dev'], [`${registry.url}/dev/`]]], '2026-06-01T00:00:00Z');
      registry.route('/bootstrap/dns.json', () =>
        mode === 'fail'
          ? { kind: 'json', status: 500, body: { error: 'internal' } }
          : mode === 'garbage'
            ? { kind: 'raw', status: 200, contentType: 'application/json', body: '{"services": "nope"}' }
            : { kind: 'json', body: newer, contentType: 'application/json' },
      );
      registry.domain('/dev/', 'web.dev', {
        ...rdapFixture('verisign-com-google.json'),
        ldhName: 'web.dev',
        handle: 'WEBDEV-GOOGLE',
      });
      const p = await createDomainCheckProcessor({
        config: processorConfig({ RDAP_BOOTSTRAP_REFRESH_MS: '150' }),
        logger,
        pairs,
      });
      try {
        expect(lines.find((l) => l.msg === 'rdap bootstrap: snapshot loaded')).toMatchObject({
          publication: '2026-01-01T00:00:00Z',
        });
        await eventually(
          async () =>
            lines.filter((l) => l.msg === 'rdap bootstrap: refresh failed, keeping the last good copy').length,
          (n) => n >= 1,
          30_000,
          25,
        );
        // The last good copy still serves lookups; .dev is not known yet.
        expect((await check('google.com', p)).available).toBe(false);
        expect(await failure('web.dev', p)).toMatchObject({ code: 'tld_not_supported' });
        mode = 'garbage';
        const failedBefore = lines.filter(
          (l) => l.msg === 'rdap bootstrap: refresh failed, keeping the last good copy',
        ).length;
        await eventually(
          async () =>
            lines.filter((l) => l.msg === 'rdap bootstrap: refresh failed, keeping the last good copy').length,
          (n) => n > failedBefore,
          30_000,
          25,
        );
        expect(await failure('web.dev', p)).toMatchObject({ code: 'tld_not_supported' });
        mode = 'good';
        const refreshed = await eventually(
          async () => lines.find((l) => l.msg === 'rdap bootstrap: refreshed'),
          (l) => l !== undefined,
          30_000,
          25,
        );
        expect(refreshed).toMatchObject({
          publication: '2026-06-01T00:00:00Z',
          origin: `${registry.url}/bootstrap/dns.json`,
        });
        expect(await check('web.dev', p)).toMatchObject({ handle: 'WEBDEV-GOOGLE', available: false });
        expect(registry.requestsTo('/bootstrap/dns.json').length).toBeGreaterThanOrEqual(3);
      } finally {
        await p.close?.();
      }
    },
  );
});

describe('through the in-process queue', () => {
  it('returns the record and propagates coded errors with their status and details', async () => {
    const queue = await createInProcessQueue({ concurrency: 4, maxAttempts: 2, logger: testLogger() });
    try {
      await queue.process(skuJobName('domain-check'), processor.handle);
      const ok = await queue.run<DomainCheckRequest, DomainCheckResult>(
        skuJobName('domain-check'),
        { domain: 'google.com' },
        { deadlineMs: 30_000 },
      );
      expect(DomainCheckOutput.parse(ok).registrar).toBe('MarkMonitor Inc.');
      await expect(
        queue.run(skuJobName('domain-check'), { domain: 'example.zz' }, { deadlineMs: 30_000 }),
      ).rejects.toMatchObject({
        code: 'tld_not_supported',
        status: 400,
        details: { field: 'domain' },
      });
    } finally {
      await queue.close();
    }
  });
});
