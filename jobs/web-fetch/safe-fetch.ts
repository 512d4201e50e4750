/**
 * The outbound fetcher of the job SKUs that take a URL (stealth-dom,
 * image-ocr-shrink): GET a public http(s) URL without letting the caller
 * reach anything else (server-side request forgery).
 *
 * Per hop (the first URL and every redirect, at most `maxRedirects`):
 *  1. URL rules (address-policy.ts `checkUrl`): WHATWG parsing, http/https,
 *     no credentials, no bad port, no internal name; an IP literal is judged
 *     as the parser normalised it.
 *  2. One resolution of the name; EVERY address of the answer must pass
 *     `checkAddress` (a name answering one public and one private address is
 *     refused).
 *  3. The socket connects to the vetted address itself (`host` is the IP;
 *     `Host` header and TLS SNI/certificate check keep the name), so no second
 *     lookup happens between the check and the connection: DNS rebinding has
 *     nothing to rebind. A `lookup` that throws is installed as a tripwire.
 *     When the connection to one vetted address fails, the next vetted one
 *     of the same answer is tried (hosts with AAAA on an IPv4-only network).
 * Limits: total time (`timeoutMs`, every hop and the body), body size
 * (counted after decompression while streaming, so a gzip bomb stops at the
 * cap), content types (per caller, checked from the headers before the body
 * is read).
 *
 * Errors are JobErrors (fetch-errors.ts; the body is read by fetch-body.ts): 400 `url_not_allowed` (details.field, details.reason,
 * details.hop: 0 for the request's URL, n for the n-th redirect), 413
 * `upstream_too_large`, 415 `unsupported_content_type`, 502 `upstream_error`
 * (details.reason: dns_not_found, ECONNREFUSED, too_many_redirects, ...),
 * 504 `upstream_timeout`.
 */
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { JobError } from '../../core/queue/queue.js';
import type { Config } from '../../core/config.js';
import { checkAddress, checkUrl, type CheckedUrl } from './address-policy.js';
import { parseContentType, readBody } from './fetch-body.js';
import { notAllowed, UpstreamError } from './fetch-errors.js';
import {
  dnsServerResolver,
  ResolveError,
  systemResolver,
  type HostResolver,
  type ResolvedAddress,
} from './resolver.js';

export interface FetcherSettings {
  allowLoopback: boolean;
  maxRedirects: number;
  resolver: HostResolver;
  /**
   * Test seam standing in for the network: opens the TCP connection to the
   * vetted address instead of net.connect (plain http only). Production never sets it.
   */
  connect?: (target: { address: string; family: 4 | 6; port: number; host: string }) => Duplex;
  /** Trust anchors replacing the system store for https (tests: a fixture certificate). */
  ca?: string;
}

export interface FetchRequest {
  url: string;
  /** Input field the URL came from, named in error details (`url`, `imageUrl`). */
  field: string;
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  /** Accept header. */
  accept: string;
  /** Decides from the response's media type (lower-case `type/subtype`, null when absent) whether to read the body. */
  acceptMediaType(mediaType: string | null): boolean;
  /** Human-readable list of accepted types, for the 415 message. */
  acceptedDescription: string;
  /** The caller's cancellation (ctx.signal). */
  signal?: AbortSignal;
  /** Judges the final status before anything else (the body is not read when it returns an error to throw). */
  rejectStatus?(status: number, statusText: string, url: URL, headers: http.IncomingHttpHeaders): JobError | undefined;
  /**
   * `follow` (default): redirects are followed, each hop vetted. `manual`: a redirect (301, 302, 303, 307, 308
   * with a Location) is returned as it is, with its headers and an empty body, not followed; for callers that
   * judge each hop themselves and fetch the next one through this fetcher again (domain-check's RDAP lookups).
   */
  redirect?: 'follow' | 'manual';
}

export interface FetchedResource {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  mediaType: string | null;
  charset: string | null;
  body: Buffer;
  /** Final URL, after redirects. */
  url: URL;
  /** URLs that answered with a redirect, in order. */
  redirects: string[];
  /** The vetted address the final response came from. */
  remoteAddress: string;
  elapsedMs: number;
}

export type SafeFetch = (request: FetchRequest) => Promise<FetchedResource>;

/** Settings from the config section "job SKUs: fetching". */
export function fetcherSettingsFromConfig(config: Config): FetcherSettings {
  return {
    allowLoopback: config.FETCH_ALLOW_LOOPBACK,
    maxRedirects: config.FETCH_MAX_REDIRECTS,
    resolver: config.FETCH_DNS_SERVERS ? dnsServerResolver(config.FETCH_DNS_SERVERS) : systemResolver(),
  };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Connection failures after which the next vetted address of the same answer is tried. */
const TRY_NEXT_ADDRESS = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'EAFNOSUPPORT',
  'ECONNRESET',
]);
const MAX_ADDRESSES_TRIED = 4;

