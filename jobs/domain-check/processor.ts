/**
 * domain-check: RDAP lookup of a domain routed through the IANA bootstrap
 * registry (bootstrap.ts), answered in the spec's domain-check record
 * (jobs/domain-check/README.md).
 *
 * name -> punycode + registrable domain (domain-name.ts) -> RDAP base URL of
 * its TLD (400 `tld_not_supported` when the registry lists none) -> `GET
 * {base}domain/{name}` (rdap.ts, every hop through the SSRF-safe fetcher of
 * jobs/web-fetch) -> registered record, or `available: true` when the
 * registry answers 404.
 */
import type { DomainCheckRequest } from './sku.js';
import { JobError } from '../../core/queue/queue.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { createSafeFetch, fetcherSettingsFromConfig } from '../web-fetch/safe-fetch.js';
import { BootstrapRegistry, DEFAULT_BOOTSTRAP_FILE } from './bootstrap.js';
import { normaliseDomain, tldOf } from './domain-name.js';
import { fetchRdapDomain, mapDomainObject, type RdapDomainFields } from './rdap.js';

export interface DomainCheckResult extends RdapDomainFields {
  success: true;
  domain: string;
  available: boolean;
  source: 'rdap';
  rdapServer: string;
  unicodeName?: string;
}

export const createDomainCheckProcessor: ProcessorFactory<DomainCheckRequest, DomainCheckResult> = async ({
  config,
  logger,
}) => {
  const bootstrap = new BootstrapRegistry({
    file: config.RDAP_BOOTSTRAP_FILE ?? DEFAULT_BOOTSTRAP_FILE,
    url: config.RDAP_BOOTSTRAP_URL,
    refreshMs: config.RDAP_BOOTSTRAP_REFRESH_MS,
    allowHttp: config.RDAP_ALLOW_HTTP,
    logger,
  });
  bootstrap.start();
  // Every RDAP hop goes through the SSRF-safe fetcher (rdap.ts follows redirects itself: `maxRedirects` is unused).
  // Loopback is for tests only: FETCH_ALLOW_LOOPBACK, or RDAP_ALLOW_HTTP, which exists for loopback test
  // registries; the config refuses both unless NODE_ENV=test (core/config.ts).
  const fetch = createSafeFetch({
    ...fetcherSettingsFromConfig(config),
    allowLoopback: config.FETCH_ALLOW_LOOPBACK || config.RDAP_ALLOW_HTTP,
    maxRedirects: 0,
  });

  return {
    handle: async (input, ctx) => {
      const name = normaliseDomain(input.domain);
      const bases = bootstrap.lookup(name.ascii);
      const base = bases[0];
      if (!base) {
        const tld = tldOf(name.ascii);
        throw new JobError(
          'tld_not_supported',
          `.${tld} has no RDAP service in the IANA bootstrap registry (published ${bootstrap.info().publication})`,
          400,
          {
            field: 'domain',
            tld,
          },
        );
      }
      const outcome = await fetchRdapDomain(base, name.ascii, {
        timeoutMs: Math.max(1, Math.min(config.RDAP_TIMEOUT_MS, ctx.deadline - Date.now())),
        maxRedirects: config.RDAP_MAX_REDIRECTS,
        allowHttp: config.RDAP_ALLOW_HTTP,
        fetch,
        signal: ctx.signal,
      });
      const fields = outcome.kind === 'found' ? mapDomainObject(outcome.object) : undefined;
      // Spec fields first, in the spec's order; then the extras.
      return {
        success: true,
        domain: name.ascii,
        available: !fields,
        status: fields?.status ?? 'AVAILABLE',
        registeredDate: fields?.registeredDate ?? null,
        expirationDate: fields?.expirationDate ?? null,
        lastUpdated: fields?.lastUpdated ?? null,
        registrar: fields?.registrar ?? null,
        nameservers: fields?.nameservers ?? [],
        handle: fields?.handle ?? null,
        source: 'rdap',
        rdapStatus: fields?.rdapStatus ?? [],
        rdapServer: new URL(outcome.url).origin,
        ...(name.unicode ? { unicodeName: name.unicode } : {}),
      };
    },
    close: async () => {
      bootstrap.stop();
    },
  };
};
