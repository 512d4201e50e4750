/**
 * airgap-scrub: stateless redaction of PII and PCI (jobs/airgap-scrub/README.md).
 *
 * Standard mode: the pattern detectors (detectors.ts) for EMAIL, CREDIT_CARD,
 * SSN, PHONE, ADDRESS and ZIP. Strict mode adds the AI provider's NAME and
 * BIO spans (`deps.ai.findSensitiveSpans`, any adapter); without a provider
 * strict mode answers 503 `ai_unavailable` (a JobError: never charged).
 * Overlaps are resolved deterministically (spans.ts) and each redaction is
 * replaced by its bracketed label.
 *
 * Zero data retention, on this side of the queue: the text and anything
 * derived from it (spans, matches) is never logged, never written anywhere
 * but the returned body, and never put in an error: error messages are fixed
 * strings, and an unexpected crash is rethrown as a new Error naming only its
 * type (the queue adapter logs a crash's message and keeps it in the failed
 * job until it is removed). The AI provider's own error messages are dropped
 * too (an upstream error may echo its input).
 */
import { isSupportedCountry, type CountryCode } from 'libphonenumber-js/max';
import type { z } from 'zod';
import { AirgapScrubInput, type AirgapScrubOutput, type AirgapScrubRequest } from './sku.js';
import type { SensitiveSpan } from '../../core/ai/ai-provider.js';
import { AppError } from '../../core/errors.js';
import { JobError } from '../../core/queue/queue.js';
import { inputProblemOf } from '../../core/validation-error.js';
import { cpuTask, inlineCpu } from '../../core/threads/cpu-pool.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { findStandardEntities } from './detectors.js';
import { warmUpNationalPhones } from './national-phones.js';
import { applyRedactions, resolveSpans, type EntityKind, type Redaction, type Span } from './spans.js';

export type AirgapScrubResponse = z.infer<typeof AirgapScrubOutput>;

const SOURCE = 'airgap-scrub';

/** Same length, so offsets found on the copy hold for the original: exotic spaces and dashes read as plain ones. */
function normaliseForDetection(text: string): string {
  return text.replace(/[\u00A0\u2007\u2009\u202F]/g, ' ').replace(/[\u2010-\u2015\u2212]/g, '-');
}

/** The scrub itself: pattern spans plus any extra (AI) spans, resolved and applied. */
export function redact(
  text: string,
  region: CountryCode,
  extraSpans: readonly Span[] = [],
): { scrubbed: string; kinds: EntityKind[]; redactions: Redaction[] } {
  const standard = resolveSpans(findStandardEntities(normaliseForDetection(text), region), text.length);
  // Structured PII keeps its own label; names and bios (strict mode) cover only what remains around it.
  const wellFormed = extraSpans.filter(
    (s) =>
      Number.isInteger(s.start) && Number.isInteger(s.end) && s.start >= 0 && s.end <= text.length && s.start < s.end,
  );
  const rest = resolveSpans(
    wellFormed.flatMap((s) => outside(text, s, standard)),
    text.length,
  );
  const redactions = [...standard, ...rest].sort((a, b) => a.start - b.start);
  return { ...applyRedactions(text, redactions), redactions };
}

/** The scrub as a CPU pool task: a pool thread imports this module once. */
export const redactTask = cpuTask(import.meta.url, { redact });

/** What a pool thread runs once before its first scrub: the phone metadata, loaded and indexed, and the JIT. */
export function warmUpScrub(): void {
  warmUpNationalPhones();
  redact(
    'Mail jane@example.com, call (212) 555-0100, card 4111 1111 1111 1111, 1 Main St, Springfield, IL 62701.',
    'US',
  );
}
const warmUpTask = cpuTask(import.meta.url, { warmUpScrub });

/**
 * The parts of `span` outside every redaction in `taken` (sorted, disjoint), trimmed of blanks and punctuation.
 * A binary search finds the first redaction that can meet the span, so the cost follows the redactions it meets,
 * not all of them (strict mode calls this once per AI span: a scan of every redaction each time is quadratic).
 */
