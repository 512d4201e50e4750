/** The size limits of text inputs shared by the job SKUs' schemas (the spec's 200,000-character texts). */

/** Characters of one text input (airgap-scrub, summarize, the embeddings); HTML and code take five times this. */
export const MAX_TEXT = 200_000;
