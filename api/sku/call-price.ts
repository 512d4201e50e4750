/**
 * The price of one call: the one place every door reads it from. A SKU's
 * catalogue price (`PricedSku.priceAtomic`: its default or PRICE_OVERRIDES)
 * is the price of one unit; a call buys one unit unless its pre-flight says
 * otherwise (a telemetry range query buys one unit per slice it answers:
 * api/telemetry/range-query.ts). The pre-flight runs before the 402
 * challenge, so the price is known before any challenge is issued:
 *
 *   price = unit price x units, capped at MAX_PRICE_ATOMIC (the spec's 0.2 USD a call)
 *
 * A call that buys no unit (0: a paid stream resumed with its token, api/telemetry/stream/) costs
 * nothing: the HTTP door does not challenge it.
 *
 * The admission step sets it on the call (`SkuCall.priceAtomic`,
 * api/paid-call/admission.ts); the HTTP door (api/router.ts) and the one-shot
 * doors (api/paid-call/paid-call.ts: MCP, A2A) charge it through `pricedRoute`, so the challenge's `amount`, the payment's
 * binding and the `price_atomic` of a 402 all say the same number.
 */
import { MAX_PRICE_ATOMIC } from './price-bounds.js';
import type { PaidRoute } from '../payment/paid-route.js';

/** What a pre-flight hands on when its call buys more than one unit. */
export interface PricedPreparation {
  /** Units the call buys (0: none, the call is already paid for). */
  readonly priceUnits: number;
}

function unitsOf(prepared: unknown): number {
  const units = (prepared as Partial<PricedPreparation> | null | undefined)?.priceUnits;
  return typeof units === 'number' && Number.isInteger(units) && units >= 0 ? units : 1;
}

/** The price of a call (atomic USDC) from its SKU's unit price and what its pre-flight prepared. */
export function callPriceAtomic(unitPriceAtomic: string, prepared: unknown): string {
  const units = unitsOf(prepared);
  if (unitPriceAtomic === '0' || units === 0) return '0';
  return priceOfUnits(unitPriceAtomic, units);
}

/** `units` units at `unitPriceAtomic`, capped at the spec's bound (the price a discovery document quotes for a span). */
export function priceOfUnits(unitPriceAtomic: string, units: number): string {
  const total = BigInt(unitPriceAtomic) * BigInt(Math.max(1, Math.floor(units)));
  return (total > MAX_PRICE_ATOMIC ? MAX_PRICE_ATOMIC : total).toString();
}

/**
 * The route a call is charged on: the route itself at its catalogue price, else one variant per price, built once
 * (the challenges are cached per route object: api/payment/challenge.ts) — at most one per unit count up to the cap.
 */
const variants = new WeakMap<PaidRoute, Map<string, PaidRoute>>();

export function pricedRoute(route: PaidRoute, priceAtomic: string): PaidRoute {
  if (priceAtomic === route.priceAtomic) return route;
  let byPrice = variants.get(route);
  if (!byPrice) variants.set(route, (byPrice = new Map()));
  let variant = byPrice.get(priceAtomic);
  if (!variant) byPrice.set(priceAtomic, (variant = { ...route, priceAtomic }));
  return variant;
}
