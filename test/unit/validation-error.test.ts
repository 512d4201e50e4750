/**
 * The one mapping of a zod failure to the stable 400 codes (core/validation-error.ts), as the doors and the
 * job processors use it: unknown key, a refinement's own code, missing (only against the caller's input),
 * invalid, and the fallback field of a job's main input.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inputProblemOf, validationError } from '../../core/validation-error.js';
import { AppError } from '../../core/errors.js';

const Input = z.strictObject({
  pair: z.string().min(3),
  depth: z.number().int().optional(),
  language: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v === 'cobol')
        ctx.addIssue({
          code: 'custom',
          message: 'cobol is not supported',
          params: { code: 'unsupported_language', details: { supported: ['js'] } },
        });
    }),
});

const problemOf = (input: Record<string, unknown>, withInput = true) =>
  inputProblemOf(Input.safeParse(input).error!, withInput ? { input } : {});

describe('inputProblemOf', () => {
  it('an unknown key: unknown_parameter naming it', () => {
    expect(problemOf({ pair: 'ETH/USD', colour: 'red' })).toEqual({
      code: 'unknown_parameter',
      message: 'unknown parameter colour',
      details: { field: 'colour' },
    });
  });

  it('a parameter the caller left out: missing_parameter, only when the input is given', () => {
    expect(problemOf({})).toEqual({ code: 'missing_parameter', message: 'pair: required', details: { field: 'pair' } });
    expect(problemOf({}, false)).toMatchObject({ code: 'invalid_parameter', details: { field: 'pair' } });
  });

  it('a value of the wrong shape: invalid_parameter with zod message and the path', () => {
    const problem = problemOf({ pair: 'ETH/USD', depth: 1.5 });
    expect(problem.code).toBe('invalid_parameter');
    expect(problem.details).toEqual({ field: 'depth' });
    expect(problem.message).toMatch(/^depth: /);
  });

  it("a refinement's own code, with its details and the field", () => {
    expect(problemOf({ pair: 'ETH/USD', language: 'cobol' })).toEqual({
      code: 'unsupported_language',
      message: 'language: cobol is not supported',
      details: { supported: ['js'], field: 'language' },
    });
  });

  it('an issue without a path names the fallback field, or none', () => {
    const error = z.string().min(1).safeParse('').error!;
    expect(inputProblemOf(error, { fallbackField: 'text' })).toMatchObject({
      code: 'invalid_parameter',
      details: { field: 'text' },
    });
    expect(inputProblemOf(error).details).toEqual({});
  });
});

describe('validationError', () => {
  it('is a 400 AppError with the code and details', () => {
    const err = validationError(Input.safeParse({}).error!, { input: {} });
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 400, code: 'missing_parameter', details: { field: 'pair' } });
  });
});
