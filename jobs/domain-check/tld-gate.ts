/**
 * domain-check's refusals before the payment challenge (issue 14): what the
 * API can know without asking a registry.
 *
 *  - `domainSyntaxRefusal`: the name's syntax (domain-name.ts rules: IDNA,
 *    LDH labels, two labels at least, a registrable name, not a bare public
 *    suffix such as `co.uk`) -> `invalid_domain`; used by the input schema.
 *  - `tldRefusal`: the TLD has no RDAP service in the bootstrap registry the
 *    configuration names (RDAP_BOOTSTRAP_FILE, refreshed from
 *    RDAP_BOOTSTRAP_URL like the worker's copy) -> `tld_not_supported`; a TLD
 *    that does not exist (`example.notatld`) has no service either. Used by
 *    the SKU's pre-flight, which has the configuration.
 *
 * The worker keeps the same checks (its copy of the bootstrap is the one it
 * queries), so a request that slipped through a stale API copy is still
 * refused, unpaid.
 */
import { pino } from 'pino';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import { AppError } from '../../core/errors.js';
import { BootstrapRegistry, DEFAULT_BOOTSTRAP_FILE } from './bootstrap.js';
import { normaliseDomain, tldOf } from './domain-name.js';

/** The syntax problem of a domain input as a code and message, or undefined when it is a registrable name. */
export function domainSyntaxRefusal(raw: string): { code: string; message: string } | undefined {
  try {
    normaliseDomain(raw);
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, message: err.message };
    throw err;
  }
}

type GateConfig = Pick<
  Config,
  'RDAP_BOOTSTRAP_FILE' | 'RDAP_BOOTSTRAP_URL' | 'RDAP_BOOTSTRAP_REFRESH_MS' | 'RDAP_ALLOW_HTTP'
>;

/** One registry per bootstrap configuration in this process (the API role's copy), refreshed on its schedule. */
const registries = new Map<string, BootstrapRegistry>();

function registryFor(config: GateConfig, logger: Logger | undefined): BootstrapRegistry {
  const file = config.RDAP_BOOTSTRAP_FILE ?? DEFAULT_BOOTSTRAP_FILE;
  const key = `${file}\u0000${config.RDAP_BOOTSTRAP_URL}\u0000${config.RDAP_BOOTSTRAP_REFRESH_MS}\u0000${config.RDAP_ALLOW_HTTP}`;
  let registry = registries.get(key);
  if (!registry) {
    registry = new BootstrapRegistry({
      file,
      url: config.RDAP_BOOTSTRAP_URL,
      refreshMs: config.RDAP_BOOTSTRAP_REFRESH_MS,
      allowHttp: config.RDAP_ALLOW_HTTP,
      logger: logger ?? silentLogger,
    });
    registry.start();
    registries.set(key, registry);
  }
  return registry;
}

const silentLogger: Logger = pino({ enabled: false });

/** A 400 `tld_not_supported` (field `domain`, `tld`) when no RDAP service covers the name's TLD; undefined otherwise. */
export function tldRefusal(raw: string, config: GateConfig, logger?: Logger): AppError | undefined {
  const name = normaliseDomain(raw);
  const registry = registryFor(config, logger);
  if (registry.lookup(name.ascii).length) return undefined;
  const tld = tldOf(name.ascii);
  return new AppError(
    'tld_not_supported',
    `.${tld} has no RDAP service in the IANA bootstrap registry (published ${registry.info().publication}); it is not a top-level domain with RDAP`,
    400,
    {
      field: 'domain',
      tld,
    },
  );
}
