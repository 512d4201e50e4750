/**
 * USDC amounts as people read them. A module of its own, with no dependency, so that the catalogue, discovery and
 * the pages can say a price without loading the payment stack (viem, @x402/evm).
 */

/** "15000" atomic units (6 decimals) -> "0.015": trailing zeros dropped. */
export function readableUsdc(atomic: string): string {
  const v = BigInt(atomic);
  const whole = v / 1_000_000n;
  const frac = (v % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}
