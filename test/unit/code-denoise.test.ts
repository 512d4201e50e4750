/**
 * code-denoise per language, on fixtures with comment markers hidden inside
 * strings, regexes, templates, raw strings, heredocs, URLs and colors
 * (test/fixtures/code/tricky.*):
 *  - every literal token of the input (as the language's own Lezer grammar
 *    reads it) comes out byte for byte, in order; comments are gone;
 *  - JS, TS and Python output parses without an error node; Go output passes
 *    `gofmt -e` (the Go toolchain's parser) when the toolchain is installed;
 *  - shell: mvdan/sh's parser (sh-syntax, shfmt in WASM) reads the same
 *    program before and after (equal minified prints);
 *  - JavaScript (node), Python (python3), shell (bash) and C (gcc) programs
 *    print exactly the same before and after (skipped where the tool is missing);
 *  - a second pass changes nothing; language aliases; unknown language 400
 *    `unsupported_language` naming `language` and the supported list; the
 *    statistics; no super-linear growth on a 40x larger input (latency figures: npm run bench:utility).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MySQL, PostgreSQL, SQLDialect } from '@codemirror/lang-sql';
import type { Tree } from '@lezer/common';
import { parser as cppParser } from '@lezer/cpp';
import { parser as cssParser } from '@lezer/css';
import { parser as goParser } from '@lezer/go';
import { parser as javaParser } from '@lezer/java';
import { parser as jsParser } from '@lezer/javascript';
import { parser as pythonParser } from '@lezer/python';
import { parser as rustParser } from '@lezer/rust';
import { parse as parseJsonc } from 'jsonc-parser';
import { print as printShell } from 'sh-syntax';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeDenoiseOutput } from '../../jobs/code-denoise/sku.js';
import { JOB_SKUS } from '../../api/catalogue/sku-list.js';
import { JobError } from '../../core/queue/queue.js';
import { SUPPORTED_LANGUAGES } from '../../jobs/code-denoise/languages.js';
import { createCodeDenoiseProcessor, type CodeDenoiseResponse } from '../../jobs/code-denoise/processor.js';
import { jobContext, processorDeps } from '../helpers/text-skus.js';

const run = promisify(execFile);
const fixture = (name: string) => readFileSync(new URL(`../fixtures/code/${name}`, import.meta.url), 'utf8');
const processor = await createCodeDenoiseProcessor(processorDeps());

async function denoise(code: string, language?: string): Promise<CodeDenoiseResponse> {
  const body = await processor.handle(language === undefined ? { code } : { code, language }, jobContext());
  const check = CodeDenoiseOutput.safeParse(body);
  expect(check.success, JSON.stringify(check.error?.issues)).toBe(true);
  return body;
}

const hasTool = async (cmd: string) =>
  run('sh', ['-c', `command -v ${cmd}`], { timeout: 10_000 }).then(
    () => true,
    () => false,
  );

// ------------------------------------------------------------------ literal tokens, read by each language's grammar

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
  sql: { parse: (s) => PostgreSQL.language.parser.parse(s), literals: ['String', 'QuotedIdentifier'] },
  mysql: { parse: (s) => MYSQL.language.parser.parse(s), literals: ['String', 'QuotedIdentifier'] },
};

function scan(language: string, source: string): { literals: string[]; errors: number } {
  const g = GRAMMARS[language]!;
  const literals: string[] = [];
  let errors = 0;
  g.parse(source).iterate({
    enter: (n) => {
      if (n.type.isError) errors++;
      if (n.name === 'TemplateString') {
        // A template's own text, its ${...} code elided (that code is read like any other: literals in it count on their own).
        let text = '';
        let at = n.from;
        for (let c = n.node.firstChild; c; c = c.nextSibling) {
          if (c.name !== 'Interpolation') continue;
          text += `${source.slice(at, c.from)}\${…}`;
          at = c.to;
        }
        literals.push(text + source.slice(at, n.to));
        return undefined;
      }
      if (g.literals.includes(n.name)) {
        literals.push(source.slice(n.from, n.to));
        return false;
      }
      return undefined;
    },
  });
  return { literals, errors };
}

interface Case {
  file: string;
  language: string;
  /** Grammar used to compare literals (GRAMMARS key). */
  grammar?: string;
  /** Comment texts that must be gone. */
  gone: string[];
  /** Texts that must come out exactly (literals, directives). */
  kept: string[];
  /** Literals the processor removes on purpose (docstrings). */
  dropped?: string[];
}

