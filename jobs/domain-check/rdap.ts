/**
 * RDAP domain lookup (RFC 9082 query, RFC 9083 answer); the mapping of a
 * domain object to the domain-check record is rdap-domain-object.ts
 * (re-exported here).
 *
 * HTTP: `GET {base}domain/{name}` with `Accept: application/rdap+json`; one
 * deadline covers the whole lookup. Redirects (RFC 7480 §5.2: a server that
 * does not hold the object points at one that does, e.g. a registry at a
 * registrar, or a redirector at the registry) are followed by hand, at most
 * `maxRedirects` hops, `https:` only unless test configuration allows `http:`,
 * each hop checked the same way, loops refused.
 *
 * Every hop, the bootstrap-listed registry URL included, goes through the
 * SSRF-safe fetcher of jobs/web-fetch (`redirect: 'manual'`, so the hops stay
 * counted and judged here): its URL policy (no credentials, bad ports,
 * internal or metadata names, non-public IP literals in any spelling), one
 * resolution with every address vetted, and a connection pinned to the vetted
 * address (no DNS rebinding). A registry (or a registrar it redirects to)
 * cannot make the worker reach a private or metadata address.
 *
 * Outcomes (see jobs/domain-check/README.md):
 *  - 200 with a domain object -> registered;
 *  - 404 from the server the bootstrap registry names -> available (the
 *    registry holds no registration); a 404 after a redirect is a 502: the
 *    registry pointed elsewhere, so it knows the name, and "available" would
 *    be a lie;
 *  - 400/422 -> 400 `invalid_domain` (the registry refused the name);
 *  - 429 -> 503 `upstream_rate_limited` with `retry_after_seconds`;
 *  - other 4xx, 5xx, non-JSON or a non-domain object -> 502 `upstream_error`;
 *  - a server or redirect URL the SSRF policy refuses -> 502
 *    `upstream_url_not_allowed` (`details.reason`, `details.hop`: 0 for the
 *    registry's URL, n for the n-th redirect; nothing is fetched from it);
 *  - no answer before the deadline -> 504 `upstream_timeout`.
 */
import { JobError } from '../../core/queue/queue.js';
import type { FetchedResource, SafeFetch } from '../web-fetch/safe-fetch.js';
import { isRecord } from './rdap-domain-object.js';

export { isoUtc, isRecord, mapDomainObject, mapStatus, vcardFn, type RdapDomainFields } from './rdap-domain-object.js';

/** RDAP answers are a few KB; anything past this is not an RDAP answer. */
export const MAX_RDAP_BYTES = 1024 * 1024;
const RETRY_AFTER_DEFAULT_S = 60;
const ACCEPT = 'application/rdap+json, application/json;q=0.9';
const RDAP_JSON = /application\/(rdap\+)?json/;

export interface RdapFetchOptions {
  timeoutMs: number;
  maxRedirects: number;
  allowHttp: boolean;
  /** The SSRF-safe fetcher (jobs/web-fetch/safe-fetch.ts) every hop goes through. */
  fetch: SafeFetch;
  /** The caller's signal (the job's): aborts the lookup when the caller gave up. */
  signal?: AbortSignal;
  userAgent?: string;
}

export type RdapOutcome =
  { kind: 'found'; url: string; object: Record<string, unknown> } | { kind: 'not_found'; url: string };

