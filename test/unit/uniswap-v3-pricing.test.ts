/**
 * Uniswap v3 price maths with numbers worked out by hand (derivations in the
 * comments), for WETH(18)/USDC(6) with USDC on either side of the pool.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_SQRT_RATIO,
  MIN_SQRT_RATIO,
  Q96,
  bigintSqrt,
  executionPrice,
  parseDecimal,
  priceToSqrtPriceX96,
  quoteToBaseAmount,
  ratioToNumber,
  sortsBefore,
  sqrtPriceX96ToPrice,
  sqrtPriceX96ToPriceRatio,
  toRawAmount,
} from '../../ingest/dex/uniswap-v3-pricing.js';

/** WETH is token0 (as on Base: 0x4200…0006 < USDC 0x8335…2913): the pool's price is USDC per WETH. */
const wethToken0 = { baseIsToken0: true, baseDecimals: 18, quoteDecimals: 6 };
/** USDC is token0 (as on Ethereum mainnet: USDC 0xA0b8… < WETH 0xC02a…): the pool's price is WETH per USDC. */
const wethToken1 = { baseIsToken0: false, baseDecimals: 18, quoteDecimals: 6 };

const rel = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);

describe('sqrtPriceX96ToPrice', () => {
  it('WETH token0: sqrtP = 2^80 means raw price 2^-32 USDC-units per wei, i.e. 10^12 / 2^32 USDC per WETH', () => {
    // (2^80 / 2^96)^2 = 2^-32 raw; * 10^(18-6) = 10^12 / 4294967296 = 232.83064365386962890625 exactly.
    expect(sqrtPriceX96ToPrice(2n ** 80n, wethToken0)).toBe(232.83064365386962890625);
    expect(sqrtPriceX96ToPriceRatio(2n ** 80n, wethToken0)).toEqual({ num: 2n ** 160n * 10n ** 12n, den: 2n ** 192n });
  });

  it('WETH token1: sqrtP = 2^112 means 2^32 wei per USDC-unit, i.e. the same 10^12 / 2^32 USDC per WETH', () => {
    // token1 per token0 = (2^112 / 2^96)^2 = 2^32 wei per 1e-6 USDC; inverted: 2^-32 USDC-units per wei; * 10^12.
    expect(sqrtPriceX96ToPrice(2n ** 112n, wethToken1)).toBe(232.83064365386962890625);
  });

  it('sqrtP = 2^96 (raw price 1) is 10^12 USDC per WETH either way round', () => {
    expect(sqrtPriceX96ToPrice(Q96, wethToken0)).toBe(1e12);
    expect(sqrtPriceX96ToPrice(Q96, wethToken1)).toBe(1e12);
  });

  it('WETH at 3000 USDC, USDC token1: sqrtP = sqrt(3000e-12) * 2^96 = 5.4772255750516611e-5 * 7.9228162514264338e28', () => {
    // = 4339505179874779489431521.786… (floor taken on chain)
    const sqrtP = 4339505179874779489431521n;
    expect(rel(sqrtPriceX96ToPrice(sqrtP, wethToken0), 3000)).toBeLessThan(1e-15);
    expect(priceToSqrtPriceX96(3000, wethToken0)).toBe(sqrtP);
  });

  it('WETH at 3000 USDC, USDC token0: sqrtP = sqrt(1e12 / 3000) * 2^96 = 18257.418583505537 * 7.9228162514264338e28', () => {
    // = 1446501726624926496477173928747177.609…
    const sqrtP = 1446501726624926496477173928747177n;
    expect(rel(sqrtPriceX96ToPrice(sqrtP, wethToken1), 3000)).toBeLessThan(1e-15);
    expect(priceToSqrtPriceX96('3000', wethToken1)).toBe(sqrtP);
  });

  it('a higher sqrtP means a dearer base when base is token0 and a cheaper one when base is token1', () => {
    const sqrtP = 4339505179874779489431521n;
    expect(sqrtPriceX96ToPrice(sqrtP * 2n, wethToken0)).toBeCloseTo(12000, 6); // price scales with sqrtP^2
    const inv = 1446501726624926496477173928747177n;
    expect(sqrtPriceX96ToPrice(inv * 2n, wethToken1)).toBeCloseTo(750, 9);
  });

  it('equal decimals (8-decimal cbBTC against an 8-decimal quote) leave the raw price as is', () => {
    const o = { baseIsToken0: true, baseDecimals: 8, quoteDecimals: 8 };
    expect(sqrtPriceX96ToPrice(Q96 * 300n, o)).toBe(90000);
  });

  it('extreme ticks still give finite positive prices', () => {
    expect(sqrtPriceX96ToPrice(MIN_SQRT_RATIO, wethToken0)).toBeGreaterThan(0);
    expect(Number.isFinite(sqrtPriceX96ToPrice(MAX_SQRT_RATIO, wethToken0))).toBe(true);
    expect(() => sqrtPriceX96ToPrice(0n, wethToken0)).toThrow(/positive/);
  });

  it('round-trips prices across many magnitudes and both orders', () => {
    for (const price of [0.000123, 0.5, 1, 2.5, 1234.5678, 97000, 3e7]) {
      for (const o of [
        wethToken0,
        wethToken1,
        { baseIsToken0: true, baseDecimals: 8, quoteDecimals: 6 },
        { baseIsToken0: false, baseDecimals: 8, quoteDecimals: 6 },
      ]) {
        expect(rel(sqrtPriceX96ToPrice(priceToSqrtPriceX96(price, o), o), price)).toBeLessThan(1e-12);
      }
    }
  });
});

