/**
 * JSON with comments, read by jsonc-parser's scanner (the one VS Code uses):
 * comments go, and so does all whitespace between tokens (JSON gives it no
 * meaning), so the output is minified JSON; string tokens are copied byte
 * for byte. Syntax errors are counted with jsonc-parser's own parser
 * (trailing commas allowed, as JSONC files use them), up to MAX_PARSED_DEPTH.
 */
import { createScanner, parse, type ParseError } from 'jsonc-parser';
import type { DenoiseResult } from './denoise-result.js';

// jsonc-parser's SyntaxKind values (a const enum, which isolated modules cannot import).
const LINE_COMMENT = 12;
const BLOCK_COMMENT = 13;
const LINE_BREAK = 14;
const TRIVIA = 15;
const EOF = 17;
const OPEN_BRACE = 1;
const CLOSE_BRACE = 2;
const OPEN_BRACKET = 3;
const CLOSE_BRACKET = 4;

/**
 * The deepest nesting jsonc-parser's parser is given. It recurses once per level: `[[[[…` a few thousand deep
 * overflows the stack (a RangeError, so the job would crash and be retried, for free). Deeper documents (no real
 * one is) get their error count from the scan: token errors plus the brackets left open or closed unopened.
 */
const MAX_PARSED_DEPTH = 512;
/** Tokens that would fuse with a neighbour of the same sort: keywords, numbers, unknown words. */
const WORDISH = new Set([7, 8, 9, 11, 16]);

export function denoiseJsonc(source: string): DenoiseResult {
  const scanner = createScanner(source, false);
  const out: string[] = [];
  let commentsRemoved = 0;
  let scanErrors = 0;
  let gap = false;
  let previous = -1;
  let depth = 0;
  let deepest = 0;
  let unbalanced = 0;
  for (let kind = scanner.scan(); kind !== EOF; kind = scanner.scan()) {
    if (scanner.getTokenError() !== 0) scanErrors++;
    if (kind === OPEN_BRACE || kind === OPEN_BRACKET) deepest = Math.max(deepest, ++depth);
    else if (kind === CLOSE_BRACE || kind === CLOSE_BRACKET) {
      if (depth > 0) depth--;
      else unbalanced++;
    }
    if (kind === LINE_COMMENT || kind === BLOCK_COMMENT) {
      commentsRemoved++;
      gap = true;
      continue;
    }
    if (kind === LINE_BREAK || kind === TRIVIA) {
      gap = true;
      continue;
    }
    if (gap && WORDISH.has(kind) && WORDISH.has(previous)) out.push(' ');
    out.push(source.slice(scanner.getTokenOffset(), scanner.getTokenOffset() + scanner.getTokenLength()));
    previous = kind;
    gap = false;
  }
  const code = out.join('');
  if (deepest > MAX_PARSED_DEPTH) return { code, commentsRemoved, syntaxErrors: scanErrors + unbalanced + depth };
  const errors: ParseError[] = [];
  parse(source, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  return { code, commentsRemoved, syntaxErrors: Math.max(errors.length, scanErrors) };
}
