/**
 * The public contract of a SKU, whatever serves it: one route of the gateway
 * (id, method, path), what it costs, what it takes and returns (zod schemas
 * with an example of each), and how it is described and how fast it should
 * be. Job SKUs (jobs/<id>/sku.ts) and telemetry SKUs (api/) both declare
 * this shape; the catalogue (api/catalogue/) adds the runtime: availability,
 * pre-flight and handler. It lives in core because both floors above use it.
 */
import type { z } from 'zod';

export const CATEGORIES = ['Data', 'AI', 'Finance', 'Blockchain', 'Trading'] as const;
export type Category = (typeof CATEGORIES)[number];

export type HttpMethod = 'GET' | 'POST';

export interface SkuContract<I = unknown, O = unknown> {
  /** Stable id, the last path segment (`spread-candles`); the key of PRICE_OVERRIDES. */
  id: string;
  /** The spec's method. */
  method: HttpMethod;
  /** Telemetry routes also accept POST with a JSON body (the original service's published clients send POST). */
  alsoPost?: boolean;
  path: string;
  /** Short human title. */
  title: string;
  categories: Category[];
  /** Price in atomic USDC (6 decimals) from the spec's route table; "0" when free. */
  defaultPriceAtomic: string;
  free: boolean;
  input: z.ZodType<I>;
  output: z.ZodType<O>;
  /** A real 200 body; validates against `output` (checked by the catalogue at start-up). */
  example: O;
  /** An input that validates against `input` (discovery and docs show it). */
  exampleInput: Record<string, unknown>;
  description: string;
  /** From the spec's route table. */
  avgLatencyMs: number;
  latencyTargetMs: number;
}
