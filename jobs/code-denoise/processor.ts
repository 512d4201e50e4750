/**
 * code-denoise: strips comments, docstrings, sourcemap comments and
 * redundant whitespace from code, keeping string, template, regex and color
 * literals byte for byte (jobs/code-denoise/README.md). Each language is read
 * by a real tokenizer: Lezer grammars (lezer.ts), jsonc-parser's scanner
 * (jsonc.ts), and for shell a lexer written here (shell.ts, which says why).
 */
import type { z } from 'zod';
import { CodeDenoiseInput, type CodeDenoiseOutput, type CodeDenoiseRequest } from './sku.js';
import { JobError } from '../../core/queue/queue.js';
import { inputProblemOf } from '../../core/validation-error.js';
import { cpuTask, inlineCpu } from '../../core/threads/cpu-pool.js';
import type { ProcessorFactory } from '../sku-processor.js';
import { denoiseJsonc } from './jsonc.js';
import { LANGUAGES, resolveLanguage, SUPPORTED_LANGUAGES, type Language } from './languages.js';
import type { DenoiseResult } from './denoise-result.js';
import { denoiseWithGrammar } from './lezer.js';
import { depthExcess, depthMessage } from './nesting-depth.js';
import { normalize } from './normalize.js';
import { shellEdits } from './shell.js';

export type CodeDenoiseResponse = z.infer<typeof CodeDenoiseOutput>;

/** One token per 4 characters, as rag-shrink estimates (jobs/rag-shrink/README.md). */
const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

export function denoise(code: string, language: Language, alias: string = language): DenoiseResult {
  // The schema refuses these before any payment; checked again here for callers that skip it (the bench past max).
  const excess = depthExcess(code, language);
  if (excess) throw new JobError('nesting_too_deep', depthMessage(excess), 400, { field: 'code', at: excess.at });
  if (language === 'jsonc') return denoiseJsonc(code);
  if (language === 'shell') {
    const { edits, commentsRemoved, syntaxErrors } = shellEdits(code);
    return { code: normalize(code, edits, { keepIndent: false }), commentsRemoved, syntaxErrors };
  }
  return denoiseWithGrammar(language, code, alias);
}

/** The tokenizing as a CPU pool task: a pool thread imports this module (and its grammars) once. */
export const denoiseTask = cpuTask(import.meta.url, { denoise });

function parseInput(data: unknown): CodeDenoiseRequest {
  const parsed = CodeDenoiseInput.safeParse(data);
  if (parsed.success) return parsed.data;
  const problem = inputProblemOf(parsed.error, { fallbackField: 'code' });
  throw new JobError(problem.code, problem.message, 400, problem.details);
}

export const createCodeDenoiseProcessor: ProcessorFactory<unknown, CodeDenoiseResponse> = async ({
  logger,
  threads = inlineCpu,
}) => {
  // Warm-up of every thread: the module, its grammars and the JIT, on a line of code.
  threads.preload(denoiseTask, ['const a = 1; // x', 'javascript', 'javascript']);
  return {
    handle: async (data, ctx) => {
      const input = parseInput(data);
      const requested = input.language ?? 'javascript';
      const resolved = resolveLanguage(requested);
      if (!resolved) {
        throw new JobError(
          'unsupported_language',
          `language ${JSON.stringify(requested.slice(0, 40))} is not supported; use one of: ${SUPPORTED_LANGUAGES.join(', ')}`,
          400,
          {
            field: 'language',
            supported: SUPPORTED_LANGUAGES,
            aliases: LANGUAGES,
          },
        );
      }
      ctx.signal.throwIfAborted();
      const t0 = performance.now();
      const out = await threads.run(denoiseTask, [input.code, resolved.language, resolved.alias], ctx.signal);
      const original = input.code.length;
      const shrunk = out.code.length;
      logger.debug(
        { language: resolved.language, chars_in: original, chars_out: shrunk, ms: Math.round(performance.now() - t0) },
        'code-denoise: done',
      );
      return {
        success: true,
        code: out.code,
        language: resolved.language,
        original_length: original,
        shrunk_length: shrunk,
        reduction_pct: Math.round((1 - shrunk / original) * 10_000) / 100,
        tokens_saved_estimate: Math.max(0, estimateTokens(original) - estimateTokens(shrunk)),
        comments_removed: out.commentsRemoved,
        syntax_errors: out.syntaxErrors,
        source: 'code-denoise',
      };
    },
  };
};
