/**
 * The languages read by a Lezer grammar (JavaScript/TypeScript/JSX, Python,
 * CSS, HTML, Go, Rust, Java, C, C++, SQL dialects): the parser's syntax tree
 * says what is a comment and what is a literal; normalize.ts rebuilds the
 * text. Lezer parsers recover from errors, so invalid code is still read
 * (its error nodes are counted and reported).
 */
import { MSSQL, MariaSQL, MySQL, PLSQL, PostgreSQL, SQLDialect, SQLite } from '@codemirror/lang-sql';
import type { SyntaxNode, Tree } from '@lezer/common';
import { parser as cppParser } from '@lezer/cpp';
import { parser as cssParser } from '@lezer/css';
import { parser as goParser } from '@lezer/go';
import { parser as htmlParser } from '@lezer/html';
import { parser as javaParser } from '@lezer/java';
import { parser as jsParser } from '@lezer/javascript';
import { parser as pythonParser } from '@lezer/python';
import { parser as rustParser } from '@lezer/rust';
import type { LRParser } from '@lezer/lr';
import { blankRanges, htmlLikeComments } from './html-like-comments.js';
import type { DenoiseResult } from './denoise-result.js';
import { denoiseJsonc } from './jsonc.js';
import type { Language } from './languages.js';
import { normalize, type Edit } from './normalize.js';

interface Grammar {
  /** Parsers to try in order; the first with no error node wins, else the one with the fewest. */
  parsers: LRParser[];
  comments: ReadonlySet<string>;
  /** Tokens kept byte for byte. */
  literals: ReadonlySet<string>;
  /** What a removed block comment leaves: a newline when it spanned lines (JS, Go), else a space; `''` for HTML. */
  blockSeparator: (comment: string, before: string, after: string) => string;
  /** Comments that are not noise (directives a compiler or tool reads). */
  keep?: (comment: string, node: SyntaxNode, source: string) => boolean;
  keepIndent?: boolean;
  /** Reads a node itself (pushing its edits) and returns the comments it removed, or undefined to let the walk read it. */
  special?: (node: SyntaxNode, source: string, edits: Edit[]) => number | undefined;
}

const set = (...names: string[]) => new Set(names);
const cSpace = () => ' ';
const lineSensitive = (comment: string) => (comment.includes('\n') ? '\n' : ' ');
const isWord = (c: string) => /[\w$\u0080-\uFFFF-]/.test(c);

