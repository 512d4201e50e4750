/**
 * Cutting texts that travel in payment headers (the challenge's description,
 * the Bazaar declaration's examples and schema descriptions). The cut ends in
 * three ASCII dots, not the one-character ellipsis: a payer echoes the
 * declaration back in every PAYMENT-SIGNATURE, and one character above
 * U+007F makes the whole decoded 2.5 KB payload a two-byte string, which
 * costs the gate about 4 µs more to decode and parse on every paid request.
 */
export const CUT_MARK = '...';

/** `text` when it fits in `max` characters, else its start and the cut mark, `max` characters in all. */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - CUT_MARK.length))}${CUT_MARK}`;
}
