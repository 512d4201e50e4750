/**
 * The IANA RDAP bootstrap registry for domain names (RFC 9224, the
 * `https://data.iana.org/rdap/dns.json` format): `services` is a list of
 * `[[labels...], [base URLs...]]`. A name's service is the entry with the
 * longest matching label suffix (RFC 9224 §4: in practice the TLD).
 *
 * A shipped snapshot (`iana-rdap-dns.json` next to this file, or
 * RDAP_BOOTSTRAP_FILE) is loaded at start-up, then refreshed from
 * RDAP_BOOTSTRAP_URL every RDAP_BOOTSTRAP_REFRESH_MS. A refresh that fails
 * (network, HTTP status, invalid document, an older publication) keeps the
 * last good copy and is logged; each loaded copy's publication date is logged
 * and readable from `info()`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { errorMessage } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';

export const DEFAULT_BOOTSTRAP_FILE = fileURLToPath(new URL('./iana-rdap-dns.json', import.meta.url));

/** The TLDs the shipped snapshot serves (lower-case A-labels): what the input's JSON Schema can promise. */
export function shippedTlds(): string[] {
  const doc = BootstrapDocument.parse(JSON.parse(readFileSync(DEFAULT_BOOTSTRAP_FILE, 'utf8')));
  return [...new Set(doc.services.flatMap(([labels]) => labels.map((l) => l.toLowerCase())))].sort();
}

/** RFC 9224 §3/§5: version, publication, optional description, services. Unknown members are ignored. */
export const BootstrapDocument = z.object({
  version: z.string(),
  publication: z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an RFC 3339 date-time'),
  description: z.string().optional(),
  services: z.array(z.tuple([z.array(z.string()), z.array(z.string())])),
});
export type BootstrapDocument = z.infer<typeof BootstrapDocument>;

/** Largest bootstrap document accepted on refresh (IANA's file is about 90 KB). */
const MAX_BOOTSTRAP_BYTES = 4 * 1024 * 1024;

export interface BootstrapInfo {
  publication: string;
  /** File path or URL the loaded copy came from. */
  origin: string;
  loadedAt: string;
  labels: number;
  lastRefreshAttemptAt?: string;
  lastRefreshError?: string;
}

export interface ParsedBootstrap {
  publication: string;
  /** Lower-case label suffix (`com`, `co.uk`) -> base URLs, in the document's order, each ending in `/`. */
  services: Map<string, string[]>;
}

export function parseBootstrap(raw: unknown): ParsedBootstrap {
  const doc = BootstrapDocument.parse(raw);
  if (!doc.version.startsWith('1.')) throw new Error(`unsupported bootstrap version ${doc.version}`);
  const services = new Map<string, string[]>();
  for (const [labels, urls] of doc.services) {
    const bases = urls.filter((u) => /^https?:\/\//i.test(u)).map((u) => (u.endsWith('/') ? u : `${u}/`));
    if (!bases.length) continue;
    for (const label of labels) {
      const key = label.toLowerCase().replace(/^\.+|(?<!\.)\.+$/g, ''); // the lookbehind: one try per run of dots
      if (key && !services.has(key)) services.set(key, bases);
    }
  }
  if (!services.size) throw new Error('the bootstrap document lists no service');
  return { publication: doc.publication, services };
}

export interface BootstrapRegistryOptions {
  file: string;
  url: string;
  refreshMs: number;
  /** Accept `http:` base URLs (test configuration only); otherwise only `https:` ones are used. */
  allowHttp: boolean;
  logger: Logger;
  timeoutMs?: number;
}

export class BootstrapRegistry {
  private current: ParsedBootstrap;
  private meta: BootstrapInfo;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<boolean> | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly options: BootstrapRegistryOptions) {
    this.current = parseBootstrap(JSON.parse(readFileSync(options.file, 'utf8')));
    this.meta = {
      publication: this.current.publication,
      origin: options.file,
      loadedAt: new Date().toISOString(),
      labels: this.current.services.size,
    };
    options.logger.info(
      { publication: this.meta.publication, origin: options.file, labels: this.meta.labels },
      'rdap bootstrap: snapshot loaded',
    );
  }

  /** Starts the scheduled refresh (first one right away in the background). */
  start(): void {
    if (this.options.refreshMs <= 0 || this.timer) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.abort.abort();
  }

  info(): BootstrapInfo {
    return { ...this.meta };
  }

  /** Fetches RDAP_BOOTSTRAP_URL; true when a newer (or equal) copy replaced the current one. Never throws. */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async doRefresh(): Promise<boolean> {
    const { url, logger } = this.options;
    this.meta.lastRefreshAttemptAt = new Date().toISOString();
    try {
      const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.timeoutMs ?? 30_000)]);
      const res = await fetch(url, { headers: { accept: 'application/json' }, signal, redirect: 'follow' });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const length = Number(res.headers.get('content-length') ?? 0);
      if (length > MAX_BOOTSTRAP_BYTES) throw new Error(`document of ${length} bytes exceeds ${MAX_BOOTSTRAP_BYTES}`);
      const text = await res.text();
      if (text.length > MAX_BOOTSTRAP_BYTES) throw new Error(`document exceeds ${MAX_BOOTSTRAP_BYTES} bytes`);
      const next = parseBootstrap(JSON.parse(text));
      if (Date.parse(next.publication) < Date.parse(this.current.publication)) {
        throw new Error(`publication ${next.publication} is older than the loaded ${this.current.publication}`);
      }
      this.current = next;
      this.meta = {
        publication: next.publication,
        origin: url,
        loadedAt: new Date().toISOString(),
        labels: next.services.size,
        lastRefreshAttemptAt: this.meta.lastRefreshAttemptAt,
      };
      logger.info(
        { publication: next.publication, origin: url, labels: next.services.size },
        'rdap bootstrap: refreshed',
      );
      return true;
    } catch (err) {
      this.meta.lastRefreshError = errorMessage(err);
      if (!this.abort.signal.aborted) {
        logger.warn(
          { url, error: errorMessage(err), kept_publication: this.current.publication },
          'rdap bootstrap: refresh failed, keeping the last good copy',
        );
      }
      return false;
    }
  }

  /**
   * Base URLs serving an ASCII (A-label) domain name, best first: the entry
   * with the longest matching label suffix; `https:` URLs first, `http:`
   * only when allowed. Empty when no service covers the name.
   */
  lookup(asciiName: string): string[] {
    const labels = asciiName.toLowerCase().split('.');
    for (let i = 1; i < labels.length; i++) {
      const bases = this.current.services.get(labels.slice(i).join('.'));
      if (bases) {
        const https = bases.filter((b) => b.toLowerCase().startsWith('https:'));
        const http = this.options.allowHttp ? bases.filter((b) => b.toLowerCase().startsWith('http:')) : [];
        return [...https, ...http];
      }
    }
    return [];
  }
}
