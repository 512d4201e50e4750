/**
 * https through the pinned connection: the socket goes to the vetted address
 * (127.0.0.1 here, loopback allowance on, names resolved by a DNS server on
 * loopback) while TLS keeps the name: SNI is the name, the certificate is
 * checked against the name, and the Host header carries it. A name the
 * certificate does not cover fails verification, as it would without pinning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobError } from '../../core/queue/queue.js';
import { dnsServerResolver } from '../../jobs/web-fetch/resolver.js';
import { createSafeFetch, type FetchRequest } from '../../jobs/web-fetch/safe-fetch.js';
import { startFixtureDns, type FixtureDns } from '../helpers/web-fixtures-dns.js';
import { startTlsFixture, TLS_FIXTURE_CERT, TLS_FIXTURE_NAME, type TlsFixture } from '../helpers/web-fixtures-tls.js';
import { articleHtml, ARTICLE_TITLE } from '../helpers/web-fixtures.js';

let tls: TlsFixture;
let dns: FixtureDns;

beforeAll(async () => {
  tls = await startTlsFixture(articleHtml());
  dns = await startFixtureDns((name, type) =>
    name.endsWith('.fixture.example') ? (type === 'A' ? ['127.0.0.1'] : []) : null,
  );
});
afterAll(async () => {
  await tls?.close();
  await dns?.close();
});

const fetcher = (ca?: string) =>
  createSafeFetch({
    allowLoopback: true,
    maxRedirects: 5,
    resolver: dnsServerResolver([dns.server]),
    ...(ca ? { ca } : {}),
  });
const request = (url: string): FetchRequest => ({
  url,
  field: 'url',
  timeoutMs: 3000,
  maxBytes: 1024 * 1024,
  userAgent: 'tls-test',
  accept: 'text/html',
  acceptMediaType: () => true,
  acceptedDescription: 'anything',
});

describe('https on a pinned address', () => {
  it('connects to the vetted IP with SNI, certificate check and Host on the name', async () => {
    const page = await fetcher(TLS_FIXTURE_CERT)(request(`https://${TLS_FIXTURE_NAME}:${tls.port}/article`));
    expect(page.status).toBe(200);
    expect(page.remoteAddress).toBe('127.0.0.1');
    expect(page.body.toString()).toContain(ARTICLE_TITLE);
    expect(tls.serverNames.at(-1)).toBe(TLS_FIXTURE_NAME);
    expect(tls.hosts.at(-1)).toBe(`${TLS_FIXTURE_NAME}:${tls.port}`);
  });

  it('a name the certificate does not cover fails verification (502)', async () => {
    const err = await fetcher(TLS_FIXTURE_CERT)(request(`https://other.fixture.example:${tls.port}/`)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(JobError);
    expect((err as JobError).status).toBe(502);
    expect((err as JobError).details.reason).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('an untrusted certificate fails verification (502)', async () => {
    const err = await fetcher()(request(`https://${TLS_FIXTURE_NAME}:${tls.port}/`)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobError);
    expect((err as JobError).details.reason).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });
});