const CASES: Case[] = [
  {
    file: 'tricky.js',
    language: 'javascript',
    grammar: 'javascript',
    gone: [
      'Module header',
      'trailing comment',
      'a regex that matches',
      'ASI must still see',
      'indented comment',
      '/* after */',
      '// why',
      'sourceMappingURL',
      'interpolation comment',
      '// not a regex',
    ],
    kept: [
      '#!/usr/bin/env node',
      '"http://example.com/a//b/*c*/"',
      "'it\\'s /* not a comment */ // nor this'",
      '/\\/\\*[^*]*\\*\\//g',
      '`line one // kept\n  /* kept too */  ${',
      "}  spaces   kept\n${`nested ${'// deep'}`}`",
      "'#ff00aa'",
      'let b = a\n+ 2',
    ],
  },
  {
    file: 'tricky.ts',
    language: 'ts',
    grammar: 'typescript',
    gone: [
      'A documented interface',
      '// horizontal',
      'vertical',
      'mapper',
      '// backing array',
      'Adds an item',
      '// alias',
      'sourceMappingURL',
      '/* x */',
    ],
    kept: [
      '/// <reference types="node" />',
      '// @ts-check',
      '"C:\\\\temp\\\\//not-comment"',
      '/[/*]+/',
      "'#f00'",
      '"#0f0"',
      ', ${p.y}) // point`',
    ],
  },
  {
    file: 'tricky.py',
    language: 'python',
    grammar: 'python',
    gone: [
      'coding: utf-8',
      'Module docstring',
      'the regex module',
      "'#' inside a string",
      'Return a greeting',
      'a comment line',
      'trailing comment',
      'Class docstring',
      '# flag',
      'One-line docstring',
      '# first',
      'Nothing but a docstring',
    ],
    kept: [
      '#!/usr/bin/env python3',
      '"http://example.com/#anchor"',
      'r"#\\s*(\\w+)"',
      "'#not-a-comment'",
      '"""keep this # hash\n   and this indentation\n\n   and the blank line above"""',
      'f"Hello, {name}{punctuation}  # kept"',
      'def only_docstring():\n    pass\n',
      '        values = [\n            1,\n            2,\n        ]',
    ],
    dropped: [
      '"""Module docstring.\n\nSpans several lines.\n"""',
      '"""Return a greeting.\n\n    The docstring goes away.\n    """',
      '"""Nothing but a docstring: the body needs a statement."""',
      "'''Class docstring.'''",
      '"One-line docstring."',
    ],
  },
  {
    file: 'tricky.css',
    language: 'css',
    grammar: 'css',
    gone: ['Theme styles', 'brand blue', 'Hero section', '/* image */', 'sourceMappingURL'],
    kept: [
      '#3B82F6',
      '#FFF',
      'url(http://cdn.example.com/img/hero.png)',
      '"/* not a comment */ // nor this"',
      '.a.b { margin: 0 auto; }',
      'a[href^="http://"]::after',
      '.hero > .title',
    ],
  },
  {
    file: 'tricky.go',
    language: 'golang',
    grammar: 'go',
    gone: ['Package main is a demo', '// formatting', 'Greeting holds', '// the text', '// a comment', '/* inline */'],
    kept: [
      '/*\n#include <stdio.h>\nstatic void hello(void) { printf("hi\\n"); }\n*/\nimport "C"',
      '//go:generate echo generating',
      '`raw string // with /* comment markers */\n  and indentation`',
      '"hello // world"',
      "'/'",
      'x := 1 + 2',
    ],
  },
  {
    file: 'tricky.rs',
    language: 'rs',
    grammar: 'rust',
    gone: ['Crate-level docs', 'A documented function', '// line comment', 'nested', 'inline', '// print'],
    kept: ['"a // b /* c */"', 'r#"raw "quoted" // text"#', "'/'", 'let x = 1 + 2;'],
  },
  {
    file: 'tricky.java',
    language: 'java',
    grammar: 'java',
    gone: ['Javadoc for the class', '// a field', '// trailing', '/* main */', 'inline', '// print'],
    kept: [
      '"http://example.com/*x*/"',
      "'/'",
      '"""\n        text block // with markers /* kept */\n          indented\n        """',
    ],
  },
  {
    file: 'tricky.c',
    language: 'c',
    grammar: 'cpp',
    gone: [
      'comments inside strings and directives',
      'standard I/O',
      'a block comment',
      'continued macro',
      'main prints',
      '// trailing',
      'inline',
    ],
    kept: [
      '#include <stdio.h>\n',
      '#define GREETING "hello // not a comment"\n',
      '#define URL "http://example.com/*x*/"\n',
      '#define ADD(a, b) \\\n((a) + (b))\n',
      '"a /* b */ c"',
      '"  two  spaces  "',
    ],
  },
  {
    file: 'tricky.cpp',
    language: 'c++',
    grammar: 'cpp',
    gone: ['C++ with raw strings', 'Doc comment', '// comment', '/* lambda */'],
    kept: ['R"(raw // text /* here */)"', '"plain // string"'],
  },
  {
    file: 'tricky.sql',
    language: 'postgresql',
    grammar: 'sql',
    gone: ['Reporting query', 'Multi-line', 'display name', 'outer', 'last month'],
    kept: [
      "'it''s -- not a comment'",
      '"weird /* column */"',
      '$body$ keep -- this $body$',
      "'%@example.com'",
      "interval '30 days'",
    ],
  },
  {
    file: 'tricky-mysql.sql',
    language: 'mysql',
    grammar: 'mysql',
    gone: ['MySQL dump header', '-- comment', 'trailing'],
    kept: ['/*!40101 SET NAMES utf8mb4 */', '/*+ MAX_EXECUTION_TIME(1000) */', '`user--name`', "'It\\'s -- fine'"],
  },
];

