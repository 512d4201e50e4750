/**
 * An https server on 127.0.0.1 with a fixed self-signed certificate for
 * `secure.fixture.example` (EC P-256, valid until 2126, generated once with
 * openssl and embedded so tests need no tool). The fetcher trusts it through
 * its `ca` setting. The server records the SNI name of every TLS connection.
 */
import { once } from 'node:events';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

export const TLS_FIXTURE_NAME = 'secure.fixture.example';

export const TLS_FIXTURE_CERT = `-----BEGIN CERTIFICATE-----
MIIB3TCCAYOgAwIBAgIUWxSyyFj+7P6z6ce6Hb2MvmRaSSswCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWc2VjdXJlLmZpeHR1cmUuZXhhbXBsZTAgFw0yNjExMjIwOTA3
MjlaGA8yMTI2MTAyOTA5MDcyOVowITEfMB0GA1UEAwwWc2VjdXJlLmZpeHR1cmUu
ZXhhbXBsZTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABJEZZbJxIz/mSbEZTjEy
t5o6s7D0cQzljrFg2oROjbJt/AyGjq9axmL0kUs1oCUHghmqMpTX1buBTHBsv+pf
BlqjgZYwgZMwHQYDVR0OBBYEFDmJ0qRTm6pES7KdxtvA0a0FpHHdMB8GA1UdIwQY
MBaAFDmJ0qRTm6pES7KdxtvA0a0FpHHdMCEGA1UdEQQaMBiCFnNlY3VyZS5maXh0
dXJlLmV4YW1wbGUwDAYDVR0TAQH/BAIwADALBgNVHQ8EBAMCB4AwEwYDVR0lBAww
CgYIKwYBBQUHAwEwCgYIKoZIzj0EAwIDSAAwRQIhALAOHZMOPnLBSFNiEpyANFIm
ikQUWCtDXhuLAH0ek99iAiAysRPSKgRRxG3L69IxzEcgrRWe0Ej0TM7G1XuFy+9e
9Q==
-----END CERTIFICATE-----
`;

// A throwaway key for a name that exists only in these tests.
const TLS_FIXTURE_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg1np6j9n7nqmGCzGc
Yd1V72ol0tyK+IcGkrIdL62lZxuhRANCAASRGWWycSM/5kmxGU4xMreaOrOw9HEM
5Y6xYNqETo2ybfwMho6vWsZi9JFLNaAlB4IZqjKU19W7gUxwbL/qXwZa
-----END PRIVATE KEY-----
`;

export interface TlsFixture {
  port: number;
  /** SNI name of each TLS connection, in order (null: none sent). */
  serverNames: (string | null)[];
  hosts: (string | undefined)[];
  close(): Promise<void>;
}

export async function startTlsFixture(body: string): Promise<TlsFixture> {
  const serverNames: (string | null)[] = [];
  const hosts: (string | undefined)[] = [];
  const server = https.createServer({ cert: TLS_FIXTURE_CERT, key: TLS_FIXTURE_KEY }, (req, res) => {
    hosts.push(req.headers.host);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    const name = (socket as TLSSocket & { servername?: string | false }).servername;
    serverNames.push(typeof name === 'string' ? name : null);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    serverNames,
    hosts,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => {});
    },
  };
}
