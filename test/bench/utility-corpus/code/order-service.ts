/**
 * Order service: validates carts, reserves stock and emits domain events.
 * Pure functions where possible; I/O behind the `Inventory` port.
 */
import { randomUUID } from 'node:crypto';

// ---------------------------------------------------------------- types

/** A line of a cart. */
export interface CartLine {
  sku: string; // e.g. "NR-TH28-OLV"
  quantity: number;
  unitPriceCents: number;
}

export type OrderStatus = 'pending' | 'reserved' | 'rejected'; // no "shipped" here

export interface Inventory {
  /** Reserves `quantity` of `sku`; resolves false when out of stock. */
  reserve(sku: string, quantity: number): Promise<boolean>;
  release(sku: string, quantity: number): Promise<void>;
}

/* Events are plain objects so they serialise as-is. */
export type OrderEvent =
  | { type: 'order.reserved'; orderId: string; totalCents: number }
  | { type: 'order.rejected'; orderId: string; reason: string };

const SKU_RE = /^[A-Z]{2}-[A-Z0-9]{2,8}-[A-Z]{3}$/; // "//" never appears in a SKU
const MAX_LINES = 50;

// ---------------------------------------------------------------- logic

/**
 * Total of a cart in cents.
 * @throws RangeError on a negative quantity
 */
export function cartTotal(lines: readonly CartLine[]): number {
  return lines.reduce((sum, l) => {
    if (l.quantity < 0) throw new RangeError(`negative quantity for ${l.sku}`);
    return sum + l.quantity * l.unitPriceCents;
  }, 0);
}

export function validateCart(lines: readonly CartLine[]): string[] {
  const problems: string[] = [];
  if (lines.length === 0) problems.push('cart is empty');
  if (lines.length > MAX_LINES) problems.push(`at most ${MAX_LINES} lines /* per order */`);
  for (const line of lines) {
    if (!SKU_RE.test(line.sku)) problems.push(`bad sku "${line.sku}"`); // quoted on purpose
    if (!Number.isInteger(line.quantity)) problems.push(`quantity of ${line.sku} must be whole`);
  }
  return problems;
}

/**
 * Reserves every line or none: a failure releases what was reserved so far.
 */
export async function placeOrder(lines: readonly CartLine[], inventory: Inventory): Promise<OrderEvent> {
  const orderId = randomUUID();
  const problems = validateCart(lines);
  if (problems.length) return { type: 'order.rejected', orderId, reason: problems.join('; ') };
  const done: CartLine[] = [];
  for (const line of lines) {
    // eslint-disable-next-line no-await-in-loop -- reservations are ordered
    const ok = await inventory.reserve(line.sku, line.quantity);
    if (!ok) {
      await Promise.all(done.map((d) => inventory.release(d.sku, d.quantity)));
      return { type: 'order.rejected', orderId, reason: `out of stock: ${line.sku}` };
    }
    done.push(line);
  }
  return { type: 'order.reserved', orderId, totalCents: cartTotal(lines) };
}

// Generic helper with a type parameter that looks like JSX to naive tools.
export const first = <T,>(xs: readonly T[]): T | undefined => xs[0];

export const BANNER = `/* orders */ ${'// v2'} #ff00aa`;
