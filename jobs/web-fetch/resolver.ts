/**
 * Name resolution for the outbound fetcher. The fetcher resolves a name
 * exactly once per hop, vets every address of the answer, and connects to a
 * vetted address (never to the name), so a DNS answer that changes between
 * the check and the connection (DNS rebinding) cannot redirect the socket.
 *
 * Two sources: the system resolver (getaddrinfo, honouring /etc/hosts, in
 * the order the system prefers), or explicit DNS servers (FETCH_DNS_SERVERS,
 * e.g. a validating resolver dedicated to egress), queried for A and AAAA.
 */
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name (never an IP literal) to its addresses; rejects with a ResolveError. */
export type HostResolver = (host: string, signal: AbortSignal) => Promise<ResolvedAddress[]>;

export class ResolveError extends Error {
  constructor(
    public readonly reason: 'dns_not_found' | 'dns_failure',
    message: string,
  ) {
    super(message);
    this.name = 'ResolveError';
  }
}

const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'EAI_NONAME', 'EAI_NODATA']);

function toResolveError(host: string, err: unknown): ResolveError {
  const code = (err as { code?: string }).code ?? 'unknown';
  return NOT_FOUND.has(code)
    ? new ResolveError('dns_not_found', `${host} does not resolve (${code})`)
    : new ResolveError('dns_failure', `resolving ${host} failed (${code})`);
}

function abortable<T>(work: Promise<T>, signal: AbortSignal, onAbort?: () => void): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort?.();
      reject(signal.reason);
    };
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(err);
      },
    );
  });
}

const family = (address: string): 4 | 6 => (isIP(address) === 6 ? 6 : 4);

/** getaddrinfo through libuv's thread pool (not cancellable: the caller stops waiting on abort). */
export function systemResolver(): HostResolver {
  return async (host, signal) => {
    try {
      const answers = await abortable(dns.lookup(host, { all: true, verbatim: true }), signal);
      return answers.map((a) => ({ address: a.address, family: family(a.address) }));
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw toResolveError(host, err);
    }
  };
}

/** Queries the given DNS servers (`host:port` or `[v6]:port`) for A and AAAA; IPv4 answers first. */
export function dnsServerResolver(servers: string[], timeoutMs = 2000): HostResolver {
  return async (host, signal) => {
    const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
    resolver.setServers(servers);
    const query = async (kind: 'A' | 'AAAA'): Promise<string[]> => {
      try {
        return kind === 'A' ? await resolver.resolve4(host) : await resolver.resolve6(host);
      } catch (err) {
        if (NOT_FOUND.has((err as { code?: string }).code ?? '')) return [];
        throw err;
      }
    };
    try {
      const [v4, v6] = await abortable(Promise.all([query('A'), query('AAAA')]), signal, () => resolver.cancel());
      const all = [...v4, ...v6];
      if (!all.length) throw Object.assign(new Error('no A or AAAA record'), { code: 'ENOTFOUND' });
      return all.map((address) => ({ address, family: family(address) }));
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw toResolveError(host, err);
    }
  };
}
