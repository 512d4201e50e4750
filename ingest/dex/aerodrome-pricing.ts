/**
 * Aerodrome (Solidly-style) pool prices from reserves, pure bigint maths.
 *
 * Volatile pools follow x*y = k: the marginal price of the base token is the
 * reserve ratio. Stable pools follow x^3*y + y^3*x = k on reserves
 * normalised to 18 decimals; the marginal price is the curve's slope
 * -dy/dx = (3x^2*y + y^3) / (x^3 + 3x*y^2), with x the base reserve.
 * Executable prices for sizes come from the pool's own `getAmountOut`, which
 * applies the fee and the exact curve.
 */
import { ratioToNumber } from './uniswap-v3-pricing.js';

const pow10 = (n: number): bigint => 10n ** BigInt(n);

export interface ReservesInput {
  reserveBase: bigint;
  reserveQuote: bigint;
  baseDecimals: number;
  quoteDecimals: number;
  stable: boolean;
}

/** Marginal price of one base token in quote tokens, as an exact rational. */
export function reservesMidRatio(r: ReservesInput): { num: bigint; den: bigint } {
  if (r.reserveBase <= 0n || r.reserveQuote <= 0n) throw new Error('empty reserves');
  if (!r.stable) {
    return { num: r.reserveQuote * pow10(r.baseDecimals), den: r.reserveBase * pow10(r.quoteDecimals) };
  }
  const x = (r.reserveBase * 10n ** 18n) / pow10(r.baseDecimals);
  const y = (r.reserveQuote * 10n ** 18n) / pow10(r.quoteDecimals);
  return { num: 3n * x * x * y + y * y * y, den: x * x * x + 3n * x * y * y };
}

export function reservesMidPrice(r: ReservesInput): number {
  const { num, den } = reservesMidRatio(r);
  return ratioToNumber(num, den);
}

/** Raw base units worth `quoteRaw` raw quote units at a price given as a rational (quote per base, human units), rounded down. */
export function quoteToBaseAtPrice(
  quoteRaw: bigint,
  price: { num: bigint; den: bigint },
  quoteDecimals: number,
  baseDecimals: number,
): bigint {
  return (quoteRaw * pow10(baseDecimals) * price.den) / (price.num * pow10(quoteDecimals));
}
