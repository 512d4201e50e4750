/**
 * Example requests that work on this install: the discovery documents
 * (discovery, OpenAPI, agents.md, skill.md, llms.txt, the agent card)
 * show each windowed telemetry route with the `date`/`time` of the newest
 * complete 15-minute slice in coverage and a pair that has data in it, so
 * "call it with the example" answers 200. Before any slice is complete the
 * newest (partial) slice is used, before any data the catalogue's static
 * example (documentation only). The static example bodies stay as they are.
 *
 * Read from the store at most every `ttlMs` (the documents are cached by
 * clients for 60 s anyway); a failed read keeps the last answer.
 */
import type { Store } from '../../core/store/store.js';
import { sql } from '../../core/store/sql.js';
import { pairSpans } from '../../core/store/tables/spread-samples.js';
import { BASE_SLICE_MS } from '../../core/store/tables/query-helpers.js';
import type { Catalogue, PricedSku } from '../catalogue/sku.js';
import { hasRows } from '../telemetry/window.js';

export interface LiveExamples {
  /** sku id -> an input that answers 200 now. */
  inputs: ReadonlyMap<string, Record<string, unknown>>;
  /** The slice the examples name (ISO), when there is data. */
  slice?: { start: string; end: string };
}

export type LiveExampleSource = () => Promise<LiveExamples | undefined>;

const isWindowed = (sku: PricedSku) => 'date' in sku.exampleInput || 'time' in sku.exampleInput;

/** The newest slice of a pair's span that is complete (ends at or before its last sample), else the newest one. */
export function newestCompleteSlice(earliestMs: number, latestMs: number): number {
  const current = Math.floor(latestMs / BASE_SLICE_MS) * BASE_SLICE_MS;
  const previous = current - BASE_SLICE_MS;
  return previous + BASE_SLICE_MS > earliestMs ? previous : current;
}

const two = (n: number) => String(n).padStart(2, '0');

export async function currentExamples(store: Store, catalogue: Catalogue): Promise<LiveExamples> {
  const spans = await pairSpans(store);
  if (!spans.length) return { inputs: new Map() };
  // The catalogue's own example pair when it has data, else the pair with the newest data.
  const preferred = catalogue.skus.map((s) => s.exampleInput.pair).find((p): p is string => typeof p === 'string' && spans.some((x) => x.pair === p.replace('-', '/')));
  const span = spans.find((x) => x.pair === preferred?.replace('-', '/')) ?? spans[0]!;
  let start = newestCompleteSlice(span.earliestMs, span.latestMs);
  // A slice without samples of the pair (an outage longer than a slice) would answer 404: take the newest one then.
  if (!(await hasRows(store, 'spread_samples', { fromMs: start, toMs: start + BASE_SLICE_MS }, sql`pair = ${span.pair}`))) {
    start = Math.floor(span.latestMs / BASE_SLICE_MS) * BASE_SLICE_MS;
  }
  const d = new Date(start);
  const date = d.toISOString().slice(0, 10);
  const time = `${two(d.getUTCHours())}${two(d.getUTCMinutes())}`;
  const inputs = new Map<string, Record<string, unknown>>();
  for (const sku of catalogue.skus) {
    if (!sku.path.startsWith('/api/v1/crypto/')) continue;
    const input: Record<string, unknown> = { ...sku.exampleInput };
    if ('pair' in input && typeof input.pair === 'string' && sku.id !== 'impact-simulation') input.pair = span.pair;
    if (isWindowed(sku)) Object.assign(input, { date, time });
    inputs.set(sku.id, input);
  }
  return { inputs, slice: { start: d.toISOString(), end: new Date(start + BASE_SLICE_MS).toISOString() } };
}

/** A cached source of the current examples (see the module comment). */
export function liveExampleSource(store: Store, catalogue: Catalogue, ttlMs = 15_000): LiveExampleSource {
  let last: { at: number; value: LiveExamples } | undefined;
  let inFlight: Promise<LiveExamples | undefined> | undefined;
  return async () => {
    if (last && Date.now() - last.at < ttlMs) return last.value;
    inFlight ??= currentExamples(store, catalogue)
      .then((value) => {
        last = { at: Date.now(), value };
        return value;
      })
      .catch(() => last?.value)
      .finally(() => (inFlight = undefined));
    return inFlight;
  };
}
