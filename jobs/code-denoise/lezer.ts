/**
 * The languages read by a Lezer grammar (JavaScript/TypeScript/JSX, Python,
 * CSS, HTML, Go, Rust, Java, C, C++, SQL dialects): the parser's syntax tree
 * says what is a comment and what is a literal; normalize.ts rebuilds the
 * text. Lezer parsers recover from errors, so invalid code is still read
 * (its error nodes are counted and reported). The grammar table is here;
 * the tree walk is lezer-walk.ts, SQL lezer-sql.ts, HTML lezer-html.ts.
 */
import type { SyntaxNode, Tree } from '@lezer/common';
import { parser as cppParser } from '@lezer/cpp';
import { parser as cssParser } from '@lezer/css';
import { parser as goParser } from '@lezer/go';
import { parser as javaParser } from '@lezer/java';
import { parser as jsParser } from '@lezer/javascript';
import { parser as pythonParser } from '@lezer/python';
import { parser as rustParser } from '@lezer/rust';
import { blankRanges, htmlLikeComments } from './html-like-comments.js';
import type { Language } from './languages.js';
import { denoiseHtml } from './lezer-html.js';
import { denoiseSql } from './lezer-sql.js';
import { bestTree, collect, cSpace, lineSensitive, set, type DenoiseResult, type Grammar } from './lezer-walk.js';
import { normalize, type Edit } from './normalize.js';

const isWord = (c: string) => /[\w$\u0080-\uFFFF-]/.test(c);

