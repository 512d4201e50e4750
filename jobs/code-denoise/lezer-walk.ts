/**
 * Reading a Lezer syntax tree into normalize.ts edits, shared by every
 * grammar-read language: a Grammar names the node types that are comments
 * (removed, unless `keep` says a tool reads them) and literals (kept byte for
 * byte; a template string's ${...} code is read like other code); the parser
 * with the fewest error nodes wins, and error nodes are counted.
 */
import type { SyntaxNode, Tree } from '@lezer/common';
import type { LRParser } from '@lezer/lr';
import type { DenoiseResult } from './denoise-result.js';
import type { Edit } from './normalize.js';

export type { DenoiseResult };

export interface Grammar {
  /** Parsers to try in order; the first with no error node wins, else the one with the fewest. */
  parsers: LRParser[];
  comments: ReadonlySet<string>;
  /** Tokens kept byte for byte. */
  literals: ReadonlySet<string>;
  /** What a removed block comment leaves: a newline when it spanned lines (JS, Go), else a space; `''` for HTML. */
  blockSeparator: (comment: string, before: string, after: string) => string;
  /**
   * Comments that are not noise (directives a compiler or tool reads). `memo`: verdicts by comment start, one map per
   * read of a source, for a verdict that holds for a whole run of comments (worked out once, not once per comment).
   */
  keep?: (comment: string, node: SyntaxNode, source: string, memo: Map<number, boolean>) => boolean;
  keepIndent?: boolean;
  /** Reads a node itself (pushing its edits) and returns the comments it removed, or undefined to let the walk read it. */
  special?: (node: SyntaxNode, source: string, edits: Edit[]) => number | undefined;
}

export const set = (...names: string[]) => new Set(names);
export const cSpace = () => ' ';
export const lineSensitive = (comment: string) => (comment.includes('\n') ? '\n' : ' ');

export function countErrors(tree: Tree): number {
  let errors = 0;
  tree.iterate({
    enter: (n) => {
      if (n.type.isError) errors++;
    },
  });
  return errors;
}

export function bestTree(parsers: LRParser[], source: string): { tree: Tree; errors: number } {
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
export function collect(grammar: Grammar, tree: Tree, source: string, edits: Edit[]): number {
  let removed = 0;
  const keepMemo = new Map<number, boolean>();
  const visit = (node: SyntaxNode): void => {
    const name = node.name;
    const handled = grammar.special?.(node, source, edits);
    if (handled !== undefined) {
      removed += handled;
      return;
    }
    if (grammar.comments.has(name)) {
      const text = source.slice(node.from, node.to);
      if (grammar.keep?.(text, node, source, keepMemo)) {
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