describe('code-denoise: languages read by a grammar', () => {
  it.each(CASES)('$file ($language): comments gone, literals byte for byte, output parses', async (c) => {
    const source = fixture(c.file);
    const body = await denoise(source, c.language);
    for (const g of c.gone) expect(body.code, `comment still there: ${g}`).not.toContain(g);
    for (const k of c.kept) expect(body.code, `not kept exactly: ${k}`).toContain(k);
    expect(body.comments_removed).toBeGreaterThanOrEqual(c.gone.length > 4 ? 4 : 1);
    expect(body.syntax_errors).toBe(0);
    if (c.grammar) {
      const before = scan(c.grammar, source);
      const after = scan(c.grammar, body.code);
      const dropped = new Set(c.dropped ?? []);
      expect(after.literals).toEqual(before.literals.filter((l) => !dropped.has(l)));
      expect(after.errors, 'the output parses without an error node').toBe(0);
    }
    expect(body.code).not.toMatch(/[ \t]+$/m); // no trailing blanks
  });

  it('leaves the code unchanged on a second pass', async () => {
    for (const c of CASES) {
      const once = await denoise(fixture(c.file), c.language);
      const twice = await denoise(once.code, c.language);
      expect(twice.code, c.file).toBe(once.code);
      expect(twice.comments_removed, c.file).toBe(0);
    }
  });
});

