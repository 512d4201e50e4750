/**
 * Size of the chunks `pending` messages are cut into, at most `max` each and
 * as equal as possible: 46,000 with a maximum of 40,000 make 2 x 23,000, not
 * 40,000 and a 6,000 tail (a chunk costs one store insert per table whatever
 * its size). Both bus adapters cut what they hold with it.
 */
export function equalChunkSize(pending: number, max: number): number {
  if (pending <= max) return pending;
  return Math.ceil(pending / Math.ceil(pending / max));
}
