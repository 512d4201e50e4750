/**
 * The one mapping of a failed zod validation to the gateway's stable 400
 * codes, for every door (api/paid-call/admission.ts) and for the job
 * processors that validate their queue input again (jobs/<name>/processor.ts).
 * Only the first issue is reported:
 *
 *   an unknown key                         -> `unknown_parameter`, field = the key
 *   a refinement naming its own code       -> that code (`params: { code, details? }`), field = the path
 *   a top-level parameter absent from `input` (when the caller's input is given)
 *                                          -> `missing_parameter`, "<field>: required"
 *   anything else                          -> `invalid_parameter`, "<field>: <zod's message>"
 *
 * `field` is the issue's path joined with dots, or `fallbackField` when the
 * issue has no path (a job's main input); with neither, no field is named.
 */
import type { z } from 'zod';
import { AppError } from './errors.js';

/** The code, message and details of a 400 (details carry `field`). */
export interface InputProblem {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

export interface InputProblemOptions {
  /** What the caller sent: a top-level parameter absent from it is `missing_parameter`, not `invalid_parameter`. */
  input?: Record<string, unknown>;
  /** The field named when the issue has no path. */
  fallbackField?: string;
}

export function inputProblemOf(error: z.ZodError, options: InputProblemOptions = {}): InputProblem {
  const issue = error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = issue.keys[0] ?? '';
    return { code: 'unknown_parameter', message: `unknown parameter ${field}`, details: { field } };
  }
  const field = issue.path.map(String).join('.') || options.fallbackField || '';
  const prefix = field ? `${field}: ` : '';
  const named = field ? { field } : {};
  // A refinement may name its own stable code (and details): `params: { code: 'unsupported_language', details: {...} }`.
  const params =
    issue.code === 'custom'
      ? (issue.params as { code?: unknown; details?: Record<string, unknown> } | undefined)
      : undefined;
  if (typeof params?.code === 'string')
    return {
      code: params.code,
      message: `${prefix}${issue.message}`,
      details: { ...(params.details ?? {}), ...named },
    };
  const missing =
    options.input !== undefined &&
    issue.code === 'invalid_type' &&
    issue.path.length === 1 &&
    options.input[String(issue.path[0])] === undefined;
  return missing
    ? { code: 'missing_parameter', message: `${prefix}required`, details: named }
    : { code: 'invalid_parameter', message: `${prefix}${issue.message}`, details: named };
}

/** The first issue as a 400 AppError (the doors' rejection before payment). */
export function validationError(error: z.ZodError, options: InputProblemOptions = {}): AppError {
  const problem = inputProblemOf(error, options);
  return new AppError(problem.code, problem.message, 400, problem.details);
}