describe('code-denoise: HTML, JSON with comments, shell', () => {
  it('HTML: comments gone, attribute values, pre, textarea and non-JS scripts kept; scripts and styles denoised in their language', async () => {
    const body = await denoise(fixture('tricky.html'), 'html');
    for (const g of [
      'Page template',
      'navigation',
      'no space here',
      'inline styles',
      '/* text */',
      'comment in JSON-LD',
      'a script comment',
      'js comment',
    ])
      expect(body.code).not.toContain(g);
    for (const k of [
      'class="lead   text" data-x="a -- b"',
      'Hello <b>world</b>!</p>', // the comment was not whitespace: none added
      '<pre>\n  preformatted    text\n      <!-- this comment is inside pre: the parser sees a comment --> stays\n</pre>',
      '<textarea name="t">  keep   this  </textarea>',
      '<style>body { color: #333; }</style>',
      '<script type="application/ld+json">{"@type":"Thing","name":"a  b"}</script>',
      '<script>const s = "<!-- not an html comment -->";\ndocument.title = s;</script>',
      '<script type="text/template"><div>  {{ keep }}  </div></script>',
    ])
      expect(body.code).toContain(k);
    expect(body.comments_removed).toBe(8);
  });

  it('JSONC: comments and whitespace gone, same value, strings untouched', async () => {
    const source = fixture('tricky.jsonc');
    for (const alias of ['json', 'jsonc']) {
      const body = await denoise(source, alias);
      expect(body.language).toBe('jsonc');
      expect(body.code).toBe(
        '{"editor.fontSize":14,"files.exclude":{"**/.git":true,"**/node_modules":true},"url":"http://example.com/a//b /* not a comment */","values":[1,2.5e3,-3,true,false,null,],}',
      );
      expect(parseJsonc(body.code, [], { allowTrailingComma: true })).toEqual(
        parseJsonc(source, [], { allowTrailingComma: true }),
      );
      expect(body.comments_removed).toBe(4);
    }
    expect((await denoise('{"a": tru e}', 'json')).syntax_errors).toBeGreaterThan(0);
  });

  it("shell: mvdan/sh (shfmt's parser) reads the same program before and after", async () => {
    // Its minified print drops comments and layout and keeps everything else: the two prints must be equal.
    const minified = (code: string) => printShell(code, { minify: true, keepComments: false });
    const snippets = [
      fixture('tricky.sh'),
      'x=1 # c\nif [ "$x" = 1 ]; then # why\n  echo "a # b" \\\n    c # d\nfi\n',
      'f() { # open\n  local v="${1:-d # x}" # after\n  echo ${#v} $# # n\n}\nf a\n',
      'cat <<A; cat <<-B # two heredocs\n  a # 1\nA\n\tb # 2\n\tB\necho done\n',
    ];
    for (const source of snippets) {
      const { code } = await denoise(source, 'bash');
      expect(await minified(code), source).toBe(await minified(source));
    }
  });

  it('shell: comments only at word starts; quotes, expansions and heredocs byte for byte', async () => {
    const body = await denoise(fixture('tricky.sh'), 'bash');
    for (const g of [
      'Deploy helper',
      'strict mode',
      'length of NAME',
      'prints five args',
      "'#' inside a word",
      'a function',
      'comment after',
      'loop comment',
      'after continuation',
      '# array',
      '# matched',
    ])
      expect(body.code).not.toContain(g);
    for (const k of [
      '#!/usr/bin/env bash\n',
      'NAME="hello   # not a comment"',
      "GREETING='single  # quoted'",
      "ANSI=$'tab\\t# escaped'",
      'count=${#NAME}\n',
      '"$count" $#\n',
      'url=http://example.com/#frag\n',
      'hex=$((16#ff))',
      'local who="${1:-world  # default}"\n',
      'cat <<EOF\n  heredoc   keeps # everything\n\n    including $NAME and indentation\nEOF\n',
      "cat <<-'QUOTED'\n\ttab-stripped $NOT_EXPANDED # kept\n\tQUOTED\n",
      'echo "item: $f" \\\n"continued"\n',
      'echo a\\  b\n',
      'result="$(echo "inner  spaces" # comment inside substitution\n)"',
      'arr=( one "two  three" )',
    ])
      expect(body.code).toContain(k);
    expect(body.syntax_errors).toBe(0);
    expect((await denoise('echo "unterminated', 'sh')).syntax_errors).toBe(1);
  });
});

describe('code-denoise: the programs still do the same', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'code-denoise-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const both = async (file: string, language: string, ext: string, exec: (path: string) => Promise<string>) => {
    const source = fixture(file);
    const { code } = await denoise(source, language);
    await writeFile(join(dir, `before.${ext}`), source);
    await writeFile(join(dir, `after.${ext}`), code);
    const before = await exec(join(dir, `before.${ext}`));
    const after = await exec(join(dir, `after.${ext}`));
    expect(before.length).toBeGreaterThan(20);
    expect(after).toBe(before);
  };

  it('JavaScript under node', async () => {
    await both(
      'tricky.js',
      'javascript',
      'cjs',
      async (p) => (await run(process.execPath, [p], { timeout: 20_000 })).stdout,
    );
  });

  it('Python under python3', async (ctx) => {
    if (!(await hasTool('python3'))) return ctx.skip();
    await both('tricky.py', 'python', 'py', async (p) => (await run('python3', [p], { timeout: 20_000 })).stdout);
  });

  it('shell under bash', async (ctx) => {
    if (!(await hasTool('bash'))) return ctx.skip();
    await both('tricky.sh', 'sh', 'sh', async (p) => (await run('bash', [p], { timeout: 20_000 })).stdout);
  });

  it('C compiled by gcc', async (ctx) => {
    if (!(await hasTool('gcc'))) return ctx.skip();
    await both('tricky.c', 'c', 'c', async (p) => {
      await run('gcc', ['-Wall', '-o', `${p}.bin`, p], { timeout: 30_000 });
      return (await run(`${p}.bin`, [], { timeout: 10_000 })).stdout;
    });
  });

  it('Go output accepted by gofmt -e', async (ctx) => {
    if (!(await hasTool('gofmt'))) return ctx.skip();
    const { code } = await denoise(fixture('tricky.go'), 'go');
    const path = join(dir, 'after.go');
    await writeFile(path, code);
    await expect(run('gofmt', ['-e', '-l', path], { timeout: 20_000 })).resolves.toBeDefined();
  });
});

