/**
 * Shell (POSIX sh, bash, zsh): a character-level lexer written here. No
 * installed library tokenizes shell while keeping positions exactly: the
 * available parser (sh-syntax, mvdan/sh in WASM) reprints the program and
 * rewrites quoting on the way (`[[ -n "$x" ]]` comes back as `[[ -n $x ]]`)
 * and refuses incomplete snippets, so it is not used to produce the output.
 *
 * What the lexer knows, because it decides where a comment may start and
 * what must stay byte for byte:
 *  - `#` starts a comment only at the start of a word (after a blank, a
 *    newline or an operator character `;&|()<>`): not in `a#b`, `$#`,
 *    `${#v}`, `$((16#ff))`, `http://x/#y`;
 *  - quoting: '…', "…" (with nested $(…), ${…}, `…` inside), $'…', $"…",
 *    backticks, ${…} and $((…)), and backslash escapes, are kept verbatim;
 *  - here-documents (`<<EOF`, `<<-EOF`, quoted delimiters, several per line)
 *    are kept verbatim from the line after the operator to the delimiter;
 *  - a leading `#!` line is kept.
 * Unterminated constructs are counted as syntax errors and kept to the end.
 */
import type { Edit } from './normalize.js';

const OPERATOR_CHARS = new Set([';', '&', '|', '(', ')', '<', '>']);
const BLANKS = new Set([' ', '\t']);

