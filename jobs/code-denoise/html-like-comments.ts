/**
 * ECMAScript's HTML-like comments (Annex B.1.1, "HTMLLikeComment"): in a
 * classic script, `<!--` starts a comment to the end of its line wherever
 * code may stand, and `-->` does too at the start of a line (only blanks or
 * one-line block comments before it). Old pages wrapped inline scripts in them to hide the
 * code from browsers without JavaScript; Lezer's JavaScript grammar does not
 * know them (it reads them as operators and reports errors). A module has no
 * HTML-like comments (`x <!--y` is `x < !(--y)` there), so source with
 * top-level import/export is left alone.
 *
 * A marker counts only outside string, template, regex and comment tokens,
 * as the grammar reads the source.
 */
import type { SyntaxNode, Tree } from '@lezer/common';

const OPAQUE = new Set([
  'String',
  'TemplateString',
  'RegExp',
  'LineComment',
  'BlockComment',
  'JSXText',
  'JSXAttributeValue',
]);

function insideOpaque(tree: Tree, pos: number): boolean {
  for (let n: SyntaxNode | null = tree.resolveInner(pos, 1); n; n = n.parent) {
    if (OPAQUE.has(n.name) && n.from < pos + 1 && n.to > pos) return true;
  }
  return false;
}

function isModule(tree: Tree): boolean {
  for (let c = tree.topNode.firstChild; c; c = c.nextSibling)
    if (c.name === 'ImportDeclaration' || c.name === 'ExportDeclaration') return true;
  return false;
}

/** Ranges (marker to end of line) of the HTML-like comments of a classic script; empty for a module. */
export function htmlLikeComments(source: string, tree: Tree): { from: number; to: number }[] {
  if (!source.includes('<!--') && !source.includes('-->')) return [];
  if (isModule(tree)) return [];
  const out: { from: number; to: number }[] = [];
  let lineStart = 0;
  while (lineStart <= source.length) {
    const eol = source.indexOf('\n', lineStart);
    const lineEnd = eol < 0 ? source.length : eol;
    const line = source.slice(lineStart, lineEnd);
    let at = -1;
    // Blanks and one-line block comments may stand before it (SingleLineDelimitedCommentSequence).
    const close = /^(?:[ \t]*\/\*(?:(?!\*\/).)*\*\/)*[ \t]*-->/.exec(line);
    if (close && !insideOpaque(tree, lineStart + close[0].length - 3)) at = lineStart + close[0].length - 3;
    if (at < 0) {
      for (let i = line.indexOf('<!--'); i >= 0; i = line.indexOf('<!--', i + 1)) {
        if (!insideOpaque(tree, lineStart + i)) {
          at = lineStart + i;
          break;
        }
      }
    }
    if (at >= 0) out.push({ from: at, to: lineEnd.valueOf() - (source[lineEnd - 1] === '\r' ? 1 : 0) });
    if (eol < 0) break;
    lineStart = eol + 1;
  }
  return out;
}

/** The source with those ranges blanked (same length, so every offset still holds). */
export function blankRanges(source: string, ranges: readonly { from: number; to: number }[]): string {
  let out = '';
  let at = 0;
  for (const r of ranges) {
    out += source.slice(at, r.from) + ' '.repeat(r.to - r.from);
    at = r.to;
  }
  return out + source.slice(at);
}
