/** What code-denoise returns for a source: the grammar tokenizers (lezer.ts) and the JSONC one (jsonc.ts) both produce it. */
export interface DenoiseResult {
  code: string;
  commentsRemoved: number;
  syntaxErrors: number;
}