const JS_KEEP =
  /^(?:\/\/\/\s*<(?:reference|amd-module|amd-dependency)\b|\/[/*]\s*@ts-(?:ignore|expect-error|nocheck|check)\b|\/\*\*?\s*@jsx(?:ImportSource|Runtime|Frag)?\b)/;
/** Go comments the toolchain reads: compiler directives, build constraints, line directives, cgo exports. */
const GO_KEEP = /^(?:\/\/(?:go:|line |export |extern |\s*\+build\b)|\/\*line )/;

const jsGrammar = (dialects: string[]): Grammar => ({
  parsers: dialects.map((dialect) => jsParser.configure({ dialect })),
  comments: set('LineComment', 'BlockComment'),
  literals: set('String', 'TemplateString', 'RegExp', 'JSXText', 'JSXAttributeValue'),
  blockSeparator: lineSensitive,
  keep: (comment) => JS_KEEP.test(comment),
});

/**
 * A preprocessor directive, read here: Lezer's C++ grammar takes a
 * directive's argument as raw text and cuts it at the first `//` even inside
 * a string (`#define URL "http://x"`). This reads the directive the way the
 * C preprocessor does: string and character literals (and `<header>` names)
 * kept, comments removed (a `//` comment continued by a trailing backslash
 * included), the rest is code (backslash-newline continuations stay).
 */
function cDirective(node: SyntaxNode, source: string, edits: Edit[]): number | undefined {
  if (node.name !== 'PreprocDirective') return undefined;
  const end = node.to;
  let removed = 0;
  let k = node.from;
  const header = /^#\s*(?:include|include_next|import)\s*</.exec(source.slice(k, Math.min(end, k + 40)));
  if (header) {
    const close = source.indexOf('>', k + header[0].length);
    if (close >= 0 && close < end) {
      edits.push({ from: k + header[0].length - 1, to: close + 1, kind: 'keep' });
      k = close + 1;
    }
  }
  while (k < end) {
    const c = source[k];
    if (c === '"' || c === "'") {
      let j = k + 1;
      while (j < end && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      edits.push({ from: k, to: Math.min(j + 1, end), kind: 'keep' });
      k = j + 1;
    } else if (c === '/' && source[k + 1] === '/') {
      let j = k;
      for (;;) {
        const eol = source.indexOf('\n', j);
        const lineEnd = eol < 0 || eol > end ? end : eol;
        if (source[lineEnd - 1] === '\\' && lineEnd < end) j = lineEnd + 1;
        else {
          j = lineEnd;
          break;
        }
      }
      edits.push({ from: k, to: j, kind: 'remove', sep: '' });
      removed++;
      k = j;
    } else if (c === '/' && source[k + 1] === '*') {
      const close = source.indexOf('*/', k + 2);
      const j = close < 0 ? end : close + 2;
      edits.push({ from: k, to: j, kind: 'remove', sep: ' ' });
      removed++;
      k = j;
    } else k++;
  }
  return removed;
}

const cGrammar: Grammar = {
  parsers: [cppParser],
  comments: set('LineComment', 'BlockComment'),
  literals: set('String', 'RawString', 'CharLiteral', 'SystemLibString'),
  blockSeparator: cSpace,
  special: cDirective,
};

const GRAMMARS: Partial<Record<Language, Grammar>> = {
  javascript: jsGrammar(['', 'jsx']),
  typescript: jsGrammar(['ts', 'ts jsx']),
  python: {
    parsers: [pythonParser],
    comments: set('Comment'),
    literals: set('String', 'FormatString'),
    blockSeparator: cSpace,
    // The shebang line is read by the system, not Python.
    keep: (comment, node) => node.from === 0 && comment.startsWith('#!'),
    keepIndent: true,
  },
  css: {
    parsers: [cssParser],
    comments: set('Comment'),
    literals: set('StringLiteral', 'String', 'ColorLiteral', 'ParenthesizedContent'),
    // A CSS comment is not whitespace: `.a/**/.b` is `.a.b`; only two words would fuse.
    blockSeparator: (_c, before, after) => (isWord(before) && isWord(after) ? ' ' : ''),
  },
  go: {
    parsers: [goParser],
    comments: set('LineComment', 'BlockComment'),
    literals: set('String', 'Rune'),
    blockSeparator: lineSensitive,
    keep: (comment, node, source, memo) => GO_KEEP.test(comment) || isCgoPreamble(node, source, memo),
  },
  rust: {
    parsers: [rustParser],
    comments: set('LineComment', 'BlockComment'),
    literals: set('String', 'RawString', 'Char'),
    blockSeparator: cSpace,
  },
  java: {
    parsers: [javaParser],
    comments: set('LineComment', 'BlockComment'),
    literals: set('StringLiteral', 'TextBlock', 'CharacterLiteral'),
    blockSeparator: cSpace,
  },
  c: cGrammar,
  cpp: cGrammar,
};

/**
 * The comment group right above `import "C"` is the C code cgo compiles. The verdict holds for every comment of the
 * group, so the group is walked once and its verdict remembered in `memo` for the others (walking it again from
 * each comment was quadratic in the group's length).
 */
function isCgoPreamble(node: SyntaxNode, source: string, memo: Map<number, boolean>): boolean {
  const known = memo.get(node.from);
  if (known !== undefined) return known;
  const group = [node.from];
  let next = node.nextSibling;
  while (next && (next.name === 'LineComment' || next.name === 'BlockComment')) {
    group.push(next.from);
    next = next.nextSibling;
  }
  const verdict =
    next !== null &&
    next.name === 'ImportDecl' &&
    onlyBlanksAndComments(source.slice(node.to, next.from)) &&
    /^import\s*"C"/.test(source.slice(next.from, next.to));
  for (const from of group) memo.set(from, verdict);
  return verdict;
}

/**
 * Whether `text` holds only blanks and Go comments (a comment left open does not count), in one pass: removing
 * `/\*[\s\S]*?\*\//` matches rescanned the rest of the text from every "/*" of an unclosed run.
 */
function onlyBlanksAndComments(text: string): boolean {
  let i = 0;
  while (i < text.length) {
    if (/\s/.test(text[i]!)) i++;
    else if (text.startsWith('//', i)) {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? text.length : eol;
    } else if (text.startsWith('/*', i)) {
      const close = text.indexOf('*/', i + 2);
      if (close < 0) return false;
      i = close + 2;
    } else return false;
  }
  return true;
}

/** Module, class and function docstrings (PEP 257): removed, and `pass` where the body would be empty. */
function pythonDocstrings(tree: Tree, source: string, edits: Edit[]): number {
  let removed = 0;
  const isStatement = (n: SyntaxNode) =>
    n.name !== ':' && n.name !== 'Comment' && !n.type.isError && /Statement|Definition|Decorated/.test(n.name);
  tree.iterate({
    enter: (ref) => {
      if (ref.name !== 'Script' && ref.name !== 'Body') return;
      const scope = ref.node;
      const statements: SyntaxNode[] = [];
      for (let c = scope.firstChild; c; c = c.nextSibling) if (isStatement(c)) statements.push(c);
      const first = statements[0];
      if (!first || first.name !== 'ExpressionStatement') return;
      const only = first.firstChild;
      if (!only || only.name !== 'String' || only.nextSibling || only.from !== first.from || only.to !== first.to)
        return;
      if (/^[bB]/.test(source.slice(only.from, only.from + 2).replace(/^[rR]/, ''))) return; // bytes are no docstring
      const inDefinition =
        scope.name === 'Body' && /^(?:FunctionDefinition|ClassDefinition)$/.test(scope.parent?.name ?? '');
      if (scope.name === 'Body' && !inDefinition) return;
      edits.push({
        from: first.from,
        to: first.to,
        kind: 'remove',
        sep: statements.length === 1 && scope.name === 'Body' ? 'pass' : '',
      });
      removed++;
    },
  });
  return removed;
}

export function denoiseWithGrammar(language: Language, source: string, alias: string = language): DenoiseResult {
  if (language === 'sql' || language === 'mysql') return denoiseSql(source, alias);
  if (language === 'html') return denoiseHtml(source, (embedded, text) => denoiseWithGrammar(embedded, text));
  const grammar = GRAMMARS[language];
  if (!grammar) throw new Error(`no grammar for ${language}`);
  let { tree, errors } = bestTree(grammar.parsers, source);
  const edits: Edit[] = [];
  let commentsRemoved = 0;
  if (language === 'javascript') {
    // Classic scripts' `<!--` / `-->` line comments: read the rest with them blanked out.
    // A marker the grammar's error recovery swallowed shows once the ones before it are blanked: read again.
    const html: { from: number; to: number }[] = [];
    for (let pass = 0; pass < 8; pass++) {
      const found = htmlLikeComments(blankRanges(source, html), tree).filter(
        (r) => !html.some((h) => h.from === r.from),
      );
      if (!found.length) break;
      html.push(...found);
      html.sort((a, b) => a.from - b.from);
      ({ tree, errors } = bestTree(grammar.parsers, blankRanges(source, html)));
    }
    for (const r of html) edits.push({ from: r.from, to: r.to, kind: 'remove', sep: '' });
    commentsRemoved += html.length;
  }
  commentsRemoved += collect(grammar, tree, source, edits);
  if (language === 'python') commentsRemoved += pythonDocstrings(tree, source, edits);
  return {
    code: normalize(source, edits, { keepIndent: grammar.keepIndent === true }),
    commentsRemoved,
    syntaxErrors: errors,
  };
}
