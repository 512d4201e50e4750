/**
 * Rebuilds source text from a tokenizer's verdict: ranges to remove
 * (comments, docstrings), ranges to keep byte for byte (string, template,
 * regex, raw-string, heredoc and color literals, pre blocks) and ranges to
 * replace (an embedded script denoised by its own language). Everything else
 * is code, where redundant whitespace goes:
 *  - runs of blanks inside a line become one space; blanks at line ends go;
 *  - indentation goes, except where it is syntax (`keepIndent`: Python);
 *  - blank lines go, except one after a line that ends in a backslash
 *    continuation (dropping it would join the next line to that one);
 *  - every other newline stays, so languages whose statements end at a line
 *    break (JS/TS ASI, Go's automatic semicolons, shell, Python, C
 *    preprocessor directives) read the same statements;
 *  - a backslash followed by a blank is kept with that blank (an escaped
 *    space in shell, a continuation in C).
 * A removed comment leaves a separator chosen by the caller: nothing (the
 * comment ends at a newline, or is not whitespace, as in HTML), one space
 * (C: a comment is a space), or a newline (JS and Go: a comment that spans
 * lines is a line terminator for ASI / semicolon insertion).
 */

export type Edit =
  | { from: number; to: number; kind: 'remove'; sep: string }
  | { from: number; to: number; kind: 'keep' }
  | { from: number; to: number; kind: 'replace'; text: string };

export interface NormalizeOptions {
  keepIndent: boolean;
}

const BLANK = new Set([' ', '\t', '\f', '\v', '\r', '\u00A0', '\uFEFF']);

export function normalize(source: string, edits: Edit[], options: NormalizeOptions): string {
  // At one position a removal goes first (a docstring is also a string literal), then the longer edit.
  const sorted = [...edits].sort(
    (a, b) => a.from - b.from || Number(b.kind === 'remove') - Number(a.kind === 'remove') || b.to - a.to,
  );
  const lines: string[] = [];
  let line = '';
  let indent = '';
  let hasContent = false;
  let pendingSpace = false;
  /** The current line ends with a code backslash (a continuation if the line ends here). */
  let endsWithBackslash = false;
  let previousContinues = false;
  let endedWithVerbatimNewline = false;

  const startContent = () => {
    if (!hasContent) {
      if (options.keepIndent) line += indent;
      hasContent = true;
    } else if (pendingSpace) line += ' ';
    pendingSpace = false;
    endedWithVerbatimNewline = false;
  };
  const endLine = () => {
    if (hasContent) {
      lines.push(line);
      previousContinues = endsWithBackslash;
    } else if (previousContinues) {
      lines.push('');
      previousContinues = false;
    }
    line = '';
    indent = '';
    hasContent = false;
    pendingSpace = false;
    endsWithBackslash = false;
  };
  const code = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\n') endLine();
      else if (c === '\r' && text[i + 1] === '\n') continue;
      else if (BLANK.has(c)) {
        if (!hasContent) indent += c;
        else pendingSpace = true;
      } else if (c === '\\' && i + 1 < text.length && BLANK.has(text[i + 1]!) && text[i + 1] !== '\r') {
        startContent();
        line += c + text[i + 1];
        endsWithBackslash = false;
        i++;
      } else {
        startContent();
        line += c;
        endsWithBackslash = c === '\\';
      }
    }
  };
  const verbatim = (text: string) => {
    if (text === '') return;
    startContent();
    const parts = text.split('\n');
    line += parts[0];
    for (let i = 1; i < parts.length; i++) {
      lines.push(line);
      previousContinues = false;
      line = parts[i]!;
    }
    endsWithBackslash = false;
    if (parts.length > 1 && line === '') {
      // The literal ended with its newline (a heredoc body): a fresh line starts.
      hasContent = false;
      indent = '';
      endedWithVerbatimNewline = true;
    }
  };

  let at = 0;
  for (const e of sorted) {
    if (e.from < at) continue; // overlapping edits: the first one wins
    code(source.slice(at, e.from));
    if (e.kind === 'remove') code(e.sep);
    else if (e.kind === 'keep') verbatim(source.slice(e.from, e.to));
    else verbatim(e.text);
    at = e.to;
  }
  code(source.slice(at));
  endLine();
  return lines.join('\n') + (endedWithVerbatimNewline ? '\n' : '');
}
