/**
 * code-denoise on real-world files, one per language
 * (test/fixtures/code/real-world, README.md there names each source and
 * licence), issue 14 item 3:
 *  - comments go (a second pass finds none and changes nothing);
 *  - every literal token the language's own grammar reads in the input
 *    comes out byte for byte, in order;
 *  - the output has no more syntax errors than the input (none for valid
 *    JavaScript, TypeScript, Python, Go, Rust, C++, CSS);
 *  - ECMAScript's HTML-like comments (`-->` at a line start, after blanks or
 *    one-line block comments; `<!--`) are comments in a classic script: the
 *    test262 file runs the same (throws its Test262Error) before and after;
 *  - Python and Go outputs still compile (python3, gofmt -e), where installed.
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { MySQL, PostgreSQL, SQLDialect } from '@codemirror/lang-sql';
import type { Tree } from '@lezer/common';
import { parser as cppParser } from '@lezer/cpp';
import { parser as cssParser } from '@lezer/css';
import { parser as goParser } from '@lezer/go';
import { parser as javaParser } from '@lezer/java';
import { parser as jsParser } from '@lezer/javascript';
import { parser as pythonParser } from '@lezer/python';
import { parser as rustParser } from '@lezer/rust';
import { describe, expect, it } from 'vitest';
import { createCodeDenoiseProcessor } from '../../jobs/code-denoise/processor.js';
import { jobContext, processorDeps } from '../helpers/text-skus.js';

const run = promisify(execFile);
const DIR = new URL('../fixtures/code/real-world/', import.meta.url);
const processor = await createCodeDenoiseProcessor(processorDeps());

const LANGUAGE: Record<string, string> = {
  'javascript.js': 'javascript',
  'javascript-html-comments.js': 'javascript',
  'typescript.ts': 'typescript',
  'python.py': 'python',
  'css.css': 'css',
  'html.html': 'html',
  'jsonc.jsonc': 'jsonc',
  'go.go': 'go',
  'rust.rs': 'rust',
  'java.java': 'java',
  'c.c': 'c',
  'cpp.cc': 'cpp',
  'shell.sh': 'shell',
  'sql.sql': 'sql',
  'mysql.sql': 'mysql',
};

const MYSQL = SQLDialect.define({ ...MySQL.spec, backslashEscapes: true });
const GRAMMARS: Record<string, { parse: (s: string) => Tree; literals: string[] }> = {
  javascript: { parse: (s) => jsParser.parse(s), literals: ['String', 'TemplateString', 'RegExp'] },
  typescript: {
    parse: (s) => jsParser.configure({ dialect: 'ts' }).parse(s),
    literals: ['String', 'TemplateString', 'RegExp'],
  },
  python: { parse: (s) => pythonParser.parse(s), literals: ['String', 'FormatString'] },
  css: { parse: (s) => cssParser.parse(s), literals: ['StringLiteral', 'ColorLiteral', 'ParenthesizedContent'] },
  go: { parse: (s) => goParser.parse(s), literals: ['String', 'Rune'] },
  rust: { parse: (s) => rustParser.parse(s), literals: ['String', 'RawString', 'Char'] },
  java: { parse: (s) => javaParser.parse(s), literals: ['StringLiteral', 'TextBlock', 'CharacterLiteral'] },
  cpp: { parse: (s) => cppParser.parse(s), literals: ['String', 'RawString', 'CharLiteral', 'SystemLibString'] },
  c: { parse: (s) => cppParser.parse(s), literals: ['String', 'RawString', 'CharLiteral', 'SystemLibString'] },
  sql: { parse: (s) => PostgreSQL.language.parser.parse(s), literals: ['String', 'QuotedIdentifier'] },
  mysql: { parse: (s) => MYSQL.language.parser.parse(s), literals: ['String', 'QuotedIdentifier'] },
};

function literalsOf(language: string, source: string): string[] {
  const g = GRAMMARS[language]!;
  const out: string[] = [];
  g.parse(source).iterate({
    enter: (n) => {
      if (!g.literals.includes(n.name)) return;
      out.push(source.slice(n.from, n.to));
      return false;
    },
  });
  return out;
}

const files = readdirSync(DIR)
  .filter((f) => f !== 'README.md')
  .sort();
const hasTool = async (cmd: string) =>
  run('sh', ['-c', `command -v ${cmd}`], { timeout: 10_000 }).then(
    () => true,
    () => false,
  );

describe('code-denoise on real-world files', () => {
  it('has one fixture per supported language', () => {
    expect(new Set(files.map((f) => LANGUAGE[f]))).toEqual(
      new Set([
        'javascript',
        'typescript',
        'python',
        'css',
        'html',
        'jsonc',
        'go',
        'rust',
        'java',
        'c',
        'cpp',
        'shell',
        'sql',
        'mysql',
      ]),
    );
  });

  for (const file of files) {
    const language = LANGUAGE[file]!;
    it(`${file} (${language}): comments gone, literals byte for byte, no new syntax error, stable`, async () => {
      const code = readFileSync(new URL(file, DIR), 'utf8');
      const first = await processor.handle({ code, language }, jobContext());
      expect(first.comments_removed, file).toBeGreaterThan(0);
      expect(first.code.length).toBeLessThan(code.length);
      const second = await processor.handle({ code: first.code, language }, jobContext());
      expect(second.code, `${file}: a second pass changes nothing`).toBe(first.code);
      expect(second.comments_removed, `${file}: no comment left`).toBe(0);
      expect(second.syntax_errors, `${file}: the output has no more syntax errors`).toBeLessThanOrEqual(
        first.syntax_errors,
      );
      if (GRAMMARS[language] && file !== 'javascript-html-comments.js') {
        const before = literalsOf(language, code);
        const after = literalsOf(language, first.code);
        if (language === 'python') {
          // Docstrings are string literals that go; every other literal stays, in order.
          let i = 0;
          for (const lit of after) {
            while (i < before.length && before[i] !== lit) i++;
            expect(i < before.length, `${file}: ${lit} kept in order`).toBe(true);
            i++;
          }
          expect(before.length - after.length).toBeLessThanOrEqual(first.comments_removed);
        } else expect(after, file).toEqual(before);
      }
      if (
        [
          'javascript.js',
          'typescript.ts',
          'python.py',
          'go.go',
          'rust.rs',
          'cpp.cc',
          'css.css',
          'javascript-html-comments.js',
        ].includes(file)
      )
        expect(first.syntax_errors, file).toBe(0);
    });
  }

  it('reads HTML-like comments as comments in a classic script, and runs the same', async () => {
    const code = readFileSync(new URL('javascript-html-comments.js', DIR), 'utf8');
    const out = await processor.handle({ code, language: 'javascript' }, jobContext());
    expect(out.code).not.toContain('-->');
    expect(out.code).not.toContain('the comment extends');
    class Test262Error extends Error {}
    for (const source of [code, out.code])
      expect(() => vm.runInNewContext(source, { Test262Error })).toThrow(Test262Error);
    // Inside strings and templates the markers are text, and a module has no HTML-like comments.
    const kept = await processor.handle(
      { code: 'var s = "<!-- x -->";\nvar t = `\n--> y\n<!-- z`;\n<!-- gone\n', language: 'javascript' },
      jobContext(),
    );
    expect(kept.code).toBe('var s = "<!-- x -->";\nvar t = `\n--> y\n<!-- z`;');
    const mod = await processor.handle(
      { code: 'import x from "y";\nvar a = x <!--b;\n', language: 'javascript' },
      jobContext(),
    );
    expect(mod.code).toBe('import x from "y";\nvar a = x <!--b;');
  });

  it('Python and Go outputs still compile', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'code-denoise-real-'));
    try {
      if (await hasTool('python3')) {
        const out = await processor.handle(
          { code: readFileSync(new URL('python.py', DIR), 'utf8'), language: 'python' },
          jobContext(),
        );
        await writeFile(join(dir, 'colorsys_denoised.py'), out.code);
        const { stdout } = await run(
          'python3',
          [
            '-c',
            'import colorsys, colorsys_denoised as d; print(d.rgb_to_hls(0.2, 0.4, 0.4) == colorsys.rgb_to_hls(0.2, 0.4, 0.4), d.hsv_to_rgb(0.6, 0.5, 0.5) == colorsys.hsv_to_rgb(0.6, 0.5, 0.5))',
          ],
          { cwd: dir, timeout: 30_000 },
        );
        expect(stdout.trim()).toBe('True True');
      }
      if (await hasTool('gofmt')) {
        const out = await processor.handle(
          { code: readFileSync(new URL('go.go', DIR), 'utf8'), language: 'go' },
          jobContext(),
        );
        await writeFile(join(dir, 'builder.go'), out.code);
        await expect(run('gofmt', ['-e', join(dir, 'builder.go')], { timeout: 30_000 })).resolves.toBeDefined();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
