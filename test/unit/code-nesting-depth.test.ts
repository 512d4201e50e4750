/**
 * code-denoise's depth bound (jobs/code-denoise/nesting-depth.ts): deep nests are found where they cross the
 * limit, real code with brackets in its strings and comparisons in its expressions is not, and the scan is one
 * pass however the input is shaped.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { denoise } from '../../jobs/code-denoise/processor.js';
import { depthExcess, MAX_CODE_DEPTH, RAW_DEPTH_FACTOR } from '../../jobs/code-denoise/nesting-depth.js';
import { HONEST_CODE_FILES } from '../helpers/worst-case-inputs.js';

const nest = (open: string, close: string, n: number) => `${open.repeat(n)}x${close.repeat(n)}`;

describe('depthExcess', () => {
  it('finds brackets of any kind past the limit, at the crossing character', () => {
    expect(depthExcess(nest('(', ')', MAX_CODE_DEPTH), 'javascript')).toBeUndefined();
    expect(depthExcess(nest('(', ')', MAX_CODE_DEPTH + 1), 'javascript')).toEqual({
      at: MAX_CODE_DEPTH,
      kind: 'brackets',
    });
    expect(depthExcess('[{('.repeat(400), 'python')).toEqual({ at: MAX_CODE_DEPTH, kind: 'brackets' });
    expect(depthExcess('$('.repeat(MAX_CODE_DEPTH + 1), 'shell')?.kind).toBe('brackets');
  });

  it('does not bank closers as credit: extra closers first do not allow a deeper nest later', () => {
    const input = ')'.repeat(5000) + '('.repeat(MAX_CODE_DEPTH + 1);
    expect(depthExcess(input, 'javascript')?.at).toBe(5000 + MAX_CODE_DEPTH);
  });

  it('counts angle brackets after a name in languages with generics, and ends them at ; { }', () => {
    const generics = `let v: ${'A<'.repeat(MAX_CODE_DEPTH + 1)}B;`;
    expect(depthExcess(generics, 'typescript')?.kind).toBe('angle brackets');
    expect(depthExcess(`a${'<a'.repeat(MAX_CODE_DEPTH + 1)} x;`, 'cpp')?.kind).toBe('angle brackets');
    expect(depthExcess(generics, 'python')).toBeUndefined();
    // Comparisons and shifts across many statements never add up.
    const loops = 'for (let i = 0; i < n; i++) { a = b << 2; if (x<y) {} }\n'.repeat(5000);
    expect(depthExcess(loops, 'typescript')).toBeUndefined();
    expect(depthExcess('std::cout << a << b;\n'.repeat(5000), 'cpp')).toBeUndefined();
  });

  it('passes the real source files of the bench whole, in their languages', () => {
    for (const [language, files] of Object.entries(HONEST_CODE_FILES)) {
      for (const file of files) expect(depthExcess(readFileSync(file, 'utf8'), language), file).toBeUndefined();
    }
  });

  it('is refused by the processor too, with the field and the offset', () => {
    const deep = nest('[', ']', MAX_CODE_DEPTH + 1);
    expect(() => denoise(deep, 'python')).toThrow(expect.objectContaining({ code: 'nesting_too_deep', status: 400 }));
  });

  it('scans 20 MB of any shape in one pass (a guard against a super-linear scan, not a timing target)', () => {
    for (const unit of ['(', ')', 'A<', '<<', 'a<b;', '"(', '\n']) {
      const input = unit.repeat(Math.ceil(20_000_000 / unit.length));
      const t0 = performance.now();
      depthExcess(input, 'typescript', Number.MAX_SAFE_INTEGER);
      expect(performance.now() - t0, unit).toBeLessThan(30_000);
    }
  });
});

describe('depthExcess and strings', () => {
  it('skips brackets in quoted strings, and still bounds a nest hidden behind a stray quote', () => {
    const tables = `const t = ${JSON.stringify('(['.repeat(1000))};\n`.repeat(3);
    expect(depthExcess(tables, 'javascript')).toBeUndefined();
    // An apostrophe in a comment opens a "string" to the end of its line for the count: the raw bound holds.
    const hidden = `/* don't */ ${'('.repeat(MAX_CODE_DEPTH * RAW_DEPTH_FACTOR + 1)}`;
    expect(depthExcess(hidden, 'javascript')).toEqual({
      at: hidden.indexOf('(') + MAX_CODE_DEPTH * RAW_DEPTH_FACTOR,
      kind: 'brackets',
    });
  });
});
