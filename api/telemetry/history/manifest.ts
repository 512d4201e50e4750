/**
 * The manifest of a bulk history file (handler.ts): sent base64 JSON in the
 * `X-Manifest` header of the file's response (and as the JSON answer to a
 * retry of the paying call, which does not send the file again). `sha256` is
 * the hex sha-256 of the exact bytes of the body (also in `Content-Digest`,
 * RFC 9530), `columns` the file's schema (history-rows.ts).
 */
import { z } from 'zod';

export const HistoryManifestSchema = z.object({
  dataset: z.string().describe('candles, dislocations, execution-latency or shadow-capacity'),
  date: z.string().describe('The UTC day (YYYY-MM-DD)'),
  pair: z.string().optional().describe('The pair, when the file is of one pair'),
  interval: z.string().optional().describe('Candle interval (candles)'),
  venue: z.string().optional().describe('Venue filter (execution-latency)'),
  format: z.enum(['csv', 'parquet']),
  file_name: z.string().describe('The Content-Disposition file name'),
  rows: z.number().int().describe('Data rows in the file (the CSV header not counted)'),
  bytes: z.number().int().describe('Size of the file'),
  sha256: z.string().describe('sha-256 of the file, hex'),
  columns: z
    .array(z.object({ name: z.string(), type: z.enum(['BOOLEAN', 'DOUBLE', 'VARCHAR']) }))
    .describe('The schema: column names (served field paths joined with `_`) and types, in file order'),
  methodology: z.string().describe('Methodology version of the served numbers'),
  slices: z.number().int().describe('Slices of the day answered (the rows come from them)'),
  missing_slices: z
    .array(z.string())
    .describe('Starts of the slices the per-slice route refuses (outside coverage or without data): no rows'),
  price_atomic: z.string().describe('The price paid for the file, atomic USDC'),
  price_usdc: z.string().describe('The same in USDC'),
});
export type HistoryManifest = z.output<typeof HistoryManifestSchema>;
