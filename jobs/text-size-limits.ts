/** The size limits of text inputs shared by the job SKUs' schemas (the spec's 200,000-character texts). */

/** Characters of one text input (airgap-scrub, summarize, the embeddings); HTML takes five times this. */
export const MAX_TEXT = 200_000;

/**
 * Characters of code (code-denoise). Half a text, because a parser costs far more per character than a text scan:
 * Lezer reads real code at 1-2 µs a character (100,000 characters of JavaScript, TypeScript or C in 75-200 ms on a
 * loaded 2-core machine: the SKU's 200 ms latency target), and code made of one-character tokens (`!!!!…`, `a=a=…`)
 * at up to 30 µs, so 100,000 characters stay inside the 10 s deadline whatever they hold. It was 1,000,000, where
 * an honest file missed the target tenfold and a hostile one ran 20-60 s.
 */
export const MAX_CODE = MAX_TEXT / 2;