const JS_KEEP = /^(?:\/\/\/\s*<(?:reference|amd-module|amd-dependency)\b|\/[/*]\s*@ts-(?:ignore|expect-error|nocheck|check)\b|\/\*\*?\s*@jsx(?:ImportSource|Runtime|Frag)?\b)/;
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
    keep: (comment, node, source) => GO_KEEP.test(comment) || isCgoPreamble(node, source),
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

/** The comment group right above `import "C"` is the C code cgo compiles. */
function isCgoPreamble(node: SyntaxNode, source: string): boolean {
  let next = node.nextSibling;
  while (next && (next.name === 'LineComment' || next.name === 'BlockComment')) next = next.nextSibling;
  if (!next || next.name !== 'ImportDecl') return false;
  if (!/^\s*$/.test(source.slice(node.to, next.from).replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, ''))) return false;
  return /^import\s*"C"/.test(source.slice(next.from, next.to));
}

function countErrors(tree: Tree): number {
  let errors = 0;
  tree.iterate({
    enter: (n) => {
      if (n.type.isError) errors++;
    },
  });
  return errors;
}

function bestTree(parsers: LRParser[], source: string): { tree: Tree; errors: number } {
  let best: { tree: Tree; errors: number } | undefined;
  for (const p of parsers) {
    const tree = p.parse(source);
    const errors = countErrors(tree);
    if (!best || errors < best.errors) best = { tree, errors };
    if (errors === 0) break;
  }
  return best!;
}

/** Comments and literals of a grammar-read source as edits; `nested` denoises embedded code (HTML scripts and styles). */
function collect(grammar: Grammar, tree: Tree, source: string, edits: Edit[]): number {
  let removed = 0;
  const visit = (node: SyntaxNode): void => {
    const name = node.name;
    const handled = grammar.special?.(node, source, edits);
    if (handled !== undefined) {
      removed += handled;
      return;
    }
    if (grammar.comments.has(name)) {
      const text = source.slice(node.from, node.to);
      if (grammar.keep?.(text, node, source)) {
        edits.push({ from: node.from, to: node.to, kind: 'keep' });
        return;
      }
      const block = !/^(?:\/\/|#|--)/.test(text);
      const sep = block ? grammar.blockSeparator(text, source[node.from - 1] ?? '\n', source[node.to] ?? '\n') : '';
      edits.push({ from: node.from, to: node.to, kind: 'remove', sep });
      removed++;
      return;
    }
    if (grammar.literals.has(name)) {
      if (name === 'TemplateString') {
        // The template's text is kept; the code in its ${...} is read like any other code.
        let at = node.from;
        for (let c = node.firstChild; c; c = c.nextSibling) {
          if (c.name !== 'Interpolation') continue;
          edits.push({ from: at, to: c.from, kind: 'keep' });
          visit(c);
          at = c.to;
        }
        edits.push({ from: at, to: node.to, kind: 'keep' });
        return;
      }
      edits.push({ from: node.from, to: node.to, kind: 'keep' });
      return;
    }
    for (let c = node.firstChild; c; c = c.nextSibling) visit(c);
  };
  visit(tree.topNode);
  return removed;
}

/** Module, class and function docstrings (PEP 257): removed, and `pass` where the body would be empty. */
function pythonDocstrings(tree: Tree, source: string, edits: Edit[]): number {
  let removed = 0;
  const isStatement = (n: SyntaxNode) => n.name !== ':' && n.name !== 'Comment' && !n.type.isError && /Statement|Definition|Decorated/.test(n.name);
  tree.iterate({
    enter: (ref) => {
      if (ref.name !== 'Script' && ref.name !== 'Body') return;
      const scope = ref.node;
      const statements: SyntaxNode[] = [];
      for (let c = scope.firstChild; c; c = c.nextSibling) if (isStatement(c)) statements.push(c);
      const first = statements[0];
      if (!first || first.name !== 'ExpressionStatement') return;
      const only = first.firstChild;
      if (!only || only.name !== 'String' || only.nextSibling || only.from !== first.from || only.to !== first.to) return;
      if (/^[bB]/.test(source.slice(only.from, only.from + 2).replace(/^[rR]/, ''))) return; // bytes are no docstring
      const inDefinition = scope.name === 'Body' && /^(?:FunctionDefinition|ClassDefinition)$/.test(scope.parent?.name ?? '');
      if (scope.name === 'Body' && !inDefinition) return;
      edits.push({ from: first.from, to: first.to, kind: 'remove', sep: statements.length === 1 && scope.name === 'Body' ? 'pass' : '' });
      removed++;
    },
  });
  return removed;
}

/** MySQL and MariaDB read a backslash in a string as an escape ('It\\'s'); lang-sql's dialects leave it out. */
const MYSQL = SQLDialect.define({ ...MySQL.spec, backslashEscapes: true });
const MARIADB = SQLDialect.define({ ...MariaSQL.spec, backslashEscapes: true });

function sqlDialect(alias: string): SQLDialect {
  switch (alias) {
    case 'mysql':
      return MYSQL;
    case 'mariadb':
      return MARIADB;
    case 'sqlite':
    case 'sqlite3':
      return SQLite;
    case 'tsql':
    case 't-sql':
    case 'mssql':
    case 'sqlserver':
      return MSSQL;
    case 'plsql':
    case 'oracle':
      return PLSQL;
    default:
      return PostgreSQL;
  }
}

/** MySQL runs `/*! ... *\/` (versioned code) and reads `/*+ ... *\/` (optimizer hints): code, not comments. */
const SQL_KEEP = /^\/\*[!+]/;

function denoiseSql(source: string, alias: string): DenoiseResult {
  let dialect = sqlDialect(alias);
  let tree = dialect.language.parser.parse(source);
  if (alias === 'sql') {
    // Generic "sql": PostgreSQL (the standard's quoting), unless backtick identifiers say MySQL.
    let backtick = false;
    tree.iterate({
      enter: (n) => {
        if (n.name === 'Operator' && source.slice(n.from, n.to) === '`') backtick = true;
      },
    });
    if (backtick) {
      dialect = MYSQL;
      tree = dialect.language.parser.parse(source);
    }
  }
  const grammar: Grammar = {
    parsers: [],
    comments: set('LineComment', 'BlockComment'),
    literals: set('String', 'QuotedIdentifier', 'Bits', 'Bytes', 'SpecialVar'),
    blockSeparator: cSpace,
    keep: (comment) => SQL_KEEP.test(comment),
  };
  const edits: Edit[] = [];
  const commentsRemoved = collect(grammar, tree, source, edits);
  return { code: normalize(source, edits, { keepIndent: false }), commentsRemoved, syntaxErrors: countErrors(tree) };
}

const SCRIPT_JS_TYPES = /^(?:|module|text\/javascript|application\/javascript|text\/ecmascript|application\/ecmascript|text\/babel|text\/jsx)$/i;
const SCRIPT_JSON_TYPES = /^(?:application\/(?:ld\+)?json|importmap|speculationrules|application\/manifest\+json)$/i;
const PRESERVED_ELEMENTS = /^(?:pre|textarea|listing|xmp|plaintext)$/i;

function denoiseHtml(source: string): DenoiseResult {
  const tree = htmlParser.parse(source);
  const edits: Edit[] = [];
  let commentsRemoved = 0;
  let syntaxErrors = countErrors(tree);
  const tagName = (element: SyntaxNode) => {
    const open = element.getChild('OpenTag');
    const name = open?.getChild('TagName');
    return name ? source.slice(name.from, name.to).toLowerCase() : '';
  };
  const attribute = (element: SyntaxNode, wanted: string): string | undefined => {
    const open = element.getChild('OpenTag');
    for (const attr of open?.getChildren('Attribute') ?? []) {
      const n = attr.getChild('AttributeName');
      if (!n || source.slice(n.from, n.to).toLowerCase() !== wanted) continue;
      const v = attr.getChild('AttributeValue') ?? attr.getChild('UnquotedAttributeValue');
      return v ? source.slice(v.from, v.to).replace(/^["']|["']$/g, '').trim() : '';
    }
    return undefined;
  };
  const embedded = (node: SyntaxNode, language: Language | 'json' | undefined) => {
    const text = source.slice(node.from, node.to);
    if (!language || /^\s*$/.test(text)) {
      edits.push({ from: node.from, to: node.to, kind: 'keep' });
      return;
    }
    const inner = language === 'json' ? denoiseJsonc(text) : denoiseWithGrammar(language, text);
    commentsRemoved += inner.commentsRemoved;
    syntaxErrors += inner.syntaxErrors;
    edits.push({ from: node.from, to: node.to, kind: 'replace', text: inner.code });
  };
  const visit = (node: SyntaxNode): void => {
    switch (node.name) {
      case 'Comment':
        edits.push({ from: node.from, to: node.to, kind: 'remove', sep: '' });
        commentsRemoved++;
        return;
      case 'AttributeValue':
      case 'UnquotedAttributeValue':
      case 'TextareaText':
        edits.push({ from: node.from, to: node.to, kind: 'keep' });
        return;
      case 'ScriptText': {
        const type = node.parent ? (attribute(node.parent, 'type') ?? '') : '';
        embedded(node, SCRIPT_JS_TYPES.test(type) ? 'javascript' : SCRIPT_JSON_TYPES.test(type) ? 'json' : undefined);
        return;
      }
      case 'StyleText':
        embedded(node, 'css');
        return;
      case 'Element': {
        if (PRESERVED_ELEMENTS.test(tagName(node))) {
          const open = node.getChild('OpenTag');
          const close = node.getChild('CloseTag');
          if (open) for (let c = open.firstChild; c; c = c.nextSibling) visit(c);
          const from = open?.to ?? node.from;
          const to = close?.from ?? node.to;
          if (to > from) edits.push({ from, to, kind: 'keep' });
          if (close) for (let c = close.firstChild; c; c = c.nextSibling) visit(c);
          return;
        }
        break;
      }
    }
    for (let c = node.firstChild; c; c = c.nextSibling) visit(c);
  };
  visit(tree.topNode);
  return { code: normalize(source, edits, { keepIndent: false }), commentsRemoved, syntaxErrors };
}

export function denoiseWithGrammar(language: Language, source: string, alias: string = language): DenoiseResult {
  if (language === 'sql' || language === 'mysql') return denoiseSql(source, alias);
  if (language === 'html') return denoiseHtml(source);
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
      const found = htmlLikeComments(blankRanges(source, html), tree).filter((r) => !html.some((h) => h.from === r.from));
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
  return { code: normalize(source, edits, { keepIndent: grammar.keepIndent === true }), commentsRemoved, syntaxErrors: errors };
}
