/**
 * code-denoise: comments, docstrings, sourcemaps and redundant whitespace out of code. The whole public contract of
 * the SKU (route, price, input and output schemas, examples, description,
 * latency), how long the API waits for the job, and the checks it runs before
 * the 402 challenge. Its page: README.md beside this file; its worker side:
 * processor.ts (served by job.ts).
 */
import { z } from 'zod';
import { defineJobSku } from '../job-sku.js';
import { reductionFields, tokensSavedField } from '../reduction-stats.js';
import { MAX_CODE } from '../text-size-limits.js';
import { LANGUAGES, resolveLanguage, SUPPORTED_LANGUAGES } from './languages.js';
import { depthExcess, depthMessage, MAX_CODE_DEPTH } from './nesting-depth.js';

export const CodeDenoiseOutput = z.object({
  success: z.boolean(),
  code: z
    .string()
    .describe(
      'Code without comments, docstrings, sourcemaps and redundant whitespace; string, template, regex and color literals preserved byte for byte',
    ),
  language: z.string().describe('Canonical language the code was read as (e.g. `typescript` for `ts`)'),
  ...reductionFields,
  tokens_saved_estimate: tokensSavedField,
  comments_removed: z.number().int().describe('Comments, docstrings and sourcemap comments removed'),
  syntax_errors: z
    .number()
    .int()
    .describe(
      'Places where the tokenizer met code it could not parse and recovered (0 for valid code); stripping there is best-effort',
    ),
  source: z.string(),
});

export const CodeDenoiseInput = z
  .strictObject({
    code: z
      .string()
      .min(1)
      .max(MAX_CODE)
      .describe(
        `Source code: at most ${MAX_CODE.toLocaleString('en-US')} characters, nesting at most ${MAX_CODE_DEPTH} brackets deep`,
      ),
    language: z
      .string()
      .max(40)
      .superRefine((v, ctx) => {
        if (!resolveLanguage(v)) {
          ctx.addIssue({
            code: 'custom',
            message: `${JSON.stringify(v.slice(0, 40))} is not a supported language; use one of: ${SUPPORTED_LANGUAGES.join(', ')}`,
            params: { code: 'unsupported_language', details: { supported: SUPPORTED_LANGUAGES, aliases: LANGUAGES } },
          });
        }
      })
      .optional()
      .describe(
        `Language, case-insensitive; default \`javascript\`. One of ${SUPPORTED_LANGUAGES.join(', ')}, or an alias: ${Object.values(
          LANGUAGES,
        )
          .flat()
          .filter((a) => !(SUPPORTED_LANGUAGES as string[]).includes(a))
          .join(', ')}`,
      ),
  })
  .superRefine((input, ctx) => {
    // Before the parse and before the 402: depth is what makes a parse super-linear (nesting-depth.ts).
    if (typeof input.code !== 'string') return;
    const language = typeof input.language === 'string' ? resolveLanguage(input.language)?.language : undefined;
    const excess = depthExcess(input.code, language ?? 'javascript');
    if (!excess) return;
    ctx.addIssue({
      code: 'custom',
      path: ['code'],
      message: depthMessage(excess),
      params: { code: 'nesting_too_deep', details: { max_depth: MAX_CODE_DEPTH, at: excess.at, kind: excess.kind } },
    });
  });
export type CodeDenoiseRequest = z.infer<typeof CodeDenoiseInput>;

export const codeDenoiseSku = defineJobSku({
  id: 'code-denoise',
  method: 'POST',
  path: '/api/v1/code-denoise',
  title: 'Code denoise',
  categories: ['AI', 'Data'],
  defaultPriceAtomic: '4000',
  free: false,
  input: CodeDenoiseInput,
  output: CodeDenoiseOutput,
  exampleInput: { code: '// add\nfunction add(a, b) {\n  return a + b; // sum\n}\n', language: 'javascript' },
  example: {
    success: true,
    code: 'function add(a, b) {\nreturn a + b;\n}',
    language: 'javascript',
    original_length: 53,
    shrunk_length: 36,
    reduction_pct: 32.08,
    tokens_saved_estimate: 5,
    comments_removed: 2,
    syntax_errors: 0,
    source: 'code-denoise',
  },
  description:
    'Strips comments, docstrings, whitespace and sourcemaps from code while preserving string and color literals.',
  avgLatencyMs: 75,
  latencyTargetMs: 200,
  deadlineMs: 10_000,
});