describe('code-denoise: languages, errors, statistics', () => {
  it('answers the catalogue example exactly (JavaScript by default)', async () => {
    const sku = JOB_SKUS.find((s) => s.id === 'code-denoise')!;
    const { code } = sku.exampleInput as { code: string };
    expect(await denoise(code)).toEqual(sku.example);
  });

  it('resolves aliases case-insensitively to the canonical language', async () => {
    const aliases: [string, string][] = [
      ['JS', 'javascript'],
      ['tsx', 'typescript'],
      ['Py', 'python'],
      ['bash', 'shell'],
      ['C++', 'cpp'],
      ['golang', 'go'],
      ['rs', 'rust'],
      ['jsonc', 'jsonc'],
      ['htm', 'html'],
      ['mariadb', 'mysql'],
      ['sqlite', 'sql'],
    ];
    for (const [alias, canonical] of aliases) expect((await denoise('x', alias)).language, alias).toBe(canonical);
  });

  it('answers 400 unsupported_language with the supported list', async () => {
    const err = await processor
      .handle({ code: 'puts 1 # ruby', language: 'ruby' }, jobContext())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobError);
    expect(err).toMatchObject({
      code: 'unsupported_language',
      status: 400,
      details: { field: 'language', supported: SUPPORTED_LANGUAGES },
    });
    expect(SUPPORTED_LANGUAGES).toEqual([
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
    ]);
    const bad = await processor.handle({ code: '' }, jobContext()).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'invalid_parameter', status: 400, details: { field: 'code' } });
  });

  it('keeps JS statements apart where a removed comment held the only line break (ASI)', async () => {
    const { code } = await denoise('let a = 1 /*\n*/ let b = 2\nreturn /* x\ny */ value');
    expect(code).toBe('let a = 1\nlet b = 2\nreturn\nvalue');
    expect(scan('javascript', code).errors).toBe(0);
  });

  it('reports the statistics', async () => {
    const source = fixture('tricky.js');
    const body = await denoise(source);
    expect(body.original_length).toBe(source.length);
    expect(body.shrunk_length).toBe(body.code.length);
    expect(body.reduction_pct).toBeCloseTo((1 - body.code.length / source.length) * 100, 2);
    expect(body.tokens_saved_estimate).toBe(Math.ceil(source.length / 4) - Math.ceil(body.code.length / 4));
  });

  it('a 40x larger input costs about what its 40 parts cost alone (no super-linear growth)', async () => {
    // Latency per fixture is a figure for the bench (npm run bench:utility), not a test: this only guards the shape.
    // The same ~44 KB of JavaScript as one input and as 40 inputs of ~1.1 KB, interleaved, medians of 5 rounds:
    // linear work gives a ratio near 1 (about 2 measured: the big parse's garbage), quadratic near 40. The ceiling
    // of 10 leaves room for a busy machine.
    const part = fixture('tricky.js');
    const whole = part.repeat(40);
    const timed = async (inputs: string[]) => {
      const t0 = performance.now();
      for (const code of inputs) await processor.handle({ code, language: 'js' }, jobContext());
      return performance.now() - t0;
    };
    const parts = Array.from({ length: 40 }, () => part);
    await timed([whole]);
    await timed(parts); // warm-up
    const wholeMs: number[] = [];
    const partsMs: number[] = [];
    for (let round = 0; round < 5; round++) {
      wholeMs.push(await timed([whole]));
      partsMs.push(await timed(parts));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratio = median(wholeMs) / median(partsMs);
    console.log(
      `code-denoise: 44 KB at once ${median(wholeMs).toFixed(1)} ms, as 40 parts ${median(partsMs).toFixed(1)} ms (ratio ${ratio.toFixed(2)})`,
    );
    expect(ratio).toBeLessThan(10);
  });
});