describe('amounts', () => {
  it('quoteToBaseAmount: 1000 USDC at 10^12/2^32 USDC per WETH is 1000 * 2^32 / 10^12 WETH = 4.294967296 WETH', () => {
    expect(quoteToBaseAmount(1_000_000_000n, 2n ** 80n, true)).toBe(4_294_967_296_000_000_000n);
    expect(quoteToBaseAmount(1_000_000_000n, 2n ** 112n, false)).toBe(4_294_967_296_000_000_000n);
  });

  it('quoteToBaseAmount at 3000 USDC/WETH: 1000 USDC is a third of a WETH (rounded down)', () => {
    const amount = quoteToBaseAmount(1_000_000_000n, 4339505179874779489431521n, true);
    expect(rel(Number(amount), 1e18 / 3)).toBeLessThan(1e-15);
  });

  it('executionPrice: 1000 USDC for 0.25 WETH is 4000 USDC per WETH', () => {
    expect(executionPrice(1_000_000_000n, 250_000_000_000_000_000n, 6, 18)).toBe(4000);
    expect(executionPrice(2_999_123_456n, 10n ** 18n, 6, 18)).toBe(2999.123456);
  });

  it('toRawAmount: USD sizes to USDC units, exactly', () => {
    expect(toRawAmount(1000, 6)).toBe(1_000_000_000n);
    expect(toRawAmount(0.1, 6)).toBe(100_000n);
    expect(toRawAmount('12.3456789', 6)).toBe(12_345_678n);
    expect(toRawAmount(1e-7, 6)).toBe(0n);
    expect(toRawAmount(1.5e21, 0)).toBe(1_500_000_000_000_000_000_000n);
  });

  it('parseDecimal rejects what is not a non-negative decimal', () => {
    expect(parseDecimal('2.50')).toEqual({ num: 250n, den: 100n });
    expect(() => parseDecimal('-1')).toThrow();
    expect(() => parseDecimal(Number.NaN)).toThrow();
  });
});

describe('helpers', () => {
  it('ratioToNumber rounds once, correctly', () => {
    expect(ratioToNumber(1n, 3n)).toBe(1 / 3);
    expect(ratioToNumber(2n, 3n)).toBe(2 / 3);
    // 10^40 / 7 = 1.428571428571428571428…e39; the double 1e40 is not exactly 10^40, so 1e40 / 7 would be off by a few ulps.
    expect(ratioToNumber(10n ** 40n, 7n)).toBe(Number('1.428571428571428571428571e39'));
    expect(ratioToNumber(-1n, 8n)).toBe(-0.125);
    expect(ratioToNumber(0n, 8n)).toBe(0);
  });

  it('bigintSqrt is the floor square root', () => {
    for (const n of [0n, 1n, 2n, 3n, 4n, 15n, 16n, 17n, 2n ** 192n, 2n ** 192n - 1n, 3n * 10n ** 60n]) {
      const r = bigintSqrt(n);
      expect(r * r <= n && (r + 1n) * (r + 1n) > n).toBe(true);
    }
  });

  it('sortsBefore orders addresses numerically, case-insensitively', () => {
    expect(
      sortsBefore('0x4200000000000000000000000000000000000006', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
    ).toBe(true);
    expect(
      sortsBefore('0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'),
    ).toBe(false);
  });
});
