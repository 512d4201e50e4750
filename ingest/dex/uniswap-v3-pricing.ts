/**
 * Uniswap v3 price maths, pure functions over bigints.
 *
 * A pool stores `sqrtPriceX96 = sqrt(reserve-free price of token0 in token1,
 * in raw units) * 2^96`. The price of the pair's base token in its quote token
 * (USDC) therefore depends on which of the two is token0 (the lower address)
 * and on both tokens' decimals:
 *
 *   base is token0: price = sqrtP^2 / 2^192 * 10^(baseDecimals - quoteDecimals)
 *   base is token1: price = 2^192 / sqrtP^2 * 10^(baseDecimals - quoteDecimals)
 *
 * Everything stays an exact rational (bigint numerator / denominator) until
 * the last step, which rounds once to a double; amounts (token units sent to
 * the quoter) stay exact bigints.
 */

export const Q96 = 2n ** 96n;
export const Q192 = Q96 * Q96;
/** TickMath bounds: a swap that reaches them ran out of liquidity. */
export const MIN_SQRT_RATIO = 4295128739n;
export const MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342n;

/** Which side of the pool the pair's base token sits on, and both tokens' decimals. */
export interface PoolOrientation {
  baseIsToken0: boolean;
  baseDecimals: number;
  quoteDecimals: number;
}

/** Uniswap orders a pool's tokens by address: token0 is the numerically lower one. */
export function sortsBefore(a: string, b: string): boolean {
  const x = BigInt(a);
  const y = BigInt(b);
  if (x === y) throw new Error(`identical token addresses ${a}`);
  return x < y;
}

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/**
 * Exact rational num/den rounded to the nearest double: the quotient is taken
 * with 21 significant digits in bigint arithmetic, then parsed once (the
 * decimal parser rounds correctly), so no intermediate double loses bits.
 */
export function ratioToNumber(num: bigint, den: bigint): number {
  if (den === 0n) throw new Error('division by zero');
  if (num === 0n) return 0;
  const negative = num < 0n !== den < 0n;
  const n = num < 0n ? -num : num;
  const d = den < 0n ? -den : den;
  const shift = 21 - (n.toString().length - d.toString().length);
  const q = shift >= 0 ? (n * pow10(shift)) / d : n / (d * pow10(-shift));
  const value = Number.parseFloat(`${q.toString()}e${-shift}`);
  return negative ? -value : value;
}

/** The price of one base token in quote tokens as an exact rational. */
export function sqrtPriceX96ToPriceRatio(sqrtPriceX96: bigint, o: PoolOrientation): { num: bigint; den: bigint } {
  if (sqrtPriceX96 <= 0n) throw new Error(`sqrtPriceX96 must be positive, got ${sqrtPriceX96}`);
  const squared = sqrtPriceX96 * sqrtPriceX96;
  const up = pow10(Math.max(0, o.baseDecimals - o.quoteDecimals));
  const down = pow10(Math.max(0, o.quoteDecimals - o.baseDecimals));
  return o.baseIsToken0 ? { num: squared * up, den: Q192 * down } : { num: Q192 * up, den: squared * down };
}

/** The price of one base token in quote tokens (e.g. USDC per WETH), decimals and token order applied. */
export function sqrtPriceX96ToPrice(sqrtPriceX96: bigint, o: PoolOrientation): number {
  const { num, den } = sqrtPriceX96ToPriceRatio(sqrtPriceX96, o);
  return ratioToNumber(num, den);
}

/**
 * How many raw base units `quoteRaw` raw quote units are worth at the pool
 * price (no fee, no impact), rounded down. Used to size the sell side of the
 * ladder: selling `size_usd / mid` base.
 */
export function quoteToBaseAmount(quoteRaw: bigint, sqrtPriceX96: bigint, baseIsToken0: boolean): bigint {
  const squared = sqrtPriceX96 * sqrtPriceX96;
  // token1 per token0 (raw) = sqrtP^2 / 2^192.
  return baseIsToken0 ? (quoteRaw * Q192) / squared : (quoteRaw * squared) / Q192;
}

/** Price per base token of a fill: `quoteRaw` quote units against `baseRaw` base units. */
export function executionPrice(quoteRaw: bigint, baseRaw: bigint, quoteDecimals: number, baseDecimals: number): number {
  if (baseRaw <= 0n) throw new Error('base amount must be positive');
  return ratioToNumber(quoteRaw * pow10(baseDecimals), baseRaw * pow10(quoteDecimals));
}

/** A non-negative decimal (number or string such as `"3000.25"`) in raw units of a token with `decimals`, rounded down. */
export function toRawAmount(value: number | string, decimals: number): bigint {
  const { num, den } = parseDecimal(value);
  return (num * pow10(decimals)) / den;
}

/** Integer square root (floor), Newton's method from a guess above the root (decreases monotonically). */
export function bigintSqrt(n: bigint): bigint {
  if (n < 0n) throw new Error('square root of a negative number');
  if (n < 2n) return n;
  let x = 1n << BigInt((n.toString(2).length >> 1) + 1);
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/**
 * The sqrtPriceX96 at which one base token costs `price` quote tokens
 * (floor of the exact value). Used to initialise test pools; inverse of
 * sqrtPriceX96ToPrice up to that rounding.
 */
export function priceToSqrtPriceX96(price: number | string, o: PoolOrientation): bigint {
  const { num, den } = parseDecimal(price);
  if (num === 0n) throw new Error('price must be positive');
  // token1 per token0 in raw units, as a rational.
  const up = pow10(Math.max(0, o.quoteDecimals - o.baseDecimals));
  const down = pow10(Math.max(0, o.baseDecimals - o.quoteDecimals));
  const [rNum, rDen] = o.baseIsToken0 ? [num * up, den * down] : [den * down, num * up];
  return bigintSqrt((rNum * Q192) / rDen);
}

/** Exact rational of a decimal given as a number (via its shortest round-trip string) or a string. */
export function parseDecimal(value: number | string): { num: bigint; den: bigint } {
  const text = typeof value === 'number' ? numberToPlainString(value) : value.trim();
  const m = /^(\d+)(?:\.(\d*))?$/.exec(text);
  if (!m) throw new Error(`not a non-negative decimal: ${String(value)}`);
  const frac = m[2] ?? '';
  return { num: BigInt(`${m[1]}${frac}`), den: pow10(frac.length) };
}

function numberToPlainString(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new Error(`not a non-negative finite number: ${value}`);
  const s = String(value);
  if (!/e/i.test(s)) return s;
  // 1e-7, 1.5e+21: expand the exponent without going through a lossy toFixed.
  const [mantissa = '', expText = '0'] = s.toLowerCase().split('e');
  const exp = Number(expText);
  const [int = '', frac = ''] = mantissa.split('.');
  const digits = int + frac;
  const point = int.length + exp;
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}
