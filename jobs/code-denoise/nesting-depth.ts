/**
 * The nesting depth of code, bounded before it is parsed (issue 23: inputs that cannot be weaponized).
 *
 * Lezer's parsers are linear in the input for code of bounded depth, but not in the depth itself: one nest of
 * 40,000 brackets costs 2.5× the time of 20,000, a million unclosed `[{(` ran a pool thread out of memory, and
 * `A<A<A<…` generics or `a<a<…` templates grow the same way. Real code is shallow (minified bundles nest tens of
 * levels), so a depth past MAX_CODE_DEPTH is refused before the parse (and before any payment: the input schema
 * runs this check), with the offset where the limit was crossed.
 *
 * The count is lexical and language-blind, one pass of O(1) per character, so it cannot be made expensive itself.
 * Brackets `(`, `[`, `{` open and any closer closes (floored at zero: closers cannot be banked as credit against a
 * later nest). Quoted strings are skipped (`"…"` and `'…'` to their closing quote or the end of the line, `` `…` ``
 * to its closing backtick), so the bracket tables of generated code (Lezer's own parsers hold 80 KB of them) do
 * not count. A quote the parser does not read as one (an apostrophe in a comment) can hide brackets from this
 * count, so the brackets are also counted raw, strings included, against RAW_DEPTH_FACTOR times the limit: a
 * hidden nest is still bounded, and real code never leaks that many unmatched brackets from its strings. Angle
 * brackets count only in the languages with generics or templates (TypeScript, Java, C++, Rust): a `<` right after
 * a name (spaces allowed), not part of `<<` or `<=`, opens; `>` closes; and `;`, `{` or `}` end every open angle,
 * since type arguments never span a statement or a block, so comparisons (`i < n`) do not accumulate.
 */
/** Open brackets (or angle brackets) at most, outside strings. */
export const MAX_CODE_DEPTH = 1024;

/** Brackets counted with the strings' own, at most this many times MAX_CODE_DEPTH. */
export const RAW_DEPTH_FACTOR = 8;

const ANGLE_LANGUAGES: ReadonlySet<string> = new Set(['typescript', 'java', 'cpp', 'rust']);

const LT = 0x3c;
const GT = 0x3e;
const EQ = 0x3d;
const NEWLINE = 0x0a;
const BACKSLASH = 0x5c;
const BACKTICK = 0x60;

const isOpen = (c: number) => c === 0x28 || c === 0x5b || c === 0x7b; // ( [ {
const isClose = (c: number) => c === 0x29 || c === 0x5d || c === 0x7d; // ) ] }
const isQuote = (c: number) => c === 0x22 || c === 0x27 || c === BACKTICK; // " ' `

/** A letter, digit, `_` or `$`, or any non-ASCII character (identifiers may hold them). */
function isNameChar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    c === 0x5f ||
    c === 0x24 ||
    c > 0x7f
  );
}

const isBlank = (c: number) => c === 0x20 || c === 0x09 || c === NEWLINE || c === 0x0d;

export interface DepthExcess {
  /** The offset of the character that crossed the limit. */
  at: number;
  kind: 'brackets' | 'angle brackets';
}

/** The first place `code` nests past MAX_CODE_DEPTH, or undefined when it stays within. */
export function depthExcess(code: string, language: string, max: number = MAX_CODE_DEPTH): DepthExcess | undefined {
  const angles = ANGLE_LANGUAGES.has(language);
  const rawMax = max * RAW_DEPTH_FACTOR;
  let depth = 0;
  let raw = 0;
  let angle = 0;
  let quote = 0; // the open string's quote character, 0 outside strings
  let lastNonBlank = -1; // the last non-blank character outside strings
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (isOpen(c)) {
      if (++raw > rawMax) return { at: i, kind: 'brackets' };
    } else if (isClose(c) && raw > 0) raw--;
    if (quote) {
      if (c === BACKSLASH) i++;
      else if (c === quote || (c === NEWLINE && quote !== BACKTICK)) quote = 0;
      continue;
    }
    if (isQuote(c)) {
      quote = c;
    } else if (isOpen(c)) {
      if (++depth > max) return { at: i, kind: 'brackets' };
      if (c === 0x7b) angle = 0;
    } else if (isClose(c)) {
      if (depth > 0) depth--;
      if (c === 0x7d) angle = 0;
    } else if (angles) {
      if (c === LT) {
        const next = code.charCodeAt(i + 1);
        const prev = i > 0 ? code.charCodeAt(i - 1) : -1;
        if (next !== LT && next !== EQ && prev !== LT && isNameChar(lastNonBlank) && ++angle > max) {
          return { at: i, kind: 'angle brackets' };
        }
      } else if (c === GT) {
        if (angle > 0) angle--;
      } else if (c === 0x3b) {
        angle = 0;
      }
    }
    if (!isBlank(c)) lastNonBlank = c;
  }
  return undefined;
}

/** The refusal's words, shared by the input schema and the processor. */
export function depthMessage(excess: DepthExcess, max: number = MAX_CODE_DEPTH): string {
  return `code nests ${excess.kind} deeper than ${max} levels (crossed at character ${excess.at}); real code stays far below this`;
}