export function createSafeFetch(settings: FetcherSettings): SafeFetch {
  const policy = { allowLoopback: settings.allowLoopback };

  /** Step 2: one resolution, every address vetted. */
  async function vet(checked: CheckedUrl, field: string, hop: number, signal: AbortSignal): Promise<ResolvedAddress[]> {
    if (checked.literal) return [checked.literal];
    let answers: ResolvedAddress[];
    try {
      answers = await settings.resolver(checked.host, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof ResolveError) throw new UpstreamError(err.reason, err.message, { host: checked.host });
      throw new UpstreamError('dns_failure', `resolving ${checked.host} failed`, { host: checked.host });
    }
    if (!answers.length)
      throw new UpstreamError('dns_not_found', `${checked.host} has no address`, { host: checked.host });
    for (const answer of answers) {
      const refusal = checkAddress(answer.address, policy);
      if (refusal) {
        throw notAllowed(
          field,
          hop,
          { ...refusal, message: `${checked.host} resolves to ${refusal.message}` },
          checked.url.href,
        );
      }
    }
    return answers;
  }

  /** Step 3: the request, on a socket to the vetted address. */
  function send(
    checked: CheckedUrl,
    target: ResolvedAddress,
    request: FetchRequest,
    signal: AbortSignal,
  ): Promise<http.IncomingMessage> {
    const isHttps = checked.url.protocol === 'https:';
    const options: https.RequestOptions = {
      host: target.address,
      family: target.family,
      port: checked.port,
      path: `${checked.url.pathname}${checked.url.search}`,
      method: 'GET',
      headers: {
        host: checked.url.host,
        'user-agent': request.userAgent,
        accept: request.accept,
        'accept-language': 'en-US,en;q=0.9',
        'accept-encoding': 'gzip, br',
        connection: 'close',
      },
      signal,
      // Tripwire: `host` is an IP, so net never looks it up; a lookup here would be a second resolution.
      lookup: ((hostname: string, _options: unknown, callback: (err: Error) => void) =>
        callback(
          Object.assign(new Error(`refused a second DNS lookup of ${hostname}`), { code: 'ERR_SECOND_LOOKUP' }),
        )) as never,
    };
    // TLS: SNI and the certificate check use the name, while the socket goes to the vetted address.
    if (isHttps && !checked.literal) options.servername = checked.host;
    if (isHttps && settings.ca) options.ca = settings.ca;
    if (settings.connect) {
      const connect = settings.connect;
      options.createConnection = () =>
        connect({ address: target.address, family: target.family, port: checked.port, host: checked.host }) as never;
    } else {
      options.agent = false; // a fresh connection per request: no pooled socket is ever shared between names
    }
    return new Promise((resolve, reject) => {
      const req = (isHttps ? https : http).request(options, resolve);
      req.on('error', reject);
      req.end();
    });
  }

  return async function safeFetch(request: FetchRequest): Promise<FetchedResource> {
    const started = performance.now();
    const timeout = AbortSignal.timeout(request.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    const redirects: string[] = [];
    try {
      const first = checkUrl(request.url, policy);
      if (!first.ok) throw notAllowed(request.field, 0, first.refusal, request.url);
      let checked = first.checked;
      for (let hop = 0; ; hop++) {
        const addresses = await vet(checked, request.field, hop, signal);
        let res: http.IncomingMessage | undefined;
        let used: ResolvedAddress | undefined;
        let lastError: unknown;
        for (const target of addresses.slice(0, MAX_ADDRESSES_TRIED)) {
          try {
            res = await send(checked, target, request, signal);
            used = target;
            break;
          } catch (err) {
            lastError = err;
            if (signal.aborted || !TRY_NEXT_ADDRESS.has((err as { code?: string }).code ?? '')) break;
          }
        }
        if (!res || !used) throw lastError;
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        const { mediaType, charset } = parseContentType(res.headers['content-type']);
        const answer = (from: http.IncomingMessage, address: string, body: Buffer): FetchedResource => ({
          status,
          statusText: from.statusMessage ?? '',
          headers: from.headers,
          mediaType,
          charset,
          body,
          url: checked.url,
          redirects,
          remoteAddress: address,
          elapsedMs: performance.now() - started,
        });
        if (REDIRECTS.has(status) && location && request.redirect === 'manual') {
          res.destroy();
          return answer(res, used.address, Buffer.alloc(0));
        }
        if (REDIRECTS.has(status) && location) {
          res.destroy();
          redirects.push(checked.url.href);
          if (hop >= settings.maxRedirects) {
            throw new UpstreamError('too_many_redirects', `more than ${settings.maxRedirects} redirects`, {
              redirects,
            });
          }
          const next = checkUrl(location, policy, checked.url);
          if (!next.ok) throw notAllowed(request.field, hop + 1, next.refusal, safeHref(location, checked.url));
          checked = next.checked;
          continue;
        }
        const rejected = request.rejectStatus?.(status, res.statusMessage ?? '', checked.url, res.headers);
        if (rejected) {
          res.destroy();
          throw rejected;
        }
        if (!request.acceptMediaType(mediaType)) {
          res.destroy();
          throw new JobError(
            'unsupported_content_type',
            `the URL answered ${mediaType ?? 'no Content-Type'}; accepted: ${request.acceptedDescription}`,
            415,
            {
              field: request.field,
              content_type: mediaType,
              url: checked.url.href,
            },
          );
        }
        return answer(res, used.address, await readBody(res, request, checked.url.href));
      }
    } catch (err) {
      if (timeout.aborted) {
        throw new JobError('upstream_timeout', `the fetch did not complete within ${request.timeoutMs} ms`, 504, {
          field: request.field,
          timeout_ms: request.timeoutMs,
        });
      }
      if (request.signal?.aborted) {
        throw new JobError('upstream_timeout', 'the fetch was abandoned: the caller stopped waiting', 504, {
          field: request.field,
          reason: 'aborted',
        });
      }
      if (err instanceof JobError) throw err;
      const code = (err as { code?: string }).code ?? 'unknown';
      throw new UpstreamError(code, `fetching the URL failed: ${(err as Error).message ?? code}`);
    }
  };
}

function safeHref(location: string, base: URL): string {
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
}
