/**
 * Example requests that work on this install: the discovery documents
 * (discovery, OpenAPI, agents.md, skill.md, llms.txt, the agent card)
 * show each windowed telemetry route with the `date`/`time` of the newest
 * final 15-minute slice in coverage (one whose answers say `complete: true`:
 * closed by the same rule as the closed-slice cache, api/telemetry/completeness.ts)
 * and a pair that has data in it, checked against the route's own pre-flight
 * so "call it with the example" answers 200. Only final slices are offered
 * while one exists; on an install younger than that (the first
 * TELEMETRY_CACHE_DATA_MARGIN_MS of data), the newest slice that ended before
 * the newest data, whose answers say `complete: false` until it is final, so
 * that the example still answers 200. Before any data, the catalogue's static
 * example (documentation only). The static example bodies stay as they are.
 *
 * Read from the store at most every `ttlMs` (the documents are cached by
 * clients for 60 s anyway); a failed read keeps the last answer.
 */
import { pairSpans } from '../../core/store/tables/spread-samples.js';
import { BASE_SLICE_MS } from '../../core/store/tables/query-helpers.js';
import { closedRuleOf, closedThrough } from '../telemetry/completeness.js';
import type { PricedSku, SkuRuntime } from '../sku/sku.js';
import type { ExampleInputs } from '../payment/bazaar-live-example.js';

export interface LiveExamples {
  /** sku id -> an input that answers 200 now. */
  inputs: ReadonlyMap<string, Record<string, unknown>>;
  /** False when some route's pre-flight accepted none of the candidate slices yet (its table still filling). */
  verified?: boolean;
  /** The slice the examples name (ISO), when there is data. */
  slice?: { start: string; end: string };
}

export type LiveExampleSource = () => Promise<LiveExamples | undefined>;

const isWindowed = (sku: PricedSku) => 'date' in sku.exampleInput || 'time' in sku.exampleInput;

/** The newest slice of a pair's span that ended at or before its last sample, else the newest one. */
export function newestEndedSlice(earliestMs: number, latestMs: number): number {
  const current = Math.floor(latestMs / BASE_SLICE_MS) * BASE_SLICE_MS;
  const previous = current - BASE_SLICE_MS;
  return previous + BASE_SLICE_MS > earliestMs ? previous : current;
}

const two = (n: number) => String(n).padStart(2, '0');

/**
 * Candidate slices, best first. The final ones (ending at or before
 * `closedEndMs`, completeness.ts `closedThrough`): the newest and three older
 * ones inside the span. None yet: the newest ended one, the newest (partial)
 * one, then older ones.
 */
export function candidateSlices(earliestMs: number, latestMs: number, closedEndMs: number): number[] {
  const newestFinal = Math.floor(closedEndMs / BASE_SLICE_MS) * BASE_SLICE_MS - BASE_SLICE_MS;
  const inSpan = (t: number) => t + BASE_SLICE_MS > earliestMs && t <= latestMs;
  const final = [0, 1, 2, 3].map((k) => newestFinal - k * BASE_SLICE_MS).filter(inSpan);
  if (final.length) return final;
  const ended = newestEndedSlice(earliestMs, latestMs);
  const newest = Math.floor(latestMs / BASE_SLICE_MS) * BASE_SLICE_MS;
  const older = [1, 2, 3].map((k) => ended - k * BASE_SLICE_MS).filter((t) => t + BASE_SLICE_MS > earliestMs);
  return [...new Set([ended, newest, ...older])];
}

/**
 * An input per telemetry SKU that its own pre-flight accepts now (the check
 * that answers 404 before any payment): the best candidate slice when it
 * does, else the next one (a final slice the pipeline did not observe, or,
 * before any slice is final, a table the route reads lagging the spread
 * samples, say latency samples while the raw sink catches up).
 */
