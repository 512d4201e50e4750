/**
 * An authoritative DNS server on 127.0.0.1 (UDP, real DNS packets through
 * dns-packet) whose answers the test decides per query: the resolver the
 * fetcher talks to in the SSRF tests (names that resolve to private ranges,
 * DNS rebinding: a different answer on the second query). Every query is
 * recorded in order. A name the zone function does not know is NXDOMAIN.
 */
import dgram from 'node:dgram';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';

export interface DnsQuery {
  name: string;
  type: string;
}

/** Answers for (name, type, how many times this name+type was asked before): addresses, [] for NODATA, null for NXDOMAIN. */
export type Zone = (name: string, type: 'A' | 'AAAA', previousQueries: number) => string[] | null;

export interface FixtureDns {
  /** `127.0.0.1:port`, for FETCH_DNS_SERVERS / dnsServerResolver. */
  server: string;
  queries: DnsQuery[];
  count(name: string, type?: string): number;
  close(): Promise<void>;
}

export async function startFixtureDns(zone: Zone): Promise<FixtureDns> {
  const queries: DnsQuery[] = [];
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, remote) => {
    let request: dnsPacket.DecodedPacket;
    try {
      request = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = request.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    const type = question.type;
    const previous = queries.filter((q) => q.name === name && q.type === type).length;
    queries.push({ name, type });
    const addresses = type === 'A' || type === 'AAAA' ? zone(name, type, previous) : [];
    const response = dnsPacket.encode({
      type: 'response',
      id: request.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (addresses === null ? 3 : 0), // rcode 3 = NXDOMAIN
      questions: [question],
      answers: (addresses ?? []).map((data) => ({
        type: type as 'A' | 'AAAA',
        name: question.name,
        class: 'IN' as const,
        ttl: 0,
        data,
      })),
    });
    socket.send(response, remote.port, remote.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  const port = (socket.address() as AddressInfo).port;
  return {
    server: `127.0.0.1:${port}`,
    queries,
    count: (name, type) => queries.filter((q) => q.name === name && (type === undefined || q.type === type)).length,
    close: async () => {
      socket.close();
      await once(socket, 'close').catch(() => {});
    },
  };
}
