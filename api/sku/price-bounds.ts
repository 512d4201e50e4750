/**
 * The spec's bounds on the price of one paid call: at least 0.0000015 USD, at most 0.2 USD, in USDC atomic units
 * (6 decimals). The catalogue refuses a route price outside them (api/catalogue/catalogue.ts, which re-exports
 * them), and a call that buys several units never costs more than the upper one (call-price.ts).
 */

/** 0.0000015 USD is 1.5 atomic units: the smallest legal whole price is 2. */
export const MIN_PRICE_ATOMIC = 2n;
/** 0.2 USD. */
export const MAX_PRICE_ATOMIC = 200_000n;