export async function currentExamples(runtime: SkuRuntime): Promise<LiveExamples> {
  const { store, catalogue } = runtime;
  const spans = await pairSpans(store);
  if (!spans.length) return { inputs: new Map() };
  // The catalogue's own example pair when it has data, else the pair with the newest data.
  const preferred = catalogue.skus
    .map((s) => s.exampleInput.pair)
    .find((p): p is string => typeof p === 'string' && spans.some((x) => x.pair === p.replace('-', '/')));
  const span = spans.find((x) => x.pair === preferred?.replace('-', '/')) ?? spans[0]!;
  const closedEnd = closedThrough(runtime.now(), span.latestMs, closedRuleOf(runtime.config));
  const slices = candidateSlices(span.earliestMs, span.latestMs, closedEnd);
  const inputs = new Map<string, Record<string, unknown>>();
  let verified = true;
  for (const sku of catalogue.skus) {
    if (!sku.path.startsWith('/api/v1/crypto/')) continue;
    const base: Record<string, unknown> = { ...sku.exampleInput };
    if ('pair' in base && typeof base.pair === 'string' && sku.id !== 'impact-simulation') base.pair = span.pair;
    if (!isWindowed(sku)) {
      inputs.set(sku.id, base);
      continue;
    }
    const tries = slices.map((start) => ({ ...base, ...dateTime(start) }));
    let chosen: Record<string, unknown> | undefined;
    for (const input of tries) {
      if (await acceptedNow(sku, input, runtime)) {
        chosen = input;
        break;
      }
    }
    if (!chosen) verified = false;
    inputs.set(sku.id, chosen ?? tries[0]!);
  }
  return {
    inputs,
    verified,
    slice: { start: new Date(slices[0]!).toISOString(), end: new Date(slices[0]! + BASE_SLICE_MS).toISOString() },
  };
}

const dateTime = (startMs: number) => {
  const d = new Date(startMs);
  return { date: d.toISOString().slice(0, 10), time: `${two(d.getUTCHours())}${two(d.getUTCMinutes())}` };
};

/** Whether the SKU's input schema and pre-flight accept `input` now (a 404 or 400 would be refused). */
async function acceptedNow(sku: PricedSku, input: Record<string, unknown>, runtime: SkuRuntime): Promise<boolean> {
  const parsed = sku.input.safeParse(input);
  if (!parsed.success) return false;
  try {
    await sku.preflight?.({ input: parsed.data, runtime, priceAtomic: sku.priceAtomic });
    return true;
  } catch {
    return false;
  }
}

/** A cached source of the current examples (see the module comment). */
export function liveExampleSource(runtime: SkuRuntime, ttlMs = 15_000): LiveExampleSource {
  let last: { at: number; value: LiveExamples } | undefined;
  let inFlight: Promise<LiveExamples | undefined> | undefined;
  return async () => {
    // An answer with an unverified route (its table still filling, e.g. right after start-up) is kept only briefly.
    if (last && Date.now() - last.at < (last.value.verified === false ? Math.min(ttlMs, 2000) : ttlMs))
      return last.value;
    inFlight ??= currentExamples(runtime)
      .then((value) => {
        last = { at: Date.now(), value };
        return value;
      })
      .catch(() => last?.value)
      .finally(() => (inFlight = undefined));
    return inFlight;
  };
}

/**
 * A synchronous view of `source` for the challenges' Bazaar listing (api/payment/bazaar-live-example.ts): the last
 * answer, refreshed behind at most every 2 s (the source itself reads the store at most every `ttlMs`).
 */
export function exampleInputsOf(source: LiveExampleSource): ExampleInputs {
  let last: LiveExamples | undefined;
  let askedAt = 0;
  return (skuId) => {
    const now = Date.now();
    if (now - askedAt > 2000) {
      askedAt = now;
      void source()
        .then((value) => {
          if (value) last = value;
        })
        .catch(() => undefined);
    }
    return last?.inputs.get(skuId);
  };
}