/** One RDAP domain query, redirects followed. Throws JobError for every failure. */
export async function fetchRdapDomain(
  baseUrl: string,
  asciiName: string,
  options: RdapFetchOptions,
): Promise<RdapOutcome> {
  const deadline = Date.now() + options.timeoutMs;
  let url = new URL(`domain/${encodeURIComponent(asciiName)}`, baseUrl).toString();
  const seen = new Set<string>();
  for (let hop = 0; ; hop++) {
    checkScheme(url, options.allowHttp, hop);
    seen.add(url);
    const res = await fetchHop(url, hop, deadline, options);
    if (res.status >= 300 && res.status < 400) {
      // Only a redirect the fetcher hands back (301/302/303/307/308 with a Location) gets here; statusError refused other 3xx.
      const location = String(res.headers.location);
      if (hop >= options.maxRedirects)
        throw new JobError('upstream_error', `RDAP lookup exceeded ${options.maxRedirects} redirects`, 502, {
          upstream: origin(url),
        });
      let next: string;
      try {
        next = new URL(location, url).toString();
      } catch {
        throw new JobError('upstream_error', `RDAP server ${origin(url)} redirected to an invalid URL`, 502, {
          upstream: origin(url),
          upstream_status: res.status,
        });
      }
      if (seen.has(next))
        throw new JobError('upstream_error', `RDAP redirect loop at ${origin(next)}`, 502, { upstream: origin(next) });
      url = next;
      continue;
    }
    if (res.status === 404) {
      if (hop === 0) return { kind: 'not_found', url };
      throw new JobError(
        'upstream_error',
        `the registry redirected to ${origin(url)}, which holds no such domain; availability is unknown`,
        502,
        { upstream: origin(url), upstream_status: 404 },
      );
    }
    if (res.status === 400 || res.status === 422) {
      const why = rdapErrorText(parseJson(res.body));
      throw new JobError('invalid_domain', `the registry refused the name${why ? `: ${why}` : ''}`, 400, {
        field: 'domain',
        upstream_status: res.status,
      });
    }
    // 200 with an RDAP JSON media type (the fetcher refused other statuses and types before reading).
    const body = parseJson(res.body);
    if (body === undefined)
      throw new JobError('upstream_error', `RDAP server ${origin(url)} answered invalid JSON`, 502, {
        upstream: origin(url),
      });
    if (!isRecord(body) || body.objectClassName !== 'domain') {
      throw new JobError(
        'upstream_error',
        `RDAP server ${origin(url)} answered something other than a domain object`,
        502,
        { upstream: origin(url) },
      );
    }
    return { kind: 'found', url, object: body };
  }
}

/**
 * One hop through the SSRF-safe fetcher. Statuses decided by the status line and headers alone (429, 5xx,
 * other 4xx, a 3xx that is not a followable redirect) are refused before the body is read; 200 (RDAP JSON
 * only), 404 and 400/422 bodies are read up to MAX_RDAP_BYTES; a redirect comes back with its Location.
 */
async function fetchHop(
  url: string,
  hop: number,
  deadline: number,
  options: RdapFetchOptions,
): Promise<FetchedResource> {
  let status = 0;
  let decided: JobError | undefined;
  try {
    return await options.fetch({
      url,
      field: 'domain',
      timeoutMs: Math.max(1, deadline - Date.now()),
      maxBytes: MAX_RDAP_BYTES,
      userAgent: options.userAgent ?? 'x402-gateway-domain-check/1.0',
      accept: ACCEPT,
      acceptMediaType: (type) => status !== 200 || (type !== null && RDAP_JSON.test(type)),
      acceptedDescription: 'application/rdap+json or application/json',
      signal: options.signal,
      redirect: 'manual',
      rejectStatus: (answered, _text, _url, headers) => {
        status = answered;
        decided = statusError(answered, url, headers);
        return decided;
      },
    });
  } catch (err) {
    if (err === decided) throw err;
    throw fetcherError(err, url, hop, options);
  }
}

function statusError(
  status: number,
  url: string,
  headers: Record<string, string | string[] | undefined>,
): JobError | undefined {
  if (status === 200 || status === 404 || status === 400 || status === 422) return undefined;
  if (status === 429) {
    const retryAfter = retryAfterSeconds(typeof headers['retry-after'] === 'string' ? headers['retry-after'] : null);
    return new JobError(
      'upstream_rate_limited',
      `RDAP server ${origin(url)} is rate limiting; retry after ${retryAfter} s`,
      503,
      { upstream: origin(url), retry_after_seconds: retryAfter },
    );
  }
  if (status >= 300 && status < 400 && status !== 304 && !headers.location) {
    return new JobError('upstream_error', `RDAP server ${origin(url)} answered ${status} without a Location`, 502, {
      upstream_status: status,
    });
  }
  return new JobError('upstream_error', `RDAP server ${origin(url)} answered HTTP ${status}`, 502, {
    upstream: origin(url),
    upstream_status: status,
  });
}