export function shellEdits(src: string): { edits: Edit[]; commentsRemoved: number; syntaxErrors: number } {
  const n = src.length;
  const edits: Edit[] = [];
  let commentsRemoved = 0;
  let syntaxErrors = 0;
  const keep = (from: number, to: number) => {
    if (to > from) edits.push({ from, to, kind: 'keep' });
  };
  const unterminated = () => {
    syntaxErrors++;
    return n;
  };

  /** After the closing quote of '…' (j: just after the opening one). */
  const single = (j: number): number => {
    const end = src.indexOf("'", j);
    return end < 0 ? unterminated() : end + 1;
  };
  /** After the closing quote of $'…' (backslash escapes). */
  const ansiC = (j: number): number => {
    for (let k = j; k < n; k++) {
      if (src[k] === '\\') k++;
      else if (src[k] === "'") return k + 1;
    }
    return unterminated();
  };
  const backtick = (j: number): number => {
    for (let k = j; k < n; k++) {
      if (src[k] === '\\') k++;
      else if (src[k] === '`') return k + 1;
    }
    return unterminated();
  };
  /** After the closing quote of "…" (j: just after the opening one). */
  const double = (j: number): number => {
    let k = j;
    while (k < n) {
      const c = src[k]!;
      if (c === '\\') k += 2;
      else if (c === '"') return k + 1;
      else if (c === '`') k = backtick(k + 1);
      else if (c === '$') k = dollar(k);
      else k++;
    }
    return unterminated();
  };
  /** Code up to the `close` that balances it (inside $(…) and ${…}), with quotes and comments skipped. */
  const balanced = (j: number, open: string, close: string): number => {
    let depth = 0;
    let wordStart = true;
    let k = j;
    while (k < n) {
      const c = src[k]!;
      if (c === close && depth === 0) return k + 1;
      if (c === open) depth++;
      else if (c === close) depth--;
      if (c === '\\') {
        k += 2;
        wordStart = false;
      } else if (c === "'") {
        k = single(k + 1);
        wordStart = false;
      } else if (c === '"') {
        k = double(k + 1);
        wordStart = false;
      } else if (c === '`') {
        k = backtick(k + 1);
        wordStart = false;
      } else if (c === '$') {
        k = dollar(k);
        wordStart = false;
      } else if (c === '#' && wordStart && close === ')') {
        const eol = src.indexOf('\n', k);
        k = eol < 0 ? n : eol;
      } else {
        wordStart = BLANKS.has(c) || c === '\n' || OPERATOR_CHARS.has(c);
        k++;
      }
    }
    return unterminated();
  };
  /** After a `$…` expansion starting at k (k points at `$`). */
  const dollar = (k: number): number => {
    const next = src[k + 1];
    if (next === "'") return ansiC(k + 2);
    if (next === '"') return double(k + 2);
    if (next === '{') return balanced(k + 2, '{', '}');
    if (next === '(' && src[k + 2] === '(') return arithmetic(k + 3);
    if (next === '(') return balanced(k + 2, '(', ')');
    if (next === '[') return balanced(k + 2, '[', ']');
    if (next !== undefined && /[#?$!@*0-9-]/.test(next)) return k + 2;
    return k + 1;
  };
  /** After the `))` closing $(( … )) (j: just inside). */
  const arithmetic = (j: number): number => {
    let depth = 0;
    for (let k = j; k < n; k++) {
      const c = src[k];
      if (c === '(') depth++;
      else if (c === ')') {
        if (depth === 0 && src[k + 1] === ')') return k + 2;
        depth--;
      }
    }
    return unterminated();
  };

  const heredocs: { delimiter: string; stripTabs: boolean }[] = [];
  /** Bodies of the pending here-documents, from `start` (the line after their operator); returns where code resumes. */
  const bodies = (start: number): number => {
    let k = start;
    for (const { delimiter, stripTabs } of heredocs.splice(0)) {
      const from = k;
      for (;;) {
        if (k >= n) {
          keep(from, n);
          return unterminated();
        }
        const eol = src.indexOf('\n', k);
        const lineEnd = eol < 0 ? n : eol;
        let line = src.slice(k, lineEnd).replace(/\r$/, '');
        if (stripTabs) line = line.replace(/^\t+/, '');
        k = eol < 0 ? n : eol + 1;
        if (line === delimiter) break;
      }
      keep(from, k);
    }
    return k;
  };

  let i = 0;
  if (src.startsWith('#!')) {
    const eol = src.indexOf('\n');
    i = eol < 0 ? n : eol;
    keep(0, i);
  }
  let wordStart = true;
  while (i < n) {
    const c = src[i]!;
    if (c === '\n') {
      i++;
      if (heredocs.length) i = bodies(i);
      wordStart = true;
      continue;
    }
    if (BLANKS.has(c) || c === '\r') {
      wordStart = true;
      i++;
      continue;
    }
    if (c === '#' && wordStart) {
      const eol = src.indexOf('\n', i);
      const to = eol < 0 ? n : eol;
      edits.push({ from: i, to, kind: 'remove', sep: '' });
      commentsRemoved++;
      i = to;
      continue;
    }
    const start = i;
    if (c === '\\') {
      // A line continuation is code (the normalizer keeps it); any other escape is kept with its character.
      if (src[i + 1] === '\n') i += 2;
      else {
        i = Math.min(n, i + 2);
        keep(start, i);
      }
    } else if (c === "'") keep(start, (i = single(i + 1)));
    else if (c === '"') keep(start, (i = double(i + 1)));
    else if (c === '`') keep(start, (i = backtick(i + 1)));
    else if (c === '$') {
      const next = src[i + 1];
      if (next === '(' && src[i + 2] !== '(') {
        // Command substitution: its inside is code, read by this same loop.
        i += 2;
        wordStart = true;
        continue;
      }
      i = dollar(i);
      if (i - start > 1) keep(start, i);
    } else if (c === '<' && src[i + 1] === '<' && src[i + 2] !== '<') {
      let k = i + 2;
      const stripTabs = src[k] === '-';
      if (stripTabs) k++;
      while (BLANKS.has(src[k] ?? '')) k++;
      let delimiter = '';
      while (k < n && !/[\s;&|<>()]/.test(src[k]!)) {
        const ch = src[k]!;
        if (ch === "'" || ch === '"') {
          const end = src.indexOf(ch, k + 1);
          if (end < 0) break;
          delimiter += src.slice(k + 1, end);
          k = end + 1;
        } else if (ch === '\\') {
          delimiter += src[k + 1] ?? '';
          k += 2;
        } else {
          delimiter += ch;
          k++;
        }
      }
      if (delimiter) {
        heredocs.push({ delimiter, stripTabs });
        keep(start, k);
        i = k;
      } else i += 2;
    } else {
      i++;
      wordStart = OPERATOR_CHARS.has(c);
      continue;
    }
    wordStart = false;
  }
  if (heredocs.length) syntaxErrors += heredocs.length;
  return { edits, commentsRemoved, syntaxErrors };
}
