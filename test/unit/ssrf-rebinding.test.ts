/**
 * DNS rebinding. A real DNS server on loopback answers `rebind.attacker.example`
 * with a public-looking address on the first A query and with 127.0.0.1 on
 * every later one (TTL 0): the classic attack on "check the name, then let
 * the HTTP client resolve it again". The loopback allowance is OFF.
 *
 * "The network" is the fetcher's connect seam: a connection to the public
 * address is carried to the fixture site (standing in for that host), one to
 * 127.0.0.1 also reaches the fixture site (the internal service the attacker
 * wants); anything else is refused. So the test sees where each connection
 * was aimed, and can fail: a fetcher that resolved twice would show a second
 * A query and a connection to 127.0.0.1.
 *
 * A control experiment runs the naive pattern (vet the first answer, then
 * let http.request resolve the name itself) against the same DNS server and
 * shows it lands on 127.0.0.1: the scenario is a real attack.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JobError } from '../../core/queue/queue.js';
import { checkAddress } from '../../jobs/web-fetch/address-policy.js';
import { dnsServerResolver } from '../../jobs/web-fetch/resolver.js';
import { createSafeFetch, type FetchRequest } from '../../jobs/web-fetch/safe-fetch.js';
import { startFixtureDns, type FixtureDns } from '../helpers/web-fixtures-dns.js';
import { ARTICLE_TITLE, startWebFixtures, type WebFixtures } from '../helpers/web-fixtures.js';

const HOST = 'rebind.attacker.example';
const PUBLIC = '93.184.215.14';

let site: WebFixtures;
let dns: FixtureDns;
let connections: string[];

beforeAll(async () => {
  site = await startWebFixtures();
});

beforeEach(async () => {
  await dns?.close();
  connections = [];
  dns = await startFixtureDns((name, type, previous) => {
    if (name !== HOST) return null;
    if (type === 'AAAA') return [];
    return previous === 0 ? [PUBLIC] : ['127.0.0.1'];
  });
});

afterAll(async () => {
  await site?.close();
  await dns?.close();
});

/** Carries connections aimed at PUBLIC or 127.0.0.1 to the fixture site; records every target. */
function network(target: { address: string; port: number }) {
  connections.push(target.address);
  if (target.address === PUBLIC || target.address === '127.0.0.1')
    return net.connect({ host: '127.0.0.1', port: site.port });
  throw Object.assign(new Error(`no route to ${target.address}`), { code: 'EHOSTUNREACH' });
}

const fetcher = () =>
  createSafeFetch({
    allowLoopback: false,
    maxRedirects: 5,
    resolver: dnsServerResolver([dns.server]),
    connect: network,
  });

const request = (path: string): FetchRequest => ({
  url: `http://${HOST}:${site.port}${path}`,
  field: 'url',
  timeoutMs: 3000,
  maxBytes: 1024 * 1024,
  userAgent: 'rebinding-test',
  accept: 'text/html',
  acceptMediaType: () => true,
  acceptedDescription: 'anything',
});

describe('DNS rebinding', () => {
  it('connects to the address it vetted: one A query, one connection, to the public answer', async () => {
    const page = await fetcher()(request('/article'));
    expect(page.status).toBe(200);
    expect(page.body.toString()).toContain(ARTICLE_TITLE);
    expect(page.remoteAddress).toBe(PUBLIC);
    expect(dns.count(HOST, 'A'), 'the name is resolved exactly once').toBe(1);
    expect(connections).toEqual([PUBLIC]);
    // The name travels in the Host header, as it would to the real site.
    expect(site.requests.at(-1)?.headers.host).toBe(`${HOST}:${site.port}`);
  });

  it('a later fetch resolves afresh, gets 127.0.0.1, and is refused without connecting', async () => {
    await fetcher()(request('/article'));
    connections = [];
    const err = await fetcher()(request('/article')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobError);
    expect((err as JobError).details).toMatchObject({ reason: 'loopback', address: '127.0.0.1', hop: 0 });
    expect(connections).toEqual([]);
  });

  it('a redirect back to the same name is resolved and vetted again: the rebound answer is refused at hop 1', async () => {
    const err = await fetcher()(
      request(`/redirect?to=${encodeURIComponent(`http://${HOST}:${site.port}/article`)}`),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobError);
    expect((err as JobError).details).toMatchObject({ reason: 'loopback', hop: 1, address: '127.0.0.1' });
    expect(dns.count(HOST, 'A')).toBe(2);
    expect(connections).toEqual([PUBLIC]);
  });

  it('control: the naive "vet, then let the client resolve again" pattern is fooled by the same DNS server', async () => {
    const resolve = dnsServerResolver([dns.server]);
    const signal = AbortSignal.timeout(3000);
    const first = await resolve(HOST, signal);
    expect(first.map((a) => a.address)).toEqual([PUBLIC]);
    expect(checkAddress(first[0]!.address, { allowLoopback: false })).toBeNull(); // the check passes...
    const reached = await new Promise<string>((done, fail) => {
      const req = http.get(
        {
          host: HOST,
          port: site.port,
          path: '/article',
          // ...and the client's own lookup asks the DNS server again.
          lookup: ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
            resolve(hostname, signal).then((answers) => {
              const a = answers[0]!;
              if (options.all) callback(null, [{ address: a.address, family: a.family }]);
              else callback(null, a.address, a.family);
            }, fail);
          }) as never,
        },
        (res) => {
          res.resume();
          done(res.socket.remoteAddress ?? '');
        },
      );
      req.on('error', fail);
    });
    expect(reached, 'the naive client connected to the rebound loopback address').toBe('127.0.0.1');
    expect(dns.count(HOST, 'A')).toBe(2);
  });
});
