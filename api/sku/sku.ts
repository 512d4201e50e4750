/**
 * A SKU: one public route of the gateway, declared once. The router, the x402
 * route config (and so the 402 challenge), `/api/v1/discovery`, `/openapi.json`,
 * `/agents.md`, `/skill.md`, `/llms.txt` and the `.well-known` documents are all
 * generated from the catalogue of SKUs (api/catalogue/catalogue.ts). A SKU is its public
 * contract (core/sku-contract.ts) plus what serves it: availability, an
 * optional pre-flight and the handler.
 */
import type { SkuContract } from '../../core/sku-contract.js';
import type { AppError } from '../../core/errors.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import type { PairsCatalogue } from '../../core/markets/pairs.js';
import type { Store } from '../../core/store/store.js';
import type { JobQueue } from '../../core/queue/queue.js';

export { CATEGORIES, type Category, type HttpMethod } from '../../core/sku-contract.js';

/** What a handler reads at run time (the catalogue itself is static). */
export interface SkuRuntime {
  store: Store;
  config: Config;
  pairs: PairsCatalogue;
  catalogue: Catalogue;
  /** The queue port: job SKUs run their processors through it. */
  queue?: JobQueue;
  log?: Logger;
  /** Wall clock (ms); injectable for tests. */
  now(): number;
  /** Aborted when the process starts draining (SIGTERM): long answers (streams) end early and say so. */
  stopping?: AbortSignal;
  /**
   * Whether what the SKU needs (store, queue, workers) can serve it right now: undefined when it can, else the 503
   * answered by the availability step (api/paid-call/admission.ts), before any challenge and never charged.
   */
  readiness?(sku: PricedSku): AppError | undefined | Promise<AppError | undefined>;
}

/** One call of a SKU: the validated input, the runtime, and the price this call is charged (after overrides). */
export interface SkuCall<I> {
  input: I;
  runtime: SkuRuntime;
  /** Price of the route in atomic USDC ("0" for free routes). */
  priceAtomic: string;
}

/**
 * `I`: validated input (the input schema's output); `O`: the 200 body;
 * `P`: what the pre-flight hands to the handler (e.g. the resolved time window).
 * Methods (not function properties) so a concrete SKU is assignable to `Sku`.
 */
export interface SkuDefinition<I = unknown, O = unknown, P = unknown> extends SkuContract<I, O> {
  /** False: declared (schemas, price, docs) but not served yet; answers 503 `sku_unavailable` before any challenge. */
  available: boolean;
  /** Checks that need data (coverage, a fresh book); throws an AppError (404/503, never charged). Runs before the 402 challenge. */
  preflight?(call: SkuCall<I>): Promise<P>;
  handler(call: SkuCall<I>, prepared: P): Promise<O>;
}

/** A SKU with its types erased, as the catalogue holds it. */
export type Sku = SkuDefinition<unknown, unknown, unknown>;

/** Keeps the SKU's own types while checking it, and erases them for the catalogue list. */
export function defineSku<I, O, P = undefined>(sku: SkuDefinition<I, O, P>): Sku {
  return sku as unknown as Sku;
}

/** A catalogue entry with its effective price (default or override). */
export interface PricedSku extends Sku {
  priceAtomic: string;
}

export interface Catalogue {
  skus: readonly PricedSku[];
  byId(id: string): PricedSku | undefined;
}