/** The fetcher's JobErrors in domain-check's vocabulary (jobs/domain-check/README.md). */
function fetcherError(err: unknown, url: string, hop: number, options: RdapFetchOptions): JobError {
  const upstream = origin(url);
  if (!(err instanceof JobError)) {
    if (options.signal?.aborted)
      return new JobError('job_cancelled', 'the caller no longer waits for this lookup', 504);
    return new JobError('upstream_error', `RDAP server ${upstream} unreachable: ${(err as Error).message}`, 502, {
      upstream,
    });
  }
  const details = err.details;
  switch (err.code) {
    case 'url_not_allowed': {
      const why = err.message.replace(/^.*? refused: /, '');
      return new JobError(
        'upstream_url_not_allowed',
        `RDAP ${hop ? `redirect ${hop}` : 'server'} ${upstream} refused: ${why}`,
        502,
        {
          upstream,
          hop,
          reason: details.reason,
          ...(details.address !== undefined ? { address: details.address } : {}),
          ...(details.embedded !== undefined ? { embedded: details.embedded } : {}),
        },
      );
    }
    case 'upstream_timeout':
      if (details.reason === 'aborted' && options.signal?.aborted)
        return new JobError('job_cancelled', 'the caller no longer waits for this lookup', 504);
      return new JobError(
        'upstream_timeout',
        `RDAP server ${upstream} did not answer within ${options.timeoutMs} ms`,
        504,
        { upstream, timeout_ms: options.timeoutMs },
      );
    case 'upstream_too_large':
      return new JobError('upstream_error', `RDAP answer exceeds ${MAX_RDAP_BYTES} bytes`, 502, { upstream });
    case 'unsupported_content_type': {
      const type = typeof details.content_type === 'string' ? details.content_type : '';
      return new JobError(
        'upstream_error',
        `RDAP server ${upstream} answered ${type || 'no content type'} instead of RDAP JSON`,
        502,
        { upstream },
      );
    }
    default: {
      // upstream_error: DNS (dns_not_found, dns_failure), connection (ECONNREFUSED, ...), content encoding.
      const reason = typeof details.reason === 'string' ? details.reason : err.code;
      const network = /^(dns_|E[A-Z_]+$)/.test(reason);
      return new JobError(
        'upstream_error',
        network ? `RDAP server ${upstream} unreachable: ${reason}` : `RDAP server ${upstream}: ${err.message}`,
        502,
        { upstream, reason },
      );
    }
  }
}

function checkScheme(url: string, allowHttp: boolean, hop: number): void {
  const protocol = new URL(url).protocol;
  if (protocol === 'https:' || (allowHttp && protocol === 'http:')) return;
  throw new JobError(
    'upstream_error',
    `RDAP ${hop ? 'redirect' : 'server'} to a ${protocol} URL refused (https only)`,
    502,
    { upstream: origin(url) },
  );
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** `Retry-After`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3); a default when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number {
  if (!header) return RETRY_AFTER_DEFAULT_S;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), 86_400);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return RETRY_AFTER_DEFAULT_S;
  return Math.max(1, Math.min(Math.ceil((at - now) / 1000), 86_400));
}

function rdapErrorText(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const description = Array.isArray(body.description)
    ? body.description.filter((d) => typeof d === 'string').join(' ')
    : '';
  const title = typeof body.title === 'string' ? body.title : '';
  return (description || title).slice(0, 200) || undefined;
}

const origin = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};
