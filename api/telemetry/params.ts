/**
 * Input schemas shared by the telemetry routes: enums matched without regard
 * to case (a client may send back `BUY`, the form the impact-simulation
 * response itself uses, or `BASE_DEX`, `1H`) and booleans as query strings.
 * The published schemas (OpenAPI, discovery) still list the canonical values.
 */
import { z } from 'zod';

/** One of `values`, matched case-insensitively, parsed to the canonical spelling. */
export function caseInsensitiveEnum<const T extends readonly [string, ...string[]]>(values: T) {
  const byLower = new Map(values.map((v) => [v.toLowerCase(), v]));
  return z.preprocess((v) => (typeof v === 'string' ? (byLower.get(v.toLowerCase()) ?? v) : v), z.enum(values));
}

/** A boolean flag: JSON true/false, or the query strings true/false/1/0/yes/no in any case. */
export function booleanFlag() {
  const text: Record<string, boolean> = { true: true, false: false, '1': true, '0': false, yes: true, no: false };
  return z.preprocess(
    (v) => (typeof v === 'string' && v.toLowerCase() in text ? text[v.toLowerCase()] : v),
    z.boolean(),
  );
}
