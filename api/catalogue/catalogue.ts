/**
 * The catalogue: the spec's 17 routes, in the order of its route table (the
 * job SKUs of sku-list.ts, then the telemetry SKUs), with each price taken
 * from PRICE_OVERRIDES (core/config.ts) or the SKU's default. It adds nothing
 * to a SKU's contract. Everything public is generated from it: the router (api/router.ts),
 * the x402 route config of each paid route, and the discovery documents
 * (api/discovery/).
 *
 * Built once at start-up; it refuses (throws ConfigError) an override of an
 * unknown or free route, a paid price outside the advertised bounds
 * (0.0000015-0.2 USD: 2-200000 atomic units, 1.5 rounded up to a whole unit),
 * and an example that does not validate against its own schema.
 */
import type { Config } from '../../core/config.js';
import { ConfigError } from '../../core/config.js';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import type { JobSku } from '../../jobs/job-sku.js';
import { jobSkuEntry } from './job-sku-route.js';
import type { Catalogue, PricedSku, Sku } from '../sku/sku.js';
import type { TelemetrySku } from '../telemetry/telemetry-sku.js';
import { JOB_SKUS, TELEMETRY_SKUS } from './sku-list.js';

import { MAX_PRICE_ATOMIC, MIN_PRICE_ATOMIC } from '../sku/price-bounds.js';

export { MAX_PRICE_ATOMIC, MIN_PRICE_ATOMIC } from '../sku/price-bounds.js';

export interface CatalogueDeps {
  config: Pick<Config, 'PRICE_OVERRIDES' | 'CEX_EXCHANGE'> & Partial<Pick<Config, 'SKUS_DISABLED'>>;
  pairs: PairsCatalogue;
  /** The job SKUs to serve; default the catalogue's list (sku-list.ts). Tests add a fixture SKU here. */
  jobSkus?: readonly JobSku[];
  /** The telemetry SKUs to serve; default the catalogue's list (sku-list.ts). */
  telemetrySkus?: readonly TelemetrySku[];
}

/** Every declared SKU with its spec default price: the job SKUs of the list, then the telemetry SKUs. */
export function declaredSkus(deps: CatalogueDeps): Sku[] {
  return [
    ...(deps.jobSkus ?? JOB_SKUS).map(jobSkuEntry),
    ...(deps.telemetrySkus ?? TELEMETRY_SKUS).map((sku) => sku(deps)),
  ];
}

/** Whether an atomic price is a legal paid price (2..200000). */
export function isLegalPaidPrice(atomic: string): boolean {
  if (!/^\d+$/.test(atomic)) return false;
  const v = BigInt(atomic);
  return v >= MIN_PRICE_ATOMIC && v <= MAX_PRICE_ATOMIC;
}

export function buildCatalogue(deps: CatalogueDeps): Catalogue {
  const skus = declaredSkus(deps);
  const problems: string[] = [];
  const overrides = deps.config.PRICE_OVERRIDES ?? {};
  const known = new Map(skus.map((s) => [s.id, s]));
  for (const [id, price] of Object.entries(overrides)) {
    const sku = known.get(id);
    if (!sku) problems.push(`PRICE_OVERRIDES: unknown route id "${id}" (known: ${[...known.keys()].join(', ')})`);
    else if (sku.free) problems.push(`PRICE_OVERRIDES: "${id}" is a free route (the spec keeps it ungated)`);
    else if (!isLegalPaidPrice(price)) {
      problems.push(
        `PRICE_OVERRIDES: "${id}"="${price}" is outside ${MIN_PRICE_ATOMIC}..${MAX_PRICE_ATOMIC} atomic units (0.0000015-0.2 USD)`,
      );
    }
  }

  const disabled = new Set(deps.config.SKUS_DISABLED ?? []);
  for (const id of disabled)
    if (!known.has(id))
      problems.push(`SKUS_DISABLED: unknown route id "${id}" (known: ${[...known.keys()].join(', ')})`);

  const seenRoutes = new Set<string>();
  const priced: PricedSku[] = skus.map((sku) => {
    const priceAtomic = sku.free ? '0' : (overrides[sku.id] ?? sku.defaultPriceAtomic);
    if (!sku.free && !isLegalPaidPrice(priceAtomic))
      problems.push(`${sku.id}: price ${priceAtomic} is outside ${MIN_PRICE_ATOMIC}..${MAX_PRICE_ATOMIC} atomic units`);
    if (sku.free && sku.defaultPriceAtomic !== '0') problems.push(`${sku.id}: a free route must have price 0`);
    for (const method of sku.alsoPost ? [sku.method, 'POST'] : [sku.method]) {
      const key = `${method} ${sku.path}`;
      if (seenRoutes.has(key)) problems.push(`${sku.id}: duplicate route ${key}`);
      seenRoutes.add(key);
    }
    const example = sku.output.safeParse(sku.example);
    if (!example.success)
      problems.push(
        `${sku.id}: example does not match the output schema: ${example.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    const exampleInput = sku.input.safeParse(sku.exampleInput);
    if (!exampleInput.success)
      problems.push(
        `${sku.id}: example input does not match the input schema: ${exampleInput.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    return { ...sku, priceAtomic, available: sku.available && !disabled.has(sku.id) } as PricedSku;
  });
  if (problems.length) throw new ConfigError(problems);

  const index = new Map(priced.map((s) => [s.id, s]));
  return { skus: priced, byId: (id) => index.get(id) };
}