function outside(text: string, span: Span, taken: readonly Redaction[]): Span[] {
  const pieces: Span[] = [];
  let from = span.start;
  let lo = 0;
  let hi = taken.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (taken[mid]!.end <= span.start) lo = mid + 1;
    else hi = mid;
  }
  for (let k = lo; k < taken.length && taken[k]!.start < span.end; k++) {
    const r = taken[k]!;
    if (r.end <= from) continue;
    if (r.start > from) pieces.push({ ...span, start: from, end: r.start });
    from = Math.max(from, r.end);
  }
  if (from < span.end) pieces.push({ ...span, start: from, end: span.end });
  return pieces
    .map((p) => {
      let { start, end } = p;
      while (start < end && /[\s,;:.()[\]-]/u.test(text[start]!)) start++;
      while (end > start && /[\s,;:.()[\]-]/u.test(text[end - 1]!)) end--;
      return { ...p, start, end };
    })
    .filter((p) => p.end > p.start && /[\p{L}\p{N}]/u.test(text.slice(p.start, p.end)));
}

/** The validated input, or a 400 whose message and details never quote the text. */
function parseInput(data: unknown): AirgapScrubRequest {
  const parsed = AirgapScrubInput.safeParse(data);
  if (parsed.success) return parsed.data;
  const problem = inputProblemOf(parsed.error, { fallbackField: 'text' });
  throw new JobError(problem.code, problem.message, 400, problem.details);
}

/** The provider's spans, kept only where they are well-formed and of a kind strict mode redacts. */
function aiSpans(spans: readonly SensitiveSpan[]): Span[] {
  return spans
    .filter((s) => s && (s.kind === 'NAME' || s.kind === 'BIO'))
    .map((s) => ({ start: s.start, end: s.end, kind: s.kind }));
}

/** A provider failure as a JobError with the provider's code and status (5xx) but none of its text. */
function providerFailure(err: unknown): JobError {
  if (err instanceof AppError) {
    const status = err.status >= 500 ? err.status : 502;
    return new JobError(err.code, `strict-mode redaction: the AI provider failed (${err.code})`, status);
  }
  return new JobError('ai_failed', 'strict-mode redaction: the AI provider failed', 502);
}

export const createAirgapScrubProcessor: ProcessorFactory<unknown, AirgapScrubResponse> = async (deps) => {
  const region = deps.config.AIRGAP_PHONE_REGION;
  if (!isSupportedCountry(region))
    throw new Error(`AIRGAP_PHONE_REGION: ${region} is not a region libphonenumber-js knows`);
  const defaultRegion: CountryCode = region;
  const threads = deps.threads ?? inlineCpu;
  threads.preload(warmUpTask, []);
  const { logger, ai } = deps;

  return {
    async handle(data, ctx) {
      const input = parseInput(data);
      const strict = input.strictMode === true;
      if (strict && !ai) {
        throw new JobError(
          'ai_unavailable',
          'strictMode needs the AI provider, which this worker does not have; retry without strictMode',
          503,
          { field: 'strictMode' },
        );
      }
      const t0 = performance.now();
      try {
        const text = input.text;
        const extra: Span[] = [];
        let source = SOURCE;
        if (strict && ai) {
          ctx.signal.throwIfAborted();
          let found: Awaited<ReturnType<typeof ai.findSensitiveSpans>>;
          try {
            found = await ai.findSensitiveSpans(text, { signal: ctx.signal });
          } catch (err) {
            if (ctx.signal.aborted) throw err;
            logger.warn(
              { provider: ai.adapter, err_type: err instanceof AppError ? err.code : (err as Error)?.name },
              'airgap-scrub: AI provider failed',
            );
            throw providerFailure(err);
          }
          extra.push(...aiSpans(found.spans));
          source = `${SOURCE}+${ai.adapter}:${found.model}`;
        }
        ctx.signal.throwIfAborted();
        // In a pool thread: the event loop keeps serving while the text is scanned; an abort stops the scan.
        const { scrubbed, kinds, redactions } = await threads.run(redactTask, [text, defaultRegion, extra], ctx.signal);
        // Counts only: never the text, a match or an offset.
        logger.debug(
          { chars: text.length, redactions: redactions.length, kinds, strict, ms: Math.round(performance.now() - t0) },
          'airgap-scrub: done',
        );
        return { success: true, scrubbed, entities_redacted: kinds, source, mode: strict ? 'deep' : 'standard' };
      } catch (err) {
        if (err instanceof JobError || ctx.signal.aborted) throw err;
        // A crash: retried by the queue, which logs and keeps its message; name the type only.
        throw new Error(`airgap-scrub crashed (${err instanceof Error ? err.name : typeof err})`);
      }
    },
  };
};
